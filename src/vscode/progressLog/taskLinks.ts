// Task ids in the progress log are links to the task in the Tasks view: a `command:` URI for
// launchpad.revealTask (VS Code opens command links from document links). Only ids the task
// file knows are linked. Past MAX_LINK_LINES the document gets no links (the hover still offers
// the same link): VS Code asks for the links of the whole document after every change, which
// would make each append to a long log cost the whole log.
import * as vscode from 'vscode';

import type { StateModel } from '../model/stateModel';
import { revealTaskUri } from './revealTaskUri';
import { knownTaskTokens } from './taskTokens';

export const MAX_LINK_LINES = 10_000;

export class TaskLinkProvider implements vscode.DocumentLinkProvider {
  constructor(private readonly model: StateModel) {}

  provideDocumentLinks(doc: vscode.TextDocument, token: vscode.CancellationToken): vscode.DocumentLink[] {
    const byId = this.model.snapshot?.byId;
    if (!byId?.size || doc.lineCount > MAX_LINK_LINES) return [];
    const links: vscode.DocumentLink[] = [];
    for (let line = 0; line < doc.lineCount && !token.isCancellationRequested; line++) {
      for (const t of knownTaskTokens(doc.lineAt(line).text, (id) => byId.has(id))) {
        const link = new vscode.DocumentLink(new vscode.Range(line, t.start, line, t.end), revealTaskUri(t.id));
        link.tooltip = `Reveal ${t.id} in the Tasks view`;
        links.push(link);
      }
    }
    return links;
  }
}
