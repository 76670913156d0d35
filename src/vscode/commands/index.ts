// Every command of package.json, registered from one typed table: a command without a handler
// (or a handler for an id that is not in contributions.ts) does not compile. The progress log's
// filterLog is registered by progressLog/.
import * as vscode from 'vscode';

import { reviewCommands } from '../review/reviewCommands';
import { addTaskCommands } from './addTask';
import { agentHookCommands } from './agentHooks';
import { registerBaseContent } from './compareWorktree';
import type { CommandDeps, Handlers } from './deps';
import { poolCommands } from './poolCommands';
import { runCommands } from './runCommands';
import { setupCommands } from './setupCommands';
import { registerSessionDocument, startSessionCommands } from './startSession';
import { registerStatusDocument } from './statusDocument';
import { taskCommands } from './taskCommands';
import { worktreeCommands } from './worktreeCommands';

export type { CommandDeps } from './deps';

export function registerCommands(context: vscode.ExtensionContext, deps: CommandDeps): void {
  const handlers: Handlers = {
    ...runCommands(deps),
    ...addTaskCommands(deps),
    ...taskCommands(deps),
    ...setupCommands(deps),
    ...worktreeCommands(deps),
    ...poolCommands(deps),
    ...agentHookCommands(deps),
    ...startSessionCommands(deps),
    ...reviewCommands(deps, deps.review),
  };
  for (const [id, handler] of Object.entries(handlers)) {
    context.subscriptions.push(vscode.commands.registerCommand(id, handler));
  }
  context.subscriptions.push(registerStatusDocument(deps.model), registerBaseContent(), registerSessionDocument());
}
