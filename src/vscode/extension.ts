// Activation: one output channel, one model of the harness, then the features, each
// registering its disposables on the extension context. Nothing runs at activation: the model
// loads in the background and views fill in when it arrives.
import * as vscode from 'vscode';
import { registerCommands } from './commands';
import { outputLogger } from './logger';
import { HarnessModel } from './model/harnessModel';
import { registerProgressLog } from './progressLog';
import { RunManager } from './run/runManager';
import { registerViews } from './views';

export interface LaunchpadApi {
  model: HarnessModel;
  runs: RunManager;
}

export function activate(context: vscode.ExtensionContext): LaunchpadApi {
  const channel = vscode.window.createOutputChannel('Launchpad', { log: true });
  const logger = outputLogger(channel);
  const model = new HarnessModel(logger);
  const runs = new RunManager(model, logger);
  context.subscriptions.push(channel, model, runs);

  const views = registerViews(context, model);
  registerCommands(context, { model, runs, views, channel, logger });
  registerProgressLog(context, model);

  void model.refresh();
  return { model, runs };
}

export function deactivate(): void {
  // Disposables on the context end any run (its agents included) when the host shuts down.
}
