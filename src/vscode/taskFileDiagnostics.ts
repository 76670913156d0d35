// A field of harness-tasks.json that Launchpad does not read ("depend_on" for "depends_on") is a
// warning on its key in the editor, with the same words and the same "did you mean" as the CLI's
// (core/taskFile/unknownFields.ts). The open document's text is checked, saved or not.
import * as path from 'node:path';

import * as vscode from 'vscode';

import { TASKS_FILE } from '../core/statePaths';
import { loadCore } from './coreLoader';

const DEBOUNCE_MS = 300;

export function registerTaskFileDiagnostics(): vscode.Disposable {
  const diagnostics = vscode.languages.createDiagnosticCollection('launchpad');
  const timers = new Map<string, NodeJS.Timeout>();
  const isTaskFile = (doc: vscode.TextDocument) => doc.uri.scheme === 'file' && path.basename(doc.uri.fsPath) === TASKS_FILE;

  const check = async (doc: vscode.TextDocument) => {
    const version = doc.version;
    const text = doc.getText();
    const core = await loadCore();
    if (doc.isClosed || doc.version !== version) return;
    diagnostics.set(
      doc.uri,
      core.unknownFieldsInText(text).map((u) => {
        const range = new vscode.Range(doc.positionAt(u.start), doc.positionAt(u.end));
        const d = new vscode.Diagnostic(range, core.unknownFieldMessage(u), vscode.DiagnosticSeverity.Warning);
        d.source = 'Launchpad';
        return d;
      }),
    );
  };
  const schedule = (doc: vscode.TextDocument, delay = DEBOUNCE_MS) => {
    if (!isTaskFile(doc)) return;
    const key = doc.uri.toString();
    clearTimeout(timers.get(key));
    timers.set(
      key,
      setTimeout(() => {
        timers.delete(key);
        void check(doc);
      }, delay),
    );
  };

  vscode.workspace.textDocuments.forEach((doc) => schedule(doc, 0));
  return vscode.Disposable.from(
    diagnostics,
    vscode.workspace.onDidOpenTextDocument((doc) => schedule(doc, 0)),
    vscode.workspace.onDidChangeTextDocument((e) => schedule(e.document)),
    vscode.workspace.onDidCloseTextDocument((doc) => {
      clearTimeout(timers.get(doc.uri.toString()));
      diagnostics.delete(doc.uri);
    }),
    { dispose: () => timers.forEach((t) => clearTimeout(t)) },
  );
}
