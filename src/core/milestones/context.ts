// What every phase of a long run shares, and the handle that stops one milestone's work (a person's
// stop, the duration guard, a rate limit) whether it is a planner, a reviewer or a controller.
import type { Controller } from '../controller/controller';
import type { TerminalFactory } from '../controller/types';
import type { Git } from '../git/git';
import type { Logger } from '../logger';
import type { ProcessRecords } from '../process/processRecords';
import type { LongRunStore } from './longRun';
import type { HarnessPaths } from './paths';

export interface AgentCommands {
  planner: string;
  worker: string;
  reviewer: string;
}

export interface LongRunContext {
  paths: HarnessPaths;
  store: LongRunStore;
  /** At the repository's main checkout, where the base branch is checked out. */
  git: Git;
  baseBranch: string;
  agents: AgentCommands;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  records: ProcessRecords;
  /** A line for the person watching (the CLI prints it, the extension logs it). */
  say(text: string, id?: string): void;
  /** Each progress log line of a milestone's controller. */
  onControllerLine?: ((id: string, line: string) => void) | undefined;
  terminals?: TerminalFactory | undefined;
  control(id: string): MilestoneControl;
}

/** Why a milestone's work was stopped before it ended. */
export type StopCause = 'stop' | 'duration' | 'rate-limit';

export class MilestoneControl {
  private readonly abort = new AbortController();
  private readonly controllers = new Set<Controller>();
  cause: StopCause | undefined;

  get signal(): AbortSignal {
    return this.abort.signal;
  }
  get stopped(): boolean {
    return this.cause !== undefined;
  }

  stop(cause: StopCause): void {
    this.cause ??= cause;
    this.abort.abort();
    for (const c of this.controllers) c.stop();
  }

  /** A controller run of this milestone: stopped with it. Returns the detach function. */
  attach(c: Controller): () => void {
    this.controllers.add(c);
    if (this.cause) c.stop();
    return () => this.controllers.delete(c);
  }
}

/** How a phase ended. `advanced`: the milestone moved on (state.md says where to). */
export type PhaseEnd =
  | { kind: 'advanced' }
  | { kind: 'gate' }
  | { kind: 'failed' }
  | { kind: 'stopped'; cause: StopCause }
  | { kind: 'rate-limited'; who: string }
  /** Its tasks wait on people (answers, reviews): the run stops with exit 4, the milestone goes on after. */
  | { kind: 'awaiting-people'; message: string }
  | { kind: 'error'; message: string };

export const advanced: PhaseEnd = { kind: 'advanced' };
