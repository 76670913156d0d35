// The progress log in the editor: harness-progress.txt is a `launchpad-log` document (coloured
// by media/launchpad-log.tmLanguage.json), its task ids hover with the task and link to it in
// the Tasks view, its ERROR lines are marked in the overview ruler, and Filter Progress Log
// opens filtered views of it that follow appends.
import * as vscode from 'vscode';

import { COMMANDS, LOG_LANGUAGE_ID } from '../contributions';
import type { StateModel } from '../model/stateModel';
import { ErrorMarks } from './errorMarks';
import { filterProgressLog } from './filterCommand';
import { FilteredLogDocuments } from './filteredLogDocuments';
import { FILTER_SCHEME } from './filterUri';
import { TaskHoverProvider } from './taskHover';
import { TaskLinkProvider } from './taskLinks';

export interface ProgressLog {
  /** The filtered views' documents (open views, an immediate read of appends). */
  views: FilteredLogDocuments;
}

export function registerProgressLog(context: vscode.ExtensionContext, model: StateModel): ProgressLog {
  const views = new FilteredLogDocuments();
  const selector: vscode.DocumentSelector = { language: LOG_LANGUAGE_ID };
  context.subscriptions.push(
    views,
    vscode.workspace.registerTextDocumentContentProvider(FILTER_SCHEME, views),
    vscode.languages.registerHoverProvider(selector, new TaskHoverProvider(model)),
    vscode.languages.registerDocumentLinkProvider(selector, new TaskLinkProvider(model)),
    new ErrorMarks(),
    vscode.commands.registerCommand(COMMANDS.filterLog, (arg?: unknown) => filterProgressLog(model, arg)),
  );
  return { views };
}
