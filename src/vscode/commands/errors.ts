// One way to tell a person an edit was refused: the core's messages already name the file, the
// field or the lock holder; anything unexpected also goes to the extension log with its stack.
// Errors are told apart by name: the classes live in modules loaded on first use (coreLoader.ts).
import * as vscode from 'vscode';
import type { Logger } from '../../core/logger';

/** The core's errors that carry a message for a person (RunConfigError is an InputError). */
const EXPECTED = new Set(['InputError', 'TaskFileError', 'TaskFileMissingError', 'LockHeldError', 'LogFilterError']);

export function isExpectedError(err: unknown): err is Error {
  return err instanceof Error && EXPECTED.has(err.name);
}

export function reportEditError(action: string, err: unknown, logger?: Logger): void {
  const message = err instanceof Error ? err.message : String(err);
  if (!isExpectedError(err)) logger?.error(err instanceof Error ? err : message);
  void vscode.window.showErrorMessage(`Launchpad: ${action}: ${message}`);
}
