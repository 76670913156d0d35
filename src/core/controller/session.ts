// One controller session: the context every step shares (named, so a step can be driven
// from a context built by hand), logging in the session's name, transactions, where a task's
// worktree and attempt folders live, and the two ends of a task (completed, failed). Each end
// runs its transition (tasks/transitions.ts) in a transaction first (a completion with the run
// loop's next pool pass in it: afterResult) and logs after; the task's worktree and branch are
// removed after it returns, so its slot is free at once.
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';

import { assertFence, type AttemptFence, mayRemoveWorktree, worktreeOwner } from '../attempt/lifecycle';
import { Emitter } from '../events';
import type { Git } from '../git/git';
import { keepAttempt } from '../git/keptAttempts';
import { branchFor } from '../ids';
import type { IntegrationGate } from '../integration/gate';
import type { Category } from '../log/logLine';
import type { LogEvent, ProgressLog } from '../log/progressLog';
import type { Logger } from '../logger';
import { ProcessRecords } from '../process/processRecords';
import type { RunEventWriter } from '../runEvents/writer';
import type { AttemptPaths, AttemptVerdict, StatePaths } from '../statePaths';
import type { Task, TaskFile } from '../taskFile/schema';
import type { StateStore } from '../taskFile/store';
import { askQuestion, awaitReview, completeTask, failTask, mustFind, restartTask, undoDispatch } from '../tasks/transitions';
import { WorktreePool } from '../worktrees/pool';
import { PortBlocks } from '../worktrees/ports';
import { RunSpending } from './budget';
import { classifyError, type EnvFailure, writeFailure } from './envFailure';
import type { StopCause } from './outcome';
import type { RunConfig } from './runConfig';
import type { TaskEvent, TerminalFactory } from './types';
import type { Worker } from './workers';

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

/** The pool pass a task's completion ran (Session.afterResult). */
export interface AfterResult {
  /** Called once the transaction's write is done: the loop may dispatch what the pass claimed. */
  written(): void;
  /** The task the pass found next, among those it did not start (PoolPass.next). */
  next: string | null;
}

/**
 * What a session changes as it goes, apart from its fixed context: the base it is at, what it
 * counted, the first cause that stopped it, and what its end tells a person.
 */
export class SessionState {
  /** The base branch's commit new worktrees start from; moves with every merge. */
  head = '';
  /** BATCH lines logged this session, for STATS. */
  batches = 0;
  /** session_count holds this session: it dispatched something (countIn). */
  counted = false;
  /** What stopped the session besides the loop's own end (the first cause): outcome.ts turns it into the outcome. */
  stopCause: StopCause | undefined;
  /** Tasks whose attempt could not be given back after such a failure (the task file could not be written). */
  readonly envUnrecorded = new Set<string>();
  /** What the run's end summary adds after its message: what a person should know or do. */
  readonly notes: string[] = [];
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
  /** What the session changes as it goes (the context above is fixed for its life). */
  readonly state = new SessionState();
  readonly taskEvents = new Emitter<TaskEvent>();
  /** Concurrent mode: this process's worker (claims, leases, the fencing check). */
  worker: Worker | undefined;
  /** The run's event stream (attempt folders are announced there as they are made). */
  events: RunEventWriter | undefined;
  /** session_config.integration_check: the base branch's check after merges (integration/gate.ts). */
  gate: IntegrationGate | undefined;
  /** In-place mode: tasks run one at a time in the main working tree (inPlaceRun.ts). */
  inPlace = false;
  /** What this run's agents reported spending, its budget, and a usage limit's pause (budget.ts). */
  readonly spending: RunSpending;
  /** The port blocks of the running tasks (LAUNCHPAD_PORT_BASE). */
  readonly ports: PortBlocks;
  private readonly stopController = new AbortController();
  /** Worktree removals started by a task's end and not finished yet, by task id. */
  private readonly removals = new Map<string, Promise<void>>();
  /** Prepared worktrees reused between tasks (session_config.worktree_pool). */
  readonly pool: WorktreePool;
  /**
   * Run inside the transaction that records a task's completion, after it: the run loop's next
   * pool pass, so one write records the result and claims the next batch. Its `written` is
   * called once that write is done. (Not after a failure: its retry must wait until the failed
   * attempt's branch is kept and its worktree removed.)
   */
  afterResult: ((file: TaskFile, taskId: string) => AfterResult | undefined) | undefined;
  /**
   * The attempt this session drives for each task it runs or recovers: every effect of it on the
   * task (its end, its worktree's removal) is checked against the task's record first.
   */
  private readonly fences = new Map<string, AttemptFence>();
  /** Transactions asked for so far, and the number of the one running: tells whether a pass is the latest. */
  private transactionsAsked = 0;
  private transactionRunning = 0;

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
    this.spending = new RunSpending(this.config);
    this.ports = new PortBlocks(this.config.portBlockSize, this.paths.root);
    this.pool = new WorktreePool(this);
  }

  /** The base branch's commit new worktrees start from (the worktree pool reads it). */
  get head(): string {
    return this.state.head;
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
  /** The session stops for `cause`; the first cause is the one reported. */
  stopFor(cause: StopCause): void {
    this.state.stopCause ??= cause;
    this.requestStop();
  }

  /** The session stops because of the machine (ENV_SETUP): the first failure is the one reported. */
  stopForEnvironment(failure: EnvFailure): void {
    this.stopFor({ kind: 'environment', failure });
  }

  /** The machine's failure that stopped the session, if that is what stopped it. */
  get envFailure(): EnvFailure | undefined {
    const cause = this.state.stopCause;
    return cause?.kind === 'environment' ? cause.failure : undefined;
  }

  /** A line for the run's end summary (kept once). */
  note(text: string): void {
    if (!this.state.notes.includes(text)) this.state.notes.push(text);
  }

  /**
   * Counts the session in session_count, once, before its first dispatch: only sessions that
   * dispatch something count toward max_sessions. A session that does not keeps its number
   * for its log lines, and the next session takes the same number. Written inside the run
   * loop's pool transaction, the one that dispatches; the loop sets `counted` once it is written.
   */
  countIn(file: TaskFile): void {
    if (!this.state.counted) file.session_count = Math.max(file.session_count, this.number);
  }

  /**
   * Appends to the progress log. A log that cannot be written (a full disk, a read-only folder)
   * stops the session as the machine's failure instead of throwing out of whatever step logged.
   */
  log(...events: LogEvent[]): void {
    try {
      this.progress.append(this.number, ...events);
    } catch (err) {
      this.logger.error(err instanceof Error ? err : String(err));
      this.stopForEnvironment(classifyError(err) ?? writeFailure(this.progress.file, err instanceof Error ? err.message : String(err)));
    }
  }

  /**
   * A transaction of the session. Its writes of tasks all go through transitions.ts, so the
   * unchanged tasks are shared with the store's snapshot (frozen) instead of copied: on a large
   * file a task's transactions copy the one task they change, not the whole parse.
   */
  transact<T>(mutate: (file: TaskFile) => T): Promise<T> {
    const n = ++this.transactionsAsked;
    return this.store.transact(
      (file) => {
        this.transactionRunning = n;
        return mutate(file);
      },
      { sharedTasks: true },
    );
  }

  /** Inside a transaction: a mark that stays current until another transaction is asked for. */
  get transactionMark(): number {
    return this.transactionRunning;
  }

  /** Whether no transaction was asked for since the one `mark` was taken in. */
  isLatestTransaction(mark: number): boolean {
    return mark === this.transactionsAsked;
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

  /** A fresh folder for one attempt's prompt and transcripts (of agent `agentId`, when one runs). */
  createAttempt(taskId: string, attempt: number, agentId?: string): AttemptPaths {
    const files = this.paths.createAttempt(taskId, attempt, this.number, agentId);
    this.events?.attempt(this.paths, taskId, files, agentId);
    return files;
  }

  /** The folder of the attempt agent `agentId` ran, if it got that far. */
  attemptOf(taskId: string, agentId: string | null | undefined): AttemptPaths | undefined {
    return agentId ? this.paths.attemptsOf(taskId).findLast((a) => a.agent() === agentId) : undefined;
  }

  /** Whether agent `agentId`'s work was committed in one of the task's attempts. */
  workCommitted(taskId: string, agentId: string | null | undefined): boolean {
    return !!agentId && this.paths.attemptsOf(taskId).some((a) => a.workCommittedBy() === agentId);
  }

  /** The verdict agent `agentId` recorded for the task, and the attempt folder holding it. */
  verdictOf(taskId: string, agentId: string | null | undefined): { verdict: AttemptVerdict; attempt: AttemptPaths } | undefined {
    if (!agentId) return undefined;
    for (const attempt of this.paths.attemptsOf(taskId).reverse()) {
      const v = attempt.verdict();
      if (v?.agentId === agentId) return { verdict: v, attempt };
    }
    return undefined;
  }

  /**
   * Keeps the task's work before its branch goes: `snapshot` (of its uncommitted work) or
   * else the branch's tip, under refs/launchpad/attempts/<id>/<attempt> (the task's current
   * attempt count when not given), when it holds commits the base branch does not. Returns the
   * ref, or undefined when there was nothing to keep.
   */
  async keepAttempt(taskId: string, attempt?: number, snapshot?: string): Promise<string | undefined> {
    const tip = snapshot ?? (await this.git.resolve(`refs/heads/${branchFor(taskId)}`));
    if (!tip) return undefined;
    const n = attempt ?? this.store.load().file.tasks.find((t) => t.id === taskId)?.attempts ?? 0;
    return keepAttempt(this.git, taskId, n, tip, `refs/heads/${this.baseBranch}`, { snapshot: snapshot !== undefined });
  }

  /** Keeps the task's work (keepAttempt), then removes its worktree and branch. Returns the kept ref. */
  async discardWorktree(taskId: string, attempt?: number, fence?: AttemptFence): Promise<string | undefined> {
    const kept = await this.keepAttempt(taskId, attempt);
    await this.removeWorktree(taskId, fence);
    return kept;
  }

  /** The interrupted attempt left nothing to continue from: the task starts afresh (transitions.restartTask). */
  async restartTask(taskId: string): Promise<void> {
    await this.transact((file) => {
      this.assertOurs(file, taskId);
      restartTask(file, taskId);
    });
    this.release(taskId);
  }

  /** From here on, the task's effects are the attempt's: checked against its fence. */
  drive(fence: AttemptFence): void {
    this.fences.set(fence.taskId, fence);
  }

  /** The attempt this session drives for the task, if any. */
  fenceOf(taskId: string): AttemptFence | undefined {
    return this.fences.get(taskId);
  }

  /** Inside a transaction, before the task's end is written: throws StaleAttemptError when it is not ours. */
  private assertOurs(file: TaskFile, taskId: string): AttemptFence | undefined {
    const fence = this.fences.get(taskId);
    if (fence) assertFence(file, fence);
    return fence;
  }

  /**
   * The attempt ended for a reason that is not the task's: it is given back (transitions.
   * undoDispatch: the task as `before` its dispatch, or with `keepWork` in progress with its
   * work for the next run), only while the attempt is still the task's.
   */
  async giveBack(before: Task, opts: { keepWork?: boolean } = {}): Promise<void> {
    await this.transact((file) => {
      this.assertOurs(file, before.id);
      undoDispatch(file, before.id, before, opts);
    });
    this.release(before.id);
  }

  /**
   * A transaction on the task's attempt, only while the attempt is still the task's (its fence):
   * for the steps an executor records itself (in place: completion, failure, a base gone).
   */
  transactFenced<T>(taskId: string, mutate: (file: TaskFile) => T): Promise<T> {
    return this.transact((file) => {
      this.assertOurs(file, taskId);
      return mutate(file);
    });
  }

  /** The attempt ended (or was found stale): its fence goes. */
  release(taskId: string): void {
    this.fences.delete(taskId);
    this.worker?.release(taskId);
  }

  async completeTask(task: Task, mergeCommit: string | undefined, extra: LogEvent[] = []): Promise<void> {
    const { pass, fence } = await this.transact((file) => {
      const fence = this.assertOurs(file, task.id);
      completeTask(file, task.id);
      return { pass: this.afterResult?.(file, task.id), fence };
    });
    this.release(task.id);
    pass?.written();
    const merged = mergeCommit
      ? [
          {
            type: 'MERGE' as const,
            taskId: task.id,
            message: `branch=${branchFor(task.id)} into=${this.baseBranch} (commit ${mergeCommit})`,
          },
        ]
      : [];
    this.log(...extra, ...merged, { type: 'Completed', taskId: task.id, message: mergeCommit ? `(commit ${mergeCommit})` : '' });
    this.taskEvents.fire({ taskId: task.id, kind: 'completed', ...(pass ? { next: pass.next } : {}) });
    this.removeWorktreeSoon(task.id, fence);
  }

  /**
   * The agent asked a question (transitions.askQuestion): the task awaits a person's answer, the
   * attempt given back, its worktree and branch left as they are for the attempt after the answer.
   * `kept`: the ref its commits are kept at. Then the QUESTION line and the event.
   */
  async awaitAnswer(before: Task, text: string, kept: string | undefined): Promise<void> {
    await this.transact((file) => {
      this.assertOurs(file, before.id);
      askQuestion(file, before.id, before, text);
    });
    this.release(before.id);
    this.log({ type: 'QUESTION', taskId: before.id, message: `"${text}"${kept ? ` kept=${kept}` : ''}` });
    this.taskEvents.fire({ taskId: before.id, kind: 'question', question: text });
  }

  /**
   * Its validation passed under review "manual" (transitions.awaitReview): the task awaits a
   * person's review of `change.commit`, its worktree and branch left for the merge or the next
   * round. `kept`: the ref its commits are kept at. Then the REVIEW line and the event.
   */
  async awaitReview(before: Task, change: { commit: string; base: string }, kept: string | undefined): Promise<void> {
    const round = await this.transact((file) => {
      this.assertOurs(file, before.id);
      return awaitReview(file, before.id, change);
    });
    this.release(before.id);
    this.log({
      type: 'REVIEW',
      taskId: before.id,
      message: `awaiting review round=${round.number} commit=${change.commit.slice(0, 7)}${kept ? ` kept=${kept}` : ''}`,
    });
    this.taskEvents.fire({ taskId: before.id, kind: 'review' });
  }

  /**
   * Records a failed attempt (transitions.failTask), keeps its commits under a ref of ours
   * (keepAttempt), then discards the worktree.
   */
  async failTask(task: Task, category: Category, reason: string, tail: string | undefined, discardReason: string): Promise<void> {
    const { entry, attempt, fence } = await this.transact((file) => {
      const fence = this.assertOurs(file, task.id);
      return { entry: failTask(file, task.id, { category, reason, tail }), attempt: mustFind(file, task.id).attempts, fence };
    });
    this.release(task.id);
    const kept = await this.keepAttempt(task.id, attempt).catch((err: Error) => err);
    const keptNote = typeof kept === 'string' ? ` kept=${kept}` : '';
    this.log(
      { type: 'DISCARD', taskId: task.id, message: `worktree=${branchFor(task.id)} reason="${discardReason}"${keptNote}` },
      { type: 'ERROR', taskId: task.id, category, message: entry.reason },
    );
    this.taskEvents.fire({ taskId: task.id, kind: 'failed' });
    // Its commits could not be kept: the branch stays, and the next run's clean-up tries again.
    if (kept instanceof Error)
      this.log({
        type: 'WARN',
        taskId: task.id,
        message: `could not keep its commits (${kept.message.split('\n')[0]}); branch ${branchFor(task.id)} left in place`,
      });
    else this.removeWorktreeSoon(task.id, fence);
  }

  /**
   * Starts removing the task's worktree and branch, and returns: the result is recorded, the
   * slot is free. A new worktree for the same task waits for it (removalOf); the session's end
   * waits for all (worktreesRemoved). One that fails is a WARN line, and the next run's clean-up
   * removes what is left.
   */
  removeWorktreeSoon(taskId: string, fence?: AttemptFence): void {
    const removal: Promise<void> = this.removeWorktree(taskId, fence)
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
   * or one whose folder a person deleted) are the worktrees listed to find it. With `fence`, a
   * worktree that another attempt has made its own meanwhile (its owner mark) is left alone, and
   * so is the branch it has checked out.
   */
  async removeWorktree(taskId: string, fence?: AttemptFence): Promise<void> {
    // One removal of a task's worktree at a time: a later one starts after the one going.
    await this.removals.get(taskId);
    const branch = branchFor(taskId);
    const own = this.worktreePath(taskId);
    // Checked again as the removal happens, where no other worktree command can come between.
    const mayRemove = fence ? () => mayRemoveWorktree(own, fence) : undefined;
    const refused = () => {
      const owner = worktreeOwner(own);
      this.log({
        type: 'WARN',
        taskId,
        message: `worktree left alone: it belongs to the attempt of ${owner?.agentId ?? 'another agent'} now, not to ${fence!.agentId ?? 'this attempt'}`,
      });
    };
    if (mayRemove && !mayRemove()) return refused();
    if (existsSync(own) && !(await this.pool.give(own)) && !(await this.git.removeWorktree(own, { ...(mayRemove ? { mayRemove } : {}) })))
      return refused();
    if (await this.git.deleteBranch(branch)) return;
    const ref = `refs/heads/${branch}`;
    for (const w of await this.git.listWorktrees()) if (w.branch === ref) await this.git.removeWorktree(w.path);
    await this.git.deleteBranch(branch);
  }
}
