// The `launchpad-log:` documents: one FilteredLog per open document, kept while the document is
// open and dropped when it closes. Appends to the log (a file watcher, and a slow poll as a
// safety net for watchers that miss events) read only the new bytes and refresh the documents
// whose filter they match. An editor scrolled to the end stays at the end, like `tail -f`.
//
// Refreshing: a small document is refreshed the ordinary way (onDidChange; VS Code asks for the
// text and applies the difference). Past VS Code's diff limit (100,000 characters) that would
// replace the whole text on every append, so a large view is edited instead: the new lines are
// inserted at the end, lines past the view's size dropped from the head, the note rewritten —
// the cost of an append is then the appended lines, not the view. If an edit is refused, the
// ordinary refresh is the fallback.
import { basename, dirname } from 'node:path';

import * as vscode from 'vscode';

import { LogFilterError, parseLogFilter } from '../../core/log/logFilterSpec';
import { FilteredLog, type ViewState } from './filteredLog';
import { cliCommand, describeFilter, FILTER_SCHEME, parseFilterUri } from './filterUri';

const POLL_MS = 1_000;
const COALESCE_MS = 50;
/** VS Code diffs a provider's new text against the document only below this size. */
const DIFF_LIMIT = 100_000;

interface View {
  log: FilteredLog;
  /** What the document holds, when known (unknown from a refresh until VS Code asks for the text). */
  shown: ViewState | undefined;
  updating: boolean;
  again: boolean;
}

export class FilteredLogDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly views = new Map<string, View>();
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;
  private readonly watchers = new Map<string, vscode.Disposable>();
  private readonly disposables: vscode.Disposable[] = [this.emitter];
  /** Editors that were showing the last line when their document changed. */
  private readonly following = new Map<string, vscode.TextEditor[]>();
  private pollTimer: NodeJS.Timeout | undefined;
  private coalesce: NodeJS.Timeout | undefined;

  constructor() {
    this.disposables.push(
      vscode.workspace.onDidCloseTextDocument((doc) => this.closed(doc)),
      // A document reopened without a read (its language changed by hand) gets its log back.
      vscode.workspace.onDidOpenTextDocument((doc) => {
        if (doc.uri.scheme === FILTER_SCHEME && !this.views.has(doc.uri.toString())) this.refresh(doc.uri);
      }),
      vscode.workspace.onDidChangeTextDocument((e) => this.keepFollowing(e.document)),
    );
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const view = this.views.get(uri.toString()) ?? this.open(uri);
    if (typeof view === 'string') return view;
    view.shown = view.log.state();
    return view.log.text(view.shown);
  }

  /** The number of views being kept, for tests and diagnostics. */
  get openViews(): number {
    return this.views.size;
  }

  /** Reads what was appended to the log(s) and refreshes the views that gained lines. */
  pollNow(): void {
    for (const [key, view] of this.views) {
      const read = view.log.poll();
      if (read === 'restarted') this.refreshWhole(key);
      else if (read) this.scheduleUpdate(key);
    }
  }

  dispose(): void {
    clearInterval(this.pollTimer);
    clearTimeout(this.coalesce);
    for (const w of this.watchers.values()) w.dispose();
    for (const d of this.disposables) d.dispose();
    this.views.clear();
  }

  /** A new view: its filter checked, the log read once. A bad filter is shown as the text. */
  private open(uri: vscode.Uri): View | string {
    const { file, values } = parseFilterUri(uri);
    let filter;
    try {
      filter = parseLogFilter(values);
    } catch (err) {
      if (err instanceof LogFilterError) return `# Not a usable filter: ${err.reason}\n`;
      throw err;
    }
    if (!file) return "# No progress log named in this document's address.\n";
    const view: View = {
      log: new FilteredLog(file, filter, { filter: describeFilter(values), command: cliCommand(values) }),
      shown: undefined,
      updating: false,
      again: false,
    };
    this.views.set(uri.toString(), view);
    this.watch(file);
    return view;
  }

  private refresh(uri: vscode.Uri): void {
    this.open(uri);
    this.refreshWhole(uri.toString());
  }

  /** The ordinary refresh: VS Code asks for the whole text again. */
  private refreshWhole(key: string): void {
    const view = this.views.get(key);
    if (view) view.shown = undefined;
    this.noteFollowers(key);
    this.emitter.fire(vscode.Uri.parse(key));
  }

  /** One update at a time per view; appends meanwhile are taken by the next one. */
  private scheduleUpdate(key: string): void {
    const view = this.views.get(key);
    if (!view) return;
    if (view.updating) {
      view.again = true;
      return;
    }
    view.updating = true;
    void this.update(key, view)
      .catch(() => this.refreshWhole(key))
      .finally(() => {
        view.updating = false;
        if (view.again) {
          view.again = false;
          this.scheduleUpdate(key);
        }
      });
  }

  private async update(key: string, view: View): Promise<void> {
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
    const prev = view.shown;
    const next = view.log.state();
    const edit = doc && prev ? appendEdit(doc, prev, next, view.log) : undefined;
    if (!doc || !edit) return this.refreshWhole(key);
    this.noteFollowers(key);
    if (!(await vscode.workspace.applyEdit(edit)) || doc.lineCount !== lineCount(next)) return this.refreshWhole(key);
    view.shown = next;
  }

  private noteFollowers(key: string): void {
    const atEnd = vscode.window.visibleTextEditors.filter((e) => e.document.uri.toString() === key && showsLastLine(e));
    if (atEnd.length) this.following.set(key, atEnd);
  }

  private keepFollowing(doc: vscode.TextDocument): void {
    const editors = this.following.get(doc.uri.toString());
    if (!editors) return;
    this.following.delete(doc.uri.toString());
    const end = new vscode.Position(Math.max(doc.lineCount - 1, 0), 0);
    for (const e of editors) e.revealRange(new vscode.Range(end, end), vscode.TextEditorRevealType.Default);
  }

  private closed(doc: vscode.TextDocument): void {
    if (doc.uri.scheme !== FILTER_SCHEME) return;
    const view = this.views.get(doc.uri.toString());
    if (!view) return;
    this.views.delete(doc.uri.toString());
    this.following.delete(doc.uri.toString());
    const file = view.log.file;
    if (![...this.views.values()].some((v) => v.log.file === file)) {
      this.watchers.get(file)?.dispose();
      this.watchers.delete(file);
    }
    if (this.views.size === 0) {
      clearInterval(this.pollTimer);
      this.pollTimer = undefined;
    }
  }

  /** The log's folder is watched by name: the file may not exist yet, or be replaced. */
  private watch(file: string): void {
    if (!this.watchers.has(file)) {
      const w = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(dirname(file)), basename(file)));
      const poke = () => this.schedulePoll();
      this.watchers.set(file, vscode.Disposable.from(w, w.onDidChange(poke), w.onDidCreate(poke)));
    }
    this.pollTimer ??= setInterval(() => this.pollNow(), POLL_MS);
  }

  /** One read for a burst of change events. */
  private schedulePoll(): void {
    this.coalesce ??= setTimeout(() => {
      this.coalesce = undefined;
      this.pollNow();
    }, COALESCE_MS);
  }
}

/**
 * The edit taking a large document from `prev` to `next` (same view, lines only added), or
 * undefined when the ordinary refresh is the better way: a small document, a document not as
 * `prev` describes it, or a view whose lines were all replaced.
 */
function appendEdit(doc: vscode.TextDocument, prev: ViewState, next: ViewState, log: FilteredLog): vscode.WorkspaceEdit | undefined {
  const lastLine = doc.lineCount - 1;
  if (doc.offsetAt(new vscode.Position(lastLine, 0)) <= DIFF_LIMIT) return undefined;
  if (doc.lineCount !== lineCount(prev) || next.first < prev.first || next.end < prev.end || next.first >= prev.end) return undefined;
  const from = prev.end;
  if (!log.keeps(from)) return undefined;
  const edit = new vscode.WorkspaceEdit();
  // The head: the note line and the lines that no longer fit, as one replacement.
  const noteLines = prev.note !== undefined ? 1 : 0;
  const dropped = next.first - prev.first;
  if (dropped > 0 || prev.note !== next.note) {
    edit.replace(doc.uri, new vscode.Range(0, 0, noteLines + dropped, 0), next.note !== undefined ? `${next.note}\n` : '');
  }
  const added = log.slice(from, next.end);
  if (added.length) edit.insert(doc.uri, new vscode.Position(lastLine, 0), `${added.join('\n')}\n`);
  return edit;
}

/** Lines of a document holding `state` (its text ends with a newline: one more, empty line). */
function lineCount(state: ViewState): number {
  return (state.note !== undefined ? 1 : 0) + (state.end - state.first) + 1;
}

function showsLastLine(editor: vscode.TextEditor): boolean {
  const last = editor.visibleRanges.at(-1);
  return !!last && last.end.line >= editor.document.lineCount - 2;
}
