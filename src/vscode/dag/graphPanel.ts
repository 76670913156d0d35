// The Task Graph: a webview panel beside the editor that draws the task DAG from the state
// model and follows it as it changes. Its script (dist/webview/dag.js, with the layout library)
// is loaded by the webview only when the panel opens; the extension's own bundle holds only this.
import { randomBytes } from 'node:crypto';

import * as vscode from 'vscode';

import type { Logger } from '../../core/logger';
import { COMMANDS } from '../contributions';
import type { StateModel, StateSnapshot } from '../model/stateModel';
import { STATE_WORDS } from '../views/taskPresentation';
import { taskGraph } from './graphModel';
import type { DrawnGraph, FromWebview, TaskGraph, ToWebview } from './protocol';

const VIEW_TYPE = 'launchpad.taskGraph';

export interface TaskGraphApi {
  /** What the webview drew last, read from its SVG; undefined while the panel is closed. */
  drawn(): DrawnGraph | undefined;
  /** Clicks a node in the webview, as a person does: the click goes through the page's own handler. */
  click(taskId: string): Promise<void>;
}

export function registerTaskGraph(context: vscode.ExtensionContext, model: StateModel, logger: Logger): TaskGraphApi {
  const root = vscode.Uri.joinPath(context.extensionUri, 'dist', 'webview');
  const icon = vscode.Uri.joinPath(context.extensionUri, 'media', 'launchpad.svg');
  let panel: GraphPanel | undefined;

  const open = (): void => {
    if (panel) return panel.reveal();
    panel = new GraphPanel(root, icon, model, logger);
    panel.onDidDispose(() => (panel = undefined));
  };

  context.subscriptions.push(vscode.commands.registerCommand(COMMANDS.showTaskGraph, open), { dispose: () => panel?.dispose() });

  return {
    drawn: () => panel?.lastDrawn,
    async click(taskId) {
      if (!panel) throw new Error('the Task Graph is not open');
      await panel.post({ type: 'click', id: taskId });
    },
  };
}

class GraphPanel {
  private readonly panel: vscode.WebviewPanel;
  private readonly disposables: vscode.Disposable[] = [];
  /** The graph last sent: a reload that changed nothing drawn (a log line appended) sends nothing. */
  private sent: string | undefined;
  lastDrawn: DrawnGraph | undefined;

  constructor(
    root: vscode.Uri,
    icon: vscode.Uri,
    private readonly model: StateModel,
    private readonly logger: Logger,
  ) {
    this.panel = vscode.window.createWebviewPanel(
      VIEW_TYPE,
      'Task Graph',
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, localResourceRoots: [root] },
    );
    this.panel.iconPath = icon;
    this.panel.webview.html = page(this.panel.webview, root);
    this.disposables.push(
      this.panel.webview.onDidReceiveMessage((m: FromWebview) => void this.receive(m)),
      model.onDidChange((s) => this.send(s)),
      this.panel.onDidDispose(() => this.dispose()),
    );
  }

  readonly onDidDispose = (listener: () => void) => this.panel.onDidDispose(listener);

  reveal(): void {
    this.panel.reveal(undefined, true);
  }

  async post(message: ToWebview): Promise<void> {
    if (!(await this.panel.webview.postMessage(message))) throw new Error('the Task Graph webview did not take the message');
  }

  private send(snapshot: StateSnapshot): void {
    if (!this.panel.visible) return;
    const graph: TaskGraph = taskGraph(snapshot, STATE_WORDS);
    const text = JSON.stringify(graph);
    if (text === this.sent) return;
    this.sent = text;
    this.post({ type: 'graph', graph }).catch((err: Error) => this.logger.debug(`task graph: ${err.message}`));
  }

  private async receive(message: FromWebview): Promise<void> {
    switch (message.type) {
      case 'ready':
        // A new page (opened, or shown again after being hidden, which discards it) draws from scratch.
        this.sent = undefined;
        this.send(await this.model.whenLoaded());
        return;
      case 'drawn':
        this.lastDrawn = message.drawn;
        return;
      case 'open':
        // As a click on its row in the Tasks view: the row selected, then the click's action.
        await vscode.commands.executeCommand(COMMANDS.revealTask, message.id);
        await vscode.commands.executeCommand(COMMANDS.taskClicked, message.id);
        return;
    }
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
    this.panel.dispose();
    this.lastDrawn = undefined;
  }
}

/** The page: its script and styles from the bundle's folder only, a nonce for the script. */
function page(webview: vscode.Webview, root: vscode.Uri): string {
  const nonce = randomBytes(16).toString('base64');
  const script = webview.asWebviewUri(vscode.Uri.joinPath(root, 'dag.js'));
  const styles = webview.asWebviewUri(vscode.Uri.joinPath(root, 'dag.css'));
  const csp = [`default-src 'none'`, `style-src ${webview.cspSource}`, `script-src 'nonce-${nonce}'`].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${styles}">
<title>Task Graph</title>
</head>
<body>
<header id="summary" aria-live="polite"></header>
<main id="graph"></main>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
}
