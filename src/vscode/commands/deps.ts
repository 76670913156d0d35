// What every command group gets, and the shape of the handler table commands/index.ts registers.
import type * as vscode from 'vscode';

import type { Logger } from '../../core/logger';
import type { CommandId, COMMANDS } from '../contributions';
import type { StateModel } from '../model/stateModel';
import type { ReviewComments } from '../review/reviewComments';
import type { RunManager } from '../run/runManager';
import type { Views } from '../views';

export interface CommandDeps {
  model: StateModel;
  runs: RunManager;
  views: Views;
  channel: vscode.LogOutputChannel;
  logger: Logger;
  /** The draft comments of the reviews open in the editor. */
  review: ReviewComments;
}

/** The Milestones view's commands, registered by milestones/. */
export type MilestoneCommand =
  | typeof COMMANDS.runLongRun
  | typeof COMMANDS.stopLongRun
  | typeof COMMANDS.reviewPlan
  | typeof COMMANDS.approveMilestone
  | typeof COMMANDS.rejectPlan
  | typeof COMMANDS.retryMilestone
  | typeof COMMANDS.skipMilestone
  | typeof COMMANDS.refreshMilestones;

/** Every command package.json declares has a handler here, except the progress log's, the Task Graph's and the Milestones view's own. */
export type HandledCommand = Exclude<CommandId, typeof COMMANDS.filterLog | typeof COMMANDS.showTaskGraph | MilestoneCommand>;
export type Handler = (...args: unknown[]) => unknown;
export type Handlers<K extends HandledCommand = HandledCommand> = { [P in K]: Handler };
