// A question before an action that loses something: a quick pick with the action first (Enter
// does it) and "Cancel" second (Esc or a click elsewhere cancels too). Not a modal dialog: a
// quick pick can be answered from the keyboard, from another extension through
// `workbench.action.acceptSelectedQuickOpenItem`, and in a test.
import * as vscode from 'vscode';

export interface Confirmation {
  /** What is asked, e.g. "Retry task-003? It used all 3 attempts." */
  title: string;
  /** The action's label, e.g. "Retry". */
  action: string;
  /** What the action does and what it costs, under the action's label. */
  detail: string;
}

export async function confirm({ title, action, detail }: Confirmation): Promise<boolean> {
  const picked = await vscode.window.showQuickPick([{ label: action, detail }, { label: 'Cancel' }], {
    title,
    placeHolder: `${action} or cancel`,
  });
  return picked?.label === action;
}
