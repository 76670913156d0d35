// One way to tell a person an edit was refused: the core's messages already name the file, the
// field or the lock holder; anything unexpected also goes to the extension log with its stack.
// Which errors those are is the core's one rule (core/expectedErrors.ts, a brand that module can
// check without loading the error classes, which load on first use: coreLoader.ts).
import * as vscode from 'vscode';

import { isExpectedError } from '../../core/expectedErrors';
import type { Logger } from '../../core/logger';

export function reportEditError(action: string, err: unknown, logger?: Logger): void {
  const message = err instanceof Error ? err.message : String(err);
  if (!isExpectedError(err)) logger?.error(err instanceof Error ? err : message);
  void vscode.window.showErrorMessage(`Launchpad: ${action}: ${message}`);
}
