import * as vscode from 'vscode';

import { COMMANDS } from '../contributions';

/** A `command:` link revealing a task in the Tasks view (document links and hovers). */
export function revealTaskUri(id: string): vscode.Uri {
  return vscode.Uri.parse(`command:${COMMANDS.revealTask}?${encodeURIComponent(JSON.stringify([id]))}`);
}
