// Activation: one output channel, one model of the state files, then the features, each
// registering its disposables on the extension context. Nothing runs at activation: the model
// loads on the next turn of the event loop and views fill in when it arrives.
import * as vscode from 'vscode';

import { registerCommands } from './commands';
import { onDidChangeSettings, readSettings } from './config';
import { registerTaskGraph, type TaskGraphApi } from './dag/graphPanel';
import { outputLogger } from './logger';
import { type MilestonesApi, registerMilestones } from './milestones';
import { StateModel } from './model/stateModel';
import { recentNotices, type ShownNotice } from './notify';
import { registerProgressLog } from './progressLog';
import { ReviewComments } from './review/reviewComments';
import { registerBaseStatus, type ShownBase, shownBase } from './run/baseStatus';
import { RunManager } from './run/runManager';
import { registerRunProgress, type ShownRun, shownRun } from './run/runProgress';
import { registerTaskProvider } from './run/taskProvider';
import { registerTaskFileDiagnostics } from './taskFileDiagnostics';
import { registerViews, type Views } from './views';

export interface LaunchpadApi {
  model: StateModel;
  runs: RunManager;
  /** The tree providers and views (tests read the items a person would see). */
  views: Views;
  /** The Milestones view and the long run of this window. */
  milestones: MilestonesApi;
  /** The Task Graph panel (tests read what its webview drew). */
  graph: TaskGraphApi;
  /** The review comments in the editor (tests add comments as a person's clicks do). */
  review: ReviewComments;
  /** The last messages shown with their buttons, oldest first (tests read what a person was told). */
  notices(): readonly ShownNotice[];
  /** The status bar's text and the progress notification's message of the runs, as shown now. */
  shownRun(): ShownRun;
  /** What the status bar shows of the base branch's integration check. */
  shownBase(): ShownBase;
}

export function activate(context: vscode.ExtensionContext): LaunchpadApi {
  const channel = vscode.window.createOutputChannel('Launchpad', { log: true });
  const logger = outputLogger(channel);
  const model = new StateModel(logger);
  const runs = new RunManager(model, logger);
  context.subscriptions.push(channel, model, runs);

  const views = registerViews(context, model);
  const review = new ReviewComments();
  context.subscriptions.push(review);
  registerCommands(context, { model, runs, views, channel, logger, review });
  registerRunProgress(context, runs, model, logger);
  registerBaseStatus(context, model);
  registerProgressLog(context, model);
  const milestones = registerMilestones(context, logger);
  const graph = registerTaskGraph(context, model, logger);
  context.subscriptions.push(registerTaskProvider(model, runs), registerTaskFileDiagnostics());
  context.subscriptions.push(
    onDidChangeSettings(() => {
      void readSettings().then(({ problems }) => problems.forEach((p) => logger.warn(`invalid setting ${p}; using the default`)));
    }),
  );

  model.scheduleRefresh(0);
  return { model, runs, views, milestones, graph, review, notices: recentNotices, shownRun, shownBase };
}

export function deactivate(): void {
  // Runs are processes of their own: they go on, and the next window attaches to them.
}
