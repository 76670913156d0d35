// A message with buttons that does not hold the command open: the command returns at once and
// a button's action runs whenever (if ever) it is clicked. Modal questions are awaited instead.
import * as vscode from 'vscode';

export type Severity = 'info' | 'warning' | 'error';

export function offer(severity: Severity, message: string, actions: Record<string, () => unknown> = {}): void {
  const show =
    severity === 'error' ? vscode.window.showErrorMessage : severity === 'warning' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  void show(message, ...Object.keys(actions)).then((choice) => (choice ? actions[choice]?.() : undefined));
}
