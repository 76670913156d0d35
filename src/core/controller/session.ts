// One controller session: the context every step shares (named, so a step can be driven
// from a context built by hand), logging in the session's name, transactions, where a task's
// worktree and attempt folders live, and the two ends of a task (completed, failed). Each end
// runs its transition (tasks/transitions.ts) in a transaction first and logs after; the task's
// worktree and branch are removed after it returns, so its slot is free at once.
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Emitter } from '../events';
import type { Git } from '../git/git';
import { branchFor } from '../ids';
import type { Category } from '../log/logLine';
import type { Logger } from '../logger';
import { ProcessRecords } from '../process/processRecords';
import type { LogEvent, ProgressLog } from '../log/progressLog';
import type { AttemptPaths, StatePaths } from '../statePaths';
import type { StateStore } from '../taskFile/store';
import type { Task, TaskFile } from '../taskFile/schema';
import { completeTask, failTask } from '../tasks/transitions';
import type { RunConfig } from './runConfig';
import type { TaskEvent, TerminalFactory } from './types';

/** What a session works with: everything but its own number and state. */
export interface SessionContext {
  git: Git;
  store: StateStore;
  config: RunConfig;
  paths: StatePaths;
  logger: Logger;
  progress: ProgressLog;
  /** The repository's top level (the main working tree). */
  toplevel: string;
  /** The branch tasks are merged into. */
  baseBranch: string;
  terminals: TerminalFactory;
}

export class Session implements SessionContext {
  readonly git: Git;
  readonly store: StateStore;
  readonly config: RunConfig;
  readonly paths: StatePaths;
  readonly logger: Logger;
  readonly progress: ProgressLog;
  readonly toplevel: string;
  readonly baseBranch: string;
  readonly terminals: TerminalFactory;
  readonly records: ProcessRecords;
  /** The base branch's commit new worktrees start from; moves with every merge. */
  head = '';
  /** BATCH lines logged this session, for STATS. */
  batches = 0;
  readonly taskEvents = new Emitter<TaskEvent>();
  private readonly stopController = new AbortController();
  /** Worktree removals started by a task's end and not finished yet, by task id. */
  private readonly removals = new Map<string, Promise<void>>();

  constructor(
    readonly number: number,
    ctx: SessionContext,
  ) {
    this.git = ctx.git;
    this.store = ctx.store;
    this.config = ctx.config;
    this.paths = ctx.paths;
    this.logger = ctx.logger;
    this.progress = ctx.progress;
    this.toplevel = ctx.toplevel;
    this.baseBranch = ctx.baseBranch;
    this.terminals = ctx.terminals;
    this.records = new ProcessRecords(this.paths.processRecords);
  }

  /** Aborted when a person stops the run: every agent, validation and cleanup ends. */
  get stopSignal(): AbortSignal {
    return this.stopController.signal;
  }
  get stopping(): boolean {
    return this.stopController.signal.aborted;
  }
  requestStop(): void {
    this.stopController.abort();
  }

  log(...events: LogEvent[]): void {
    this.progress.append(this.number, ...events);
  }

  transact<T>(mutate: (file: TaskFile) => T): Promise<T> {
    return this.store.transact(mutate);
  }

  worktreePath(taskId: string): string {
    return join(this.config.worktreeRoot, taskId);
  }

  /** The state root's counterpart inside a worktree: where agents and validations run. */
  projectDirIn(worktree: string): string {
    const sub = relative(this.toplevel, this.paths.root);
    const dir = sub ? join(worktree, sub) : worktree;
    return existsSync(dir) ? dir : worktree;
  }

  /** A fresh folder for one attempt's prompt and transcripts. */
  createAttempt(taskId: string, attempt: number): AttemptPaths {
    return this.paths.createAttempt(taskId, attempt, this.number);
  }

  /** Whether agent `agentId`'s work was committed in one of the task's attempts. */
  workCommitted(taskId: string, agentId: string | null | undefined): boolean {
    return !!agentId && this.paths.attemptsOf(taskId).some((a) => a.workCommittedBy() === agentId);
  }

  async completeTask(task: Task, mergeCommit: string | undefined, extra: LogEvent[] = []): Promise<void> {
    await this.transact((file) => void completeTask(file, task.id));
    const merged = mergeCommit
      ? [{ type: 'MERGE' as const, taskId: task.id, message: `branch=${branchFor(task.id)} into=${this.baseBranch} (commit ${mergeCommit})` }]
      : [];
    this.log(...extra, ...merged, { type: 'Completed', taskId: task.id, message: mergeCommit ? `(commit ${mergeCommit})` : '' });
    this.taskEvents.fire({ taskId: task.id, kind: 'completed' });
    this.removeWorktreeSoon(task.id);
  }

  /** Records a failed attempt (transitions.failTask), then discards the worktree. */
  async failTask(task: Task, category: Category, reason: string, tail: string | undefined, discardReason: string): Promise<void> {
    const entry = await this.transact((file) => failTask(file, task.id, { category, reason, tail }));
    this.log(
      { type: 'DISCARD', taskId: task.id, message: `worktree=${branchFor(task.id)} reason="${discardReason}"` },
      { type: 'ERROR', taskId: task.id, category, message: entry.reason },
    );
    this.taskEvents.fire({ taskId: task.id, kind: 'failed' });
    this.removeWorktreeSoon(task.id);
  }

  /**
   * Starts removing the task's worktree and branch, and returns: the result is recorded, the
   * slot is free. A new worktree for the same task waits for it (removalOf); the session's end
   * waits for all (worktreesRemoved). One that fails is a WARN line, and the next run's clean-up
   * removes what is left.
   */
  removeWorktreeSoon(taskId: string): void {
    const removal: Promise<void> = this.removeWorktree(taskId)
      .catch((err: unknown) => {
        const why = (err instanceof Error ? err.message : String(err)).split('\n')[0];
        this.log({ type: 'WARN', taskId, message: `could not remove its worktree and branch (${why}); the next run removes them` });
      })
      .finally(() => {
        if (this.removals.get(taskId) === removal) this.removals.delete(taskId);
      });
    this.removals.set(taskId, removal);
  }

  /** Resolves when the removal of the task's last worktree, if one is going, has ended. */
  async removalOf(taskId: string): Promise<void> {
    await this.removals.get(taskId);
  }

  /** Resolves when every removal started so far has ended. */
  async worktreesRemoved(): Promise<void> {
    while (this.removals.size) await Promise.all([...this.removals.values()]);
  }

  /**
   * Removes the task's worktree and branch, wherever they are; missing ones are fine. Almost
   * always the worktree is the one made at worktreePath(): it goes first, and only when the
   * branch is then still checked out somewhere else (a worktree made under another worktree_dir,
   * or one whose folder a person deleted) are the worktrees listed to find it.
   */
  async removeWorktree(taskId: string): Promise<void> {
    // One removal of a task's worktree at a time: a later one starts after the one going.
    await this.removals.get(taskId);
    const branch = branchFor(taskId);
    const own = this.worktreePath(taskId);
    if (existsSync(own)) await this.git.removeWorktree(own);
    if (await this.git.deleteBranch(branch)) return;
    const ref = `refs/heads/${branch}`;
    for (const w of await this.git.listWorktrees()) if (w.branch === ref) await this.git.removeWorktree(w.path);
    await this.git.deleteBranch(branch);
  }
}
