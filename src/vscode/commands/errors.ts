// One way to tell a person an edit was refused: the core's messages already name the file, the
// field or the lock holder; anything unexpected also goes to the extension log with its stack.
import * as vscode from 'vscode';
import { LockHeldError } from '../../core/lock';
import type { Logger } from '../../core/logger';
import { TaskFileMissingError } from '../../core/stateStore';
import { TaskFileError } from '../../core/taskFile';
import { InputError } from '../../core/taskOps';

export function reportEditError(action: string, err: unknown, logger?: Logger): void {
  const expected = err instanceof InputError || err instanceof TaskFileError || err instanceof LockHeldError || err instanceof TaskFileMissingError;
  const message = err instanceof Error ? err.message : String(err);
  if (!expected) logger?.error(err instanceof Error ? err : message);
  void vscode.window.showErrorMessage(`Launchpad: ${action}: ${message}`);
}
