// The progress log in the editor: harness-progress.txt is a `launchpad-log` document (coloured
// by media/launchpad-log.tmLanguage.json), its task ids hover with the task and link to it in
// the Tasks view, and its ERROR lines are marked in the overview ruler.
import * as vscode from 'vscode';
import { LOG_LANGUAGE_ID } from '../contributions';
import type { HarnessModel } from '../model/harnessModel';
import { ErrorMarks } from './errorMarks';
import { TaskHoverProvider } from './taskHover';
import { TaskLinkProvider } from './taskLinks';

export function registerProgressLog(context: vscode.ExtensionContext, model: HarnessModel): void {
  const selector: vscode.DocumentSelector = { language: LOG_LANGUAGE_ID };
  context.subscriptions.push(
    vscode.languages.registerHoverProvider(selector, new TaskHoverProvider(model)),
    vscode.languages.registerDocumentLinkProvider(selector, new TaskLinkProvider(model)),
    new ErrorMarks(),
  );
}
