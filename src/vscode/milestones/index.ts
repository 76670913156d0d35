// The Milestones view of the Launchpad container (a long run: its DAG, phases, attempts and files),
// the long run of this window, and the commands that act at its gates.
import * as vscode from 'vscode';

import type { Logger } from '../../core/logger';
import { CONTEXT_KEYS, VIEWS } from '../contributions';
import { LongRunManager } from './longRunManager';
import { milestoneCommands } from './milestoneCommands';
import { MilestonesModel } from './milestonesModel';
import { type MilestoneNode, MilestonesProvider } from './milestonesProvider';

export interface MilestonesApi {
  model: MilestonesModel;
  provider: MilestonesProvider;
  view: vscode.TreeView<MilestoneNode>;
  longRuns: LongRunManager;
  /** The value last given to the context key launchpad.hasLongRun (undefined before the first load). */
  hasLongRun(): boolean | undefined;
}

export function registerMilestones(context: vscode.ExtensionContext, logger: Logger): MilestonesApi {
  const model = new MilestonesModel(logger);
  const longRuns = new LongRunManager(model, logger);
  const provider = new MilestonesProvider(model);
  const view = vscode.window.createTreeView(VIEWS.milestones, { treeDataProvider: provider, showCollapseAll: true });
  context.subscriptions.push(model, longRuns, provider, view);
  for (const [id, handler] of Object.entries(milestoneCommands({ model, longRuns, logger }))) {
    context.subscriptions.push(vscode.commands.registerCommand(id, handler));
  }
  // The view shows only where a long run exists; "Run Long Run" in the palette says how to make one.
  let hasLongRun: boolean | undefined;
  context.subscriptions.push(
    model.onDidChange((sessions) => {
      if (hasLongRun === sessions.length > 0) return;
      hasLongRun = sessions.length > 0;
      void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.hasLongRun, hasLongRun);
    }),
  );
  model.scheduleRefresh(0);
  return { model, provider, view, longRuns, hasLongRun: () => hasLongRun };
}
