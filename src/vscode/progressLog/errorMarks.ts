// ERROR lines of a progress log get a mark in the overview ruler (WARN and ROLLBACK a warning
// one), so a long log shows where things went wrong. Appends rescan only the new lines. Past
// MAX_MARKS marks the ruler would be solid colour (a view of errors only): none are drawn.
import * as vscode from 'vscode';

import { parseLogLine } from '../../core/log/logLine';
import { LOG_LANGUAGE_ID } from '../contributions';

const MAX_MARK_LINES = 200_000;
const MAX_MARKS = 10_000;
const DEBOUNCE_MS = 100;

type Kind = 'error' | 'warning';

interface Marks {
  /** Lines 0 … scanned-1 are classified. */
  scanned: number;
  lines: Map<number, Kind>;
}

export class ErrorMarks implements vscode.Disposable {
  private readonly types: Record<Kind, vscode.TextEditorDecorationType> = {
    error: vscode.window.createTextEditorDecorationType({
      overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.errorForeground'),
      overviewRulerLane: vscode.OverviewRulerLane.Right,
    }),
    warning: vscode.window.createTextEditorDecorationType({
      overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.warningForeground'),
      overviewRulerLane: vscode.OverviewRulerLane.Right,
    }),
  };
  private readonly marks = new Map<string, Marks>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly disposables: vscode.Disposable[];

  constructor() {
    this.disposables = [
      vscode.window.onDidChangeVisibleTextEditors((editors) => editors.forEach((e) => this.paint(e.document))),
      vscode.workspace.onDidChangeTextDocument((e) => this.changed(e)),
      vscode.workspace.onDidCloseTextDocument((doc) => this.marks.delete(doc.uri.toString())),
    ];
    vscode.window.visibleTextEditors.forEach((e) => this.paint(e.document));
  }

  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    for (const d of this.disposables) d.dispose();
    Object.values(this.types).forEach((t) => t.dispose());
  }

  private changed(e: vscode.TextDocumentChangeEvent): void {
    if (e.document.languageId !== LOG_LANGUAGE_ID || e.contentChanges.length === 0) return;
    const key = e.document.uri.toString();
    const marks = this.marks.get(key);
    if (marks) {
      // An append touches only the last line(s): rescan from there. Anything else: all.
      const first = Math.min(...e.contentChanges.map((c) => c.range.start.line));
      marks.scanned = first >= marks.scanned - 1 ? Math.min(marks.scanned, first) : 0;
      for (const line of marks.lines.keys()) if (line >= marks.scanned) marks.lines.delete(line);
    }
    clearTimeout(this.timers.get(key));
    this.timers.set(
      key,
      setTimeout(() => {
        this.timers.delete(key);
        this.paint(e.document);
      }, DEBOUNCE_MS),
    );
  }

  private paint(doc: vscode.TextDocument): void {
    if (doc.languageId !== LOG_LANGUAGE_ID) return;
    const editors = vscode.window.visibleTextEditors.filter((e) => e.document === doc);
    if (!editors.length) return;
    const marks = this.scan(doc);
    const ranges: Record<Kind, vscode.Range[]> = { error: [], warning: [] };
    if (marks.lines.size <= MAX_MARKS) for (const [line, kind] of marks.lines) ranges[kind].push(new vscode.Range(line, 0, line, 0));
    for (const e of editors) for (const kind of ['error', 'warning'] as const) e.setDecorations(this.types[kind], ranges[kind]);
  }

  private scan(doc: vscode.TextDocument): Marks {
    const key = doc.uri.toString();
    let marks = this.marks.get(key);
    if (!marks || marks.scanned > doc.lineCount) marks = { scanned: 0, lines: new Map() };
    const end = Math.min(doc.lineCount, MAX_MARK_LINES);
    for (let line = marks.scanned; line < end; line++) {
      const kind = kindOf(doc.lineAt(line).text);
      if (kind) marks.lines.set(line, kind);
    }
    marks.scanned = end;
    this.marks.set(key, marks);
    return marks;
  }
}

function kindOf(text: string): Kind | undefined {
  // Most lines are neither: skip the parse for them.
  if (!text.includes('] ERROR') && !text.includes('] WARN') && !text.includes('] ROLLBACK')) return undefined;
  const type = parseLogLine(text)?.type;
  return type === 'ERROR' ? 'error' : type === 'WARN' || type === 'ROLLBACK' ? 'warning' : undefined;
}
