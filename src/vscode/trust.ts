// Nothing runs in a workspace the user has not trusted. Every handler that starts a process or
// changes files calls this first: a command can be invoked without its menu or `enablement`.
import * as vscode from 'vscode';

export function requireTrust(action: string): boolean {
  if (vscode.workspace.isTrusted) return true;
  void vscode.window
    .showWarningMessage(
      `Launchpad: ${action} is not available in Restricted Mode. Trust this workspace to run agents.`,
      'Manage Workspace Trust',
    )
    .then((choice) => choice && vscode.commands.executeCommand('workbench.trust.manage'));
  return false;
}
