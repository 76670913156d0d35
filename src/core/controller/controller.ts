// The controller loop (seed 000): session start, then batches of independent tasks run in
// parallel worktrees until a stopping condition, then the session's STATS. One core for both
// front ends; what differs between them is the TerminalFactory.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { relative } from 'node:path';
import { eligibleTasks, isPermanentlyFailed, selectBatch, tasksMissingValidation } from '../tasks/dag';
import { Emitter } from '../events';
import { rmdirIfEmpty } from '../fsQuiet';
import { Git } from '../git/git';
import { excludeArtefacts, initHarness } from '../init';
import { tryAcquireLock, type LockHandle } from '../lock';
import { logTimestamp, type LogEntry } from '../log/logLine';
import { silentLogger, type Logger } from '../logger';
import { tailLog } from '../log/logReader';
import { ProgressLog } from '../log/progressLog';
import { STATE_FILE_NAMES, type StatePaths } from '../statePaths';
import { computeStats, formatStats, type Stats } from '../tasks/stats';
import { markDependencyFailures, TaskVanishedError } from '../tasks/transitions';
import { StateStore } from '../taskFile/store';
import type { Task, TaskFile } from '../taskFile/schema';
import { InputError } from '../inputError';
import { TaskFileError } from '../taskFile/parse';
import { LockHeldError } from '../lock';
import { runHealthCheck } from './healthCheck';
import { headlessTerminals } from './headlessTerminals';
import type { TaskEnd } from './merge';
import { MergeQueue } from './mergeQueue';
import { abortInterruptedMerge, endOrphanedProcesses, recoverInProgress, removeOrphanedWorktrees } from './recovery';
import { resolveRunConfig, type RunSettings } from './runConfig';
import { Session } from './session';
import { TaskDurations } from './taskDurations';
import { claimTask, runTask } from './taskRun';
import type { RunOutcome, StopReason, TaskEvent, TerminalFactory } from './types';

export interface ControllerOptions {
  paths: StatePaths;
  settings?: RunSettings;
  terminals?: TerminalFactory;
  logger?: Logger;
  /** Every progress log line as it is written. */
  onLogLine?: (line: string, entry: LogEntry) => void;
}

/** A run that cannot start: exit 2 with this message (nothing was changed). */
export class RunConfigError extends InputError {}

export class Controller {
  private session: Session | undefined;
  private stopRequested = false;
  private readonly taskEvents = new Emitter<TaskEvent>();
  /** A task changed state (dispatched, validated, completed, failed, …). */
  readonly onDidChangeTask = this.taskEvents.event;

  constructor(private readonly opts: ControllerOptions) {}

  /** A person's stop: running agents end, their tasks stay in_progress for the next run. */
  stop(): void {
    this.stopRequested = true;
    this.session?.requestStop();
  }

  get running(): boolean {
    return this.session !== undefined;
  }

  async run(): Promise<RunOutcome> {
    const { paths } = this.opts;
    const logger = this.opts.logger ?? silentLogger;
    const git = new Git(paths.root);
    const toplevel = await git.toplevel();
    if (!toplevel) throw new RunConfigError(`${paths.root} is not inside a git repository: launchpad merges each task's work with git`);
    if (!(await git.head())) throw new RunConfigError('the repository has no commits yet: commit once so worktrees have a base');
    const baseBranch = await git.currentBranch();
    if (!baseBranch) throw new RunConfigError('HEAD is detached: check out the branch the tasks should be merged into');
    if ((await git.run(['var', 'GIT_COMMITTER_IDENT'], { allowFail: true })).code !== 0) {
      throw new RunConfigError('git has no identity for merge commits: set user.name and user.email (git config user.email you@example.com)');
    }

    const lock = tryAcquireLock(paths.sessionLock, 'launchpad run');
    const store = new StateStore(paths, 'launchpad run');
    const progress = new ProgressLog(paths.progress, this.opts.onLogLine);
    let session: number | undefined;
    try {
      const interruptedMerge = await abortInterruptedMerge(git);
      const sub = relative(toplevel, paths.root).split('\\').join('/');
      const ours = new Set(STATE_FILE_NAMES.map((f) => (sub ? `${sub}/${f}` : f)));
      const dirty = (await git.trackedChanges()).filter((f) => !ours.has(f));
      if (dirty.length) {
        const shown = dirty.slice(0, 10).join(', ') + (dirty.length > 10 ? `, … (${dirty.length} files)` : '');
        throw new RunConfigError(`the main working tree has uncommitted changes to tracked files: ${shown}; commit or stash them first (nothing was changed)`);
      }

      if (!store.exists()) await initHarness(paths, { session: 1 });
      const recovered = store.recover();
      if (recovered.kind === 'unrecoverable') {
        const session = lastLoggedSession(paths.progress);
        progress.append(session, { type: 'ERROR', category: 'ENV_SETUP', message: recovered.logMessage });
        return this.outcome(2, 'state-unrecoverable', `${recovered.error.message}\n${recovered.detail}`, session, emptyStats());
      }

      const { file } = store.load();
      if (file.session_count >= file.session_config.max_sessions) {
        const stats = computeStats(file.tasks);
        progress.append(
          file.session_count,
          { type: 'WARN', message: `max_sessions=${file.session_config.max_sessions} reached: no new session started` },
          { type: 'STATS', message: formatStats(stats) },
        );
        return this.outcome(1, 'max-sessions', `max_sessions (${file.session_config.max_sessions}) reached; raise session_config.max_sessions to continue`, file.session_count, stats);
      }

      const number = file.session_count + 1;
      await store.transact((f) => void (f.session_count = number));
      const config = resolveRunConfig(this.opts.settings ?? {}, file, paths, toplevel);
      const terminals = this.opts.terminals ?? headlessTerminals();
      const s = new Session(number, { git, store, config, paths, logger, progress, toplevel, baseBranch, terminals });
      s.taskEvents.event((e) => this.taskEvents.fire(e));
      s.head = (await git.head())!;
      this.session = s;
      session = number;
      if (this.stopRequested) s.requestStop();

      s.log({ type: 'LOCK', message: `acquired (pid=${process.pid})` });
      if (lock.reclaimedFrom) s.log({ type: 'WARN', message: `Removed stale lock from pid=${lock.reclaimedFrom.pid} (${lock.reclaimedFrom.command})` });
      if (recovered.kind === 'restored') {
        s.log({
          type: 'RECOVERY',
          message: `action="restored harness-tasks.json from .bak" reason="${firstLine(recovered.error.message)}" kept=${recovered.corruptCopy}`,
        });
      }
      if (interruptedMerge) s.log({ type: 'ROLLBACK', message: `git merge --abort (interrupted: ${interruptedMerge})` });
      writeFileSync(paths.activeMarker, '', { flag: 'a' });
      await excludeArtefacts(paths);

      let reason: StopReason;
      try {
        reason = await this.runSession(s);
      } catch (err) {
        // Whatever went wrong, the session still ends properly: STATS, marker, lock.
        logger.error(err instanceof Error ? err : String(err));
        s.log({ type: 'ERROR', category: 'TASK_EXEC', message: `controller error, session stopped: ${firstLine(err instanceof Error ? err.message : String(err))}` });
        reason = 'controller-error';
      }
      return await this.endSession(s, reason);
    } finally {
      this.session = undefined;
      releaseLock(lock, progress, session);
      // A refused run leaves no trace: the artefact folder goes if the lock was all it held.
      rmdirIfEmpty(paths.artefacts);
    }
  }

  private async runSession(s: Session): Promise<StopReason> {
    endOrphanedProcesses(s);
    const merges = new MergeQueue();
    await recoverInProgress(s, merges, process.env.HARNESS_WORKER_ID ?? `${hostname()}:${process.pid}`);
    await s.worktreesRemoved();
    if (s.stopping) return 'stopped';
    await removeOrphanedWorktrees(s);
    if (!(await runHealthCheck(s))) return s.stopping ? 'stopped' : 'env-setup-failed';
    return this.loop(s, merges);
  }

  /**
   * Batches until nothing runs and nothing can start, a limit is reached, or a stop. One
   * transaction per pass marks dependency failures, orders the eligible pool and claims the
   * batch; a task's slot is free once its result is recorded.
   */
  private async loop(s: Session, merges: MergeQueue): Promise<StopReason> {
    const running = new Map<string, { task: Task; end: Promise<TaskEnd> }>();
    const reportedMissing = new Set<string>();
    const durations = TaskDurations.fromHistory(s.paths, s.store.load().file.tasks);
    let dispatched = 0;
    let stopWake: () => void = () => undefined;
    const stopped = new Promise<void>((resolve) => (stopWake = resolve));
    s.stopSignal.addEventListener('abort', () => stopWake(), { once: true });

    for (;;) {
      if (s.stopping) break;
      const budget = s.config.maxTasksPerSession - dispatched;
      const pool = await s.transact((file) => {
        const failures = markDependencyFailures(file);
        const eligible = eligibleTasks(file.tasks, { durations: durations.estimates }).filter((t) => !running.has(t.id));
        const missing = tasksMissingValidation(file.tasks);
        const allCompleted = file.tasks.every((t) => t.status === 'completed');
        const batch = budget > 0 ? selectBatchFor(eligible, running, s.config.maxParallel).slice(0, budget) : [];
        const claims = s.config.agentCommand ? batch.map((task) => claimTask(s, file, task.id)) : [];
        return { failures, eligible: eligible.length, missing, allCompleted, noAgent: batch.length > 0 && !s.config.agentCommand, claims };
      });
      for (const f of pool.failures) {
        s.log({ type: 'ERROR', taskId: f.taskId, category: 'DEPENDENCY', message: f.reason });
        this.taskEvents.fire({ taskId: f.taskId, kind: 'failed' });
      }
      for (const t of pool.missing) {
        if (reportedMissing.has(t.id)) continue;
        reportedMissing.add(t.id);
        s.log({ type: 'ERROR', taskId: t.id, category: 'CONFIG', message: 'Missing validation.command' });
      }

      if (pool.noAgent) {
        s.log({ type: 'ERROR', category: 'CONFIG', message: 'No agent command: pass --agent, set LAUNCHPAD_AGENT, launchpad.agent.command or session_config.agent_command' });
        if (!running.size) return 'config-error';
      }
      if (pool.claims.length) {
        // Each task as it was before its dispatch, as runTask takes it.
        const batch = pool.claims.map((c) => c.before);
        s.log({ type: 'BATCH', message: `dispatching ${batch.length} task${batch.length === 1 ? '' : 's'}: [${batch.map((t) => t.id).join(', ')}]` });
        s.batches++;
        for (const claimed of pool.claims) {
          const task = claimed.before;
          dispatched++;
          durations.dispatched(task.id);
          const end = runTask(s, task, merges, claimed)
            .catch((err) => this.taskCrashed(s, task, err))
            .then((how) => {
              if (how !== 'interrupted') durations.ended(task.id);
              return how;
            })
            .finally(() => running.delete(task.id));
          running.set(task.id, { task, end });
        }
      }
      if (!running.size) {
        if (pool.allCompleted) return 'all-completed';
        return budget <= 0 && pool.eligible ? 'max-tasks-per-session' : 'nothing-runnable';
      }
      await Promise.race([stopped, ...[...running.values()].map((r) => r.end)]);
    }
    await Promise.allSettled([...running.values()].map((r) => r.end));
    return 'stopped';
  }

  /** An unexpected error inside one task's run: record it on the task, or stop if we cannot. */
  private async taskCrashed(s: Session, task: Task, err: unknown): Promise<TaskEnd> {
    if (err instanceof TaskVanishedError) {
      s.log({ type: 'WARN', taskId: task.id, message: 'the task was removed from harness-tasks.json while it ran; its worktree was discarded' });
      await s.removeWorktree(task.id).catch(() => undefined);
      return 'failed';
    }
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof TaskFileError || err instanceof LockHeldError) {
      s.log({ type: 'ERROR', taskId: task.id, category: 'CONFIG', message: `cannot update harness-tasks.json, stopping: ${firstLine(message)}` });
      s.requestStop();
      return 'interrupted';
    }
    s.logger.error(err instanceof Error ? err : message);
    try {
      await s.failTask(task, 'TASK_EXEC', `controller error: ${firstLine(message)}`, undefined, 'controller error');
      return 'failed';
    } catch {
      s.requestStop();
      return 'interrupted';
    }
  }

  private async endSession(s: Session, reason: StopReason): Promise<RunOutcome> {
    await s.worktreesRemoved();
    let file: TaskFile;
    try {
      file = await s.transact((f) => {
        f.last_session = logTimestamp();
        return structuredClone(f);
      });
    } catch {
      file = s.store.load().file;
    }
    const stats = computeStats(file.tasks);
    s.log({ type: 'STATS', message: formatStats(stats, { batches_dispatched: s.batches }) });
    const workLeft = file.tasks.some((t) => t.status !== 'completed' && !isPermanentlyFailed(t));
    if (workLeft) writeFileSync(s.paths.activeMarker, '', { flag: 'a' });
    else if (existsSync(s.paths.activeMarker)) rmSync(s.paths.activeMarker);

    const exit = reason === 'config-error' ? 2 : stats.completed === stats.tasks_total ? 0 : 1;
    return this.outcome(exit, exit === 0 ? 'all-completed' : reason, describe(exit === 0 ? 'all-completed' : reason, stats), s.number, stats);
  }

  private outcome(exitCode: 0 | 1 | 2, reason: StopReason, message: string, session: number, stats: Stats): RunOutcome {
    return { exitCode, reason, message, session, stats };
  }
}

function selectBatchFor(eligible: Task[], running: Map<string, { task: Task }>, maxParallel: number): Task[] {
  return selectBatch(eligible, [...running.values()].map((r) => r.task), maxParallel);
}

function describe(reason: StopReason, st: Stats): string {
  const left = `${st.completed}/${st.tasks_total} completed, ${st.failed} failed, ${st.blocked} blocked, ${st.pending} pending, ${st.in_batch} in progress`;
  switch (reason) {
    case 'all-completed':
      return st.tasks_total ? `all ${st.tasks_total} tasks completed` : 'no tasks yet: add some with "launchpad add"';
    case 'nothing-runnable':
      return `stopped: nothing left that can run (${left})`;
    case 'max-tasks-per-session':
      return `stopped: max_tasks_per_session reached (${left}); run again to continue`;
    case 'stopped':
      return `stopped by request (${left}); the next run recovers tasks in progress`;
    case 'env-setup-failed':
      return `stopped: harness-init.sh failed twice (${left})`;
    case 'config-error':
      return `stopped: configuration error, see the log (${left})`;
    case 'controller-error':
      return `stopped: controller error, see the log and the Launchpad output (${left})`;
    default:
      return `stopped: ${reason} (${left})`;
  }
}

function releaseLock(lock: LockHandle, progress: ProgressLog, session: number | undefined): void {
  if (session !== undefined) progress.append(session, { type: 'LOCK', message: 'released' });
  lock.release();
}


function lastLoggedSession(file: string): number {
  const m = /\[SESSION-(\d+)\]/.exec(tailLog(file, 1)[0] ?? '');
  return m ? Number(m[1]) : 0;
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.replace(/"/g, "'");
}

function emptyStats(): Stats {
  return { tasks_total: 0, completed: 0, failed: 0, in_batch: 0, pending: 0, blocked: 0, attempts_total: 0 };
}
