import type * as vscode from 'vscode';
import type { HarnessModel } from '../model/harnessModel';

/** What commands need from the views (reveal a task, switch the tasks view's mode). */
export interface Views {
  revealTask(taskId: string): Promise<void>;
}

export function registerViews(_context: vscode.ExtensionContext, _model: HarnessModel): Views {
  return { revealTask: async () => undefined };
}
