// A message with buttons that does not hold the command open: the command returns at once and
// a button's action runs whenever (if ever) it is clicked. Modal questions are awaited instead.
import * as vscode from 'vscode';

export type Severity = 'info' | 'warning' | 'error';

export interface ShownNotice {
  severity: Severity;
  message: string;
  /** Its buttons, each the action a click runs. */
  actions: Record<string, () => unknown>;
}

/** How many of the last messages are remembered. */
const REMEMBERED = 50;
const recent: ShownNotice[] = [];

/** The last messages offered, oldest first: the extension's API hands them to the host tests. */
export function recentNotices(): readonly ShownNotice[] {
  return recent;
}

export function offer(severity: Severity, message: string, actions: Record<string, () => unknown> = {}): void {
  recent.push({ severity, message, actions });
  if (recent.length > REMEMBERED) recent.shift();
  const show =
    severity === 'error'
      ? vscode.window.showErrorMessage
      : severity === 'warning'
        ? vscode.window.showWarningMessage
        : vscode.window.showInformationMessage;
  void show(message, ...Object.keys(actions)).then((choice) => (choice ? actions[choice]?.() : undefined));
}
