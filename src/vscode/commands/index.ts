import * as vscode from 'vscode';
import type { Logger } from '../../core/logger';
import { COMMANDS } from '../contributions';
import type { HarnessModel } from '../model/harnessModel';
import type { RunManager } from '../run/runManager';
import type { Views } from '../views';

export interface CommandDeps {
  model: HarnessModel;
  runs: RunManager;
  views: Views;
  channel: vscode.LogOutputChannel;
  logger: Logger;
}

export function registerCommands(context: vscode.ExtensionContext, deps: CommandDeps): void {
  context.subscriptions.push(vscode.commands.registerCommand(COMMANDS.status, () => deps.model.refresh()));
}
