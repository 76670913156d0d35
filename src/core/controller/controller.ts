// The controller loop: session start, then batches of independent tasks run in
// parallel worktrees until a stopping condition, then the session's STATS. It runs in a
// `launchpad run` process; clients (VS Code, scripts) follow it through its event stream.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

import { StaleAttemptError } from '../attempt/lifecycle';
import { Emitter } from '../events';
import { localExecutor } from '../executor/local';
import type { AttemptExecutor, RunningAttempt } from '../executor/types';
import { rmdirIfEmpty } from '../fsQuiet';
import { Git } from '../git/git';
import { excludeArtefacts, initStateFiles } from '../init';
import { InputError } from '../inputError';
import { abortInterruptedRevert, IntegrationGate } from '../integration/gate';
import { acquireLock, type LockHandle, LockHeldError, tryAcquireLock } from '../lock';
import { type LogEntry, logTimestamp } from '../log/logLine';
import { tailLog } from '../log/logReader';
import { ProgressLog } from '../log/progressLog';
import { type Logger, silentLogger } from '../logger';
import { RunEventWriter } from '../runEvents/writer';
import { isOwnPath, type StatePaths } from '../statePaths';
import { TaskFileError } from '../taskFile/parse';
import type { Task, TaskFile } from '../taskFile/schema';
import { RUN_TRANSACTION_WAIT_MS, StateStore } from '../taskFile/store';
import { countTasks } from '../tasks/counts';
import { isPermanentlyFailed, waitsOnPeople } from '../tasks/dag';
import { computeStats, formatStats, type Stats } from '../tasks/stats';
import { ClaimLostError, ClaimRefusedError, TaskVanishedError, undoDispatch } from '../tasks/transitions';
import { holdMessage, resumedMessage, waitingMessage } from './budget';
import { CRASH_LOOP_LIMIT, crashesWithoutProgress } from './crashLoop';
import { classifyError, type EnvFailure, EnvFailureError } from './envFailure';
import { endUncharged, giveBackLostWorktree, refuseStale, releaseInterrupted, worktreeLost } from './envStop';
import { headlessTerminals } from './headlessTerminals';
import { runHealthCheck } from './healthCheck';
import { holdsTreeForAnswer, recoverInPlace, runInPlace, runsInPlace, untrackedOutsideOurs } from './inPlaceRun';
import { LoopInbox } from './loopEvents';
import type { TaskEnd } from './merge';
import { MergeQueue } from './mergeQueue';
import { notCharged, outcomeOf } from './outcome';
import { type PassInput, passStands, type PoolPass, poolPass, type RecordedPass, recordPass } from './poolPass';
import {
  abortInterruptedMerge,
  endOrphanedProcesses,
  logMissingCompletions,
  recoverInProgress,
  removeOrphanedWorktrees,
  type Resumption,
} from './recovery';
import { maxSessions, resolveRunConfig, type RunSettings } from './runConfig';
import { Session } from './session';
import { TaskDurations } from './taskDurations';
import { type ClaimedTask, type Resume } from './taskRun';
import { TaskStops } from './taskStops';
import type { RunOutcome, StopReason, TaskEvent, TerminalFactory } from './types';
import { DEFAULT_LEASE_SECONDS, mergeLockPath, Worker, workerIdFrom } from './workers';

export interface ControllerOptions {
  paths: StatePaths;
  settings?: RunSettings;
  terminals?: TerminalFactory;
  logger?: Logger;
  /** Every progress log line as it is written. */
  onLogLine?: (line: string, entry: LogEntry) => void;
  /** Every record of the run's event stream as it is written, a JSON line (`run --events`). */
  onEvent?: (line: string) => void;
  /** Who runs the attempts (default: this machine, through `terminals`). See executor/types.ts. */
  executor?: AttemptExecutor;
}

/** A run that cannot start: exit 2 with this message (nothing was changed). */
export class RunConfigError extends InputError {}

export class Controller {
  private session: Session | undefined;
  private stopRequested = false;
  private events: RunEventWriter | undefined;
  private readonly taskEvents = new Emitter<TaskEvent>();
  /** A task changed state (dispatched, validated, completed, failed, …). */
  readonly onDidChangeTask = this.taskEvents.event;

  constructor(private readonly opts: ControllerOptions) {}

  /** A person's stop: running agents end, their tasks stay in_progress for the next run. */
  stop(): void {
    this.events?.write({ type: 'stop', scope: 'run', now: false });
    this.stopRequested = true;
    this.session?.requestStop();
  }

  /**
   * The run is ending at once (a second Ctrl-C): its agents are being killed and no session end
   * follows. The stream's last record says so; the next run recovers the tasks.
   */
  abandon(): void {
    this.events?.write({ type: 'stop', scope: 'run', now: true });
    this.events?.end({ error: 'ended at once: the agents were killed; the next run recovers their tasks' });
    this.events?.close();
  }

  get running(): boolean {
    return this.session !== undefined;
  }

  async run(): Promise<RunOutcome> {
    const logger = this.opts.logger ?? silentLogger;
    const events = new RunEventWriter(this.opts.onEvent, logger);
    this.events = events;
    try {
      const outcome = await this.runWithEvents(events);
      events.end({ outcome });
      return outcome;
    } catch (err) {
      events.end({ error: err });
      throw err;
    } finally {
      events.close();
    }
  }

  private async runWithEvents(events: RunEventWriter): Promise<RunOutcome> {
    const { paths } = this.opts;
    const logger = this.opts.logger ?? silentLogger;
    const git = new Git(paths.root);
    const toplevel = await git.toplevel();
    if (!toplevel)
      throw new RunConfigError(
        `${paths.root} is not inside a git repository: launchpad merges each task's work with git; to make one: git init && git add -A && git commit -m "initial commit"`,
      );
    if (!(await git.head()))
      throw new RunConfigError(
        'the repository has no commits yet: commit once so worktrees have a base: git add -A && git commit -m "initial commit"',
      );
    const baseBranch = await git.currentBranch();
    if (!baseBranch) throw new RunConfigError('HEAD is detached: check out the branch the tasks should be merged into');
    if ((await git.run(['var', 'GIT_COMMITTER_IDENT'], { allowFail: true })).code !== 0) {
      throw new RunConfigError(
        'git has no identity for merge commits: set user.name and user.email (git config user.email you@example.com)',
      );
    }

    const store = new StateStore(paths, 'launchpad run', true, RUN_TRANSACTION_WAIT_MS);
    const env = this.opts.settings?.env ?? process.env;
    // Concurrent workers hold no session lock: a second run is one more worker, and each
    // transaction takes the state lock. A file that cannot be read yet is handled under the lock.
    const mode = peekMode(store);
    const concurrent = mode.concurrency === 'concurrent';
    const inPlace = this.opts.settings?.inPlace === true || mode.isolation === 'in-place';
    if (concurrent && inPlace) {
      throw new RunConfigError(
        'harness-tasks.json: in-place runs one task at a time in the main working tree, so it cannot be combined with session_config.concurrency_mode "concurrent" (concurrent workers need worktrees)',
      );
    }
    if (inPlace && mode.manualReview) {
      throw new RunConfigError(
        `harness-tasks.json: ${mode.manualReview} is "manual", but an in-place run commits each task on the checked-out branch, with nothing left to review before it lands: run in worktrees (no --in-place), or set review "auto"`,
      );
    }
    if (this.opts.executor && this.opts.executor !== localExecutor && (concurrent || inPlace)) {
      throw new RunConfigError(
        `the ${this.opts.executor.name} executor runs attempts in worktrees of other machines, with one controller: it cannot be combined with ${concurrent ? 'session_config.concurrency_mode "concurrent"' : 'in-place runs'}`,
      );
    }
    const lock: LockHandle | undefined = concurrent ? undefined : beforeSession(() => tryAcquireLock(paths.sessionLock, 'launchpad run'));
    const workerId = workerIdFrom(env);
    let worker: Worker | undefined;
    const cleanups: Array<() => void> = [];
    const progress = new ProgressLog(paths.progress, (line, entry) => {
      events.log(line, entry);
      this.opts.onLogLine?.(line, entry);
    });
    let session: number | undefined;
    try {
      // Another worker may be merging right now: its merge is not interrupted, nor its files dirty.
      const startChecks = async () => {
        const interrupted = await abortInterruptedMerge(git);
        const revert = await abortInterruptedRevert(git);
        const sub = relative(toplevel, paths.root);
        return { interrupted, revert, dirty: (await git.trackedChanges()).filter((f) => !isOwnPath(f, sub)) };
      };
      const {
        interrupted: interruptedMerge,
        revert: interruptedRevert,
        dirty,
      } = concurrent ? await underMergeLock(paths.artefacts, workerId, startChecks) : await startChecks();
      // An interrupted in-place attempt's changes are its own: the run resumes it.
      if (dirty.length && !(inPlace && mode.inPlaceInProgress)) {
        const shown = dirty.slice(0, 10).join(', ') + (dirty.length > 10 ? `, … (${dirty.length} files)` : '');
        throw new RunConfigError(
          `the main working tree has uncommitted changes to tracked files: ${shown}; commit or stash them first (nothing was changed)`,
        );
      }
      const untracked = inPlace && !mode.inPlaceInProgress ? await untrackedOutsideOurs(git, toplevel, paths.root) : [];
      if (untracked.length) {
        const shown = untracked.slice(0, 10).join(', ') + (untracked.length > 10 ? `, … (${untracked.length} files)` : '');
        throw new RunConfigError(
          `in place, an attempt's leftovers are committed and a failed attempt is cleaned away with git clean, so the main working tree must have no untracked files but Launchpad's own: ${shown}; commit, ignore or move them first (nothing was changed)`,
        );
      }

      if (!store.exists()) await initStateFiles(paths, { session: 1 });
      const recovered = store.recover();
      if (recovered.kind === 'unrecoverable') {
        const session = lastLoggedSession(paths.progress);
        progress.append(session, { type: 'ERROR', category: 'ENV_SETUP', message: recovered.logMessage });
        return this.outcome(2, 'state-unrecoverable', `${recovered.error.message}\n${recovered.detail}`, session, emptyStats());
      }

      const { file } = store.load();
      // A run writes the task file at its first dispatch: a file it may not write is refused now.
      store.assertWritable();
      const limit = maxSessions(this.opts.settings ?? {}, file);
      if (file.session_count >= limit) {
        const stats = computeStats(file.tasks);
        progress.append(
          file.session_count,
          { type: 'WARN', message: `max_sessions=${limit} reached: no new session started` },
          { type: 'STATS', message: formatStats(stats) },
        );
        return this.outcome(
          1,
          'max-sessions',
          `max_sessions (${limit}) reached; raise session_config.max_sessions to continue`,
          file.session_count,
          stats,
        );
      }

      // The session's number. session_count takes it only when the session dispatches something
      // (Session.count), so runs that find nothing to do do not use up max_sessions; concurrent
      // workers take theirs under the lock at once, so each gets a number of its own.
      const number = concurrent ? await store.transact((f) => (f.session_count += 1)) : file.session_count + 1;
      const config = resolveRunConfig(this.opts.settings ?? {}, file, paths, toplevel);
      events.startSession(paths, {
        session: number,
        base_branch: baseBranch,
        mode: concurrent ? 'concurrent' : inPlace ? 'in-place' : 'worktrees',
        worker: concurrent ? workerId : null,
      });
      // A person's stop of one task's agent (launchpad stop ID), for the attempts this session drives.
      const stops = new TaskStops(
        paths,
        (id) => this.session?.fenceOf(id)?.agentId ?? undefined,
        (taskId, agentId, taken) => {
          this.session?.log({
            type: 'WARN',
            taskId,
            message: taken
              ? `agent=${agentId} stopped by a person`
              : `stop requested for agent=${agentId} after it ended; the attempt goes on (validation, merge)`,
          });
          events.write({ type: 'stop', scope: 'task', task: taskId, agent: agentId, taken });
        },
      );
      const terminals = stops.terminals(this.opts.terminals ?? headlessTerminals());
      const s = new Session(number, { git, store, config, paths, logger, progress, toplevel, baseBranch, terminals });
      s.events = events;
      s.taskEvents.event((e) => {
        events.task(e);
        this.taskEvents.fire(e);
      });
      // Attempts on other machines (the queue's) run no agent here: a request for one is not taken.
      if (!this.opts.executor || this.opts.executor === localExecutor) {
        stops.start();
        cleanups.push(() => stops.close());
      }
      s.state.head = (await git.head())!;
      this.session = s;
      session = number;
      if (this.stopRequested) s.requestStop();
      s.inPlace = inPlace;
      s.gate = IntegrationGate.of(s);
      // A concurrent worker's number is in session_count already (taken above, under the lock).
      if (concurrent) s.state.counted = true;
      if (concurrent) {
        worker = new Worker(workerId, file.session_config.lease_seconds ?? DEFAULT_LEASE_SECONDS, () => s);
        s.worker = worker;
        worker.start();
      }

      s.log({
        type: 'LOCK',
        message: lock
          ? `acquired (pid=${process.pid})`
          : `concurrent worker=${workerId} (pid=${process.pid}): no session lock, the state lock per transaction`,
      });
      if (lock?.reclaimedFrom)
        s.log({ type: 'WARN', message: `Removed stale lock from pid=${lock.reclaimedFrom.pid} (${lock.reclaimedFrom.command})` });
      if (recovered.kind === 'restored') {
        s.log({
          type: 'RECOVERY',
          message: `action="restored harness-tasks.json from .bak" reason="${firstLine(recovered.error.message)}" kept=${recovered.corruptCopy}`,
        });
      }
      if (interruptedMerge) s.log({ type: 'ROLLBACK', message: `git merge --abort (interrupted: ${interruptedMerge})` });
      if (interruptedRevert)
        s.log({ type: 'ROLLBACK', category: 'INTEGRATION', message: `git revert --abort (interrupted: reverting "${interruptedRevert}")` });

      let reason: StopReason;
      try {
        writeFileSync(paths.activeMarker, '', { flag: 'a' });
        await excludeArtefacts(paths);
        reason = await this.runSession(s);
      } catch (err) {
        // Whatever went wrong, the session still ends properly: STATS, marker, lock.
        const machine = classifyError(err) ?? (err instanceof LockHeldError ? stuckLock(err) : undefined);
        if (machine) {
          s.log({ type: 'ERROR', category: 'ENV_SETUP', message: machine.cause });
          s.stopForEnvironment(machine);
        } else {
          logger.error(err instanceof Error ? err : String(err));
          s.log({
            type: 'ERROR',
            category: 'TASK_EXEC',
            message: `controller error, session stopped: ${firstLine(err instanceof Error ? err.message : String(err))}`,
          });
        }
        reason = 'controller-error';
      }
      return await this.endSession(s, reason);
    } catch (err) {
      throw asEnvFailureError(err);
    } finally {
      for (const c of cleanups) c();
      worker?.stop();
      this.session = undefined;
      releaseLock(lock, progress, session);
      // A refused run leaves no trace: the artefact folder goes if the lock was all it held.
      rmdirIfEmpty(paths.artefacts);
    }
  }

  private async runSession(s: Session): Promise<StopReason> {
    const worker = s.worker;
    if (worker) {
      // Other workers' processes and worktrees are live: only what this worker takes over is
      // recovered, through the same recovery as a session start's, after the health check.
      const merges = new MergeQueue((id, merge) => worker.mergeGuard(id, merge));
      if (!(await runHealthCheck(s))) return 'stopped';
      await openPool(s);
      return this.loop(s, merges);
    }
    endOrphanedProcesses(s);
    await logMissingCompletions(s);
    const merges = new MergeQueue();
    // In place, an interrupted attempt is resumed where it stopped; the rest recover as usual.
    const resumed = s.inPlace ? s.store.load().file.tasks.filter(runsInPlace) : [];
    // In place the interrupted attempt resumes at once: a crash loop is looked for before it.
    if (resumed.length && stopForCrashLoop(s)) return 'stopped';
    for (const task of resumed) await recoverInPlace(s, task).catch((err) => this.taskCrashed(s, task, err));
    const others = resumed.length
      ? new Set(
          s.store
            .load()
            .file.tasks.filter((t) => t.status === 'in_progress' && !runsInPlace(t))
            .map((t) => t.id),
        )
      : undefined;
    // Attempts an executor still runs elsewhere (a queue's jobs) are followed, not recovered.
    const adopted = (await this.opts.executor?.adopt?.(s, merges)) ?? [];
    const only = adopted.length ? withoutAdopted(s, others, adopted) : others;
    const resumptions = await recoverInProgress(s, merges, workerIdFrom(process.env), only);
    // Removals the recovery started in the background end before the clean-up looks for leftovers.
    await s.worktreesRemoved();
    if (s.stopping) return 'stopped';
    if (!resumed.length && stopForCrashLoop(s)) return 'stopped';
    await removeOrphanedWorktrees(s);
    if (!(await runHealthCheck(s))) return 'stopped';
    await openPool(s);
    return this.loop(s, merges, resumptions, adopted);
  }

  /** One attempt, run by the executor (this machine's processes unless one was given). */
  private attempt(s: Session, task: Task, merges: MergeQueue, resume?: Resume, claimed?: ClaimedTask): Promise<TaskEnd> {
    return (this.opts.executor ?? localExecutor).run(s, task, merges, resume, claimed);
  }

  /**
   * Batches until nothing runs and nothing can start, a limit is reached, or a stop. A pass
   * (poolPass.ts) marks dependency failures, orders the eligible pool and claims the batch in one
   * transaction: the loop's own, or the one that records a task's completion, whose claims the
   * loop dispatches when it wakes. A task's slot is free once its result is recorded.
   */
  private async loop(s: Session, merges: MergeQueue, resumptions: Resumption[] = [], adopted: RunningAttempt[] = []): Promise<StopReason> {
    const running = new Map<string, { task: Task; end: Promise<TaskEnd> }>();
    const reportedMissing = new Set<string>();
    const reportedHeld = new Set<string>();
    const durations = TaskDurations.fromHistory(s.paths, s.store.load().file.tasks);
    let dispatched = 0;
    const inbox = new LoopInbox();
    s.stopSignal.addEventListener('abort', () => inbox.post({ kind: 'stop' }), { once: true });
    if (s.stopping) inbox.post({ kind: 'stop' });
    // The base is checked before any merge lands (the merge queue's first job); agents start meanwhile.
    s.gate?.start(s, merges);
    // An attempt in flight: a slot taken until it ends, whichever way; its end wakes the loop.
    const track = (task: Task, end: Promise<TaskEnd>) => {
      const tracked = end.finally(() => {
        running.delete(task.id);
        inbox.post({ kind: 'attempt-ended', taskId: task.id });
      });
      running.set(task.id, { task, end: tracked });
    };
    // Interrupted attempts the recovery chose to resume go first, in the worktrees they left.
    if (resumptions.length && !s.config.agentCommand) {
      s.log({ type: 'ERROR', category: 'CONFIG', message: NO_AGENT_COMMAND });
      return 'config-error';
    }
    for (const { task, end } of adopted) {
      dispatched++;
      track(
        task,
        end.catch((err) => this.taskCrashed(s, task, err)),
      );
    }
    if (resumptions.length) {
      s.log({
        type: 'BATCH',
        message: `dispatching ${resumptions.length} resumed task${resumptions.length === 1 ? '' : 's'}: [${resumptions.map((r) => r.task.id).join(', ')}]`,
      });
      s.state.batches++;
    }
    for (const { task, resume } of resumptions) {
      dispatched++;
      track(
        task,
        this.attempt(s, task, merges, resume).catch((err) => this.taskCrashed(s, task, err)),
      );
    }

    // Passes run in tasks' completions (Session.afterResult), written, their batches not yet
    // dispatched (each posts 'pass-ready').
    const prepared: RecordedPass[] = [];
    // The last pass of a completion, while it stands for a pass of the loop's (passStands).
    let lastPass: RecordedPass | undefined;
    const passInput = (budget: number, hold: boolean, ending?: string): PassInput => ({
      running: [...[...running.values()].map((r) => r.task).filter((t) => t.id !== ending), ...prepared.flatMap((p) => p.pool.batch)],
      budget,
      hold,
      durations: durations.estimates,
    });
    const reportPass = (pool: PoolPass) => {
      for (const f of pool.overCost) {
        s.log({ type: 'ERROR', taskId: f.taskId, category: 'TASK_EXEC', message: f.reason });
        this.taskEvents.fire({ taskId: f.taskId, kind: 'failed' });
      }
      for (const f of pool.failures) {
        s.log({ type: 'ERROR', taskId: f.taskId, category: 'DEPENDENCY', message: f.reason });
        this.taskEvents.fire({ taskId: f.taskId, kind: 'failed' });
      }
      // Parallelism lost to shared files is said once per task and reason: the person can narrow files_hint.
      for (const h of pool.heldBack) {
        if (reportedHeld.has(`${h.id} ${h.reason}`)) continue;
        reportedHeld.add(`${h.id} ${h.reason}`);
        s.log({ type: 'WARN', taskId: h.id, message: `waits although a slot is free: ${h.reason}` });
      }
      // Nothing failed: the task waits for a person to give it a validation command. Said once per session.
      for (const t of pool.missing) {
        if (reportedMissing.has(t.id)) continue;
        reportedMissing.add(t.id);
        s.log({
          type: 'WARN',
          taskId: t.id,
          message: `not started: no validation command to prove it done (launchpad edit ${t.id} --validate "CMD")`,
        });
      }
    };
    const dispatchBatch = ({ batch, claims }: PoolPass) => {
      if (!batch.length) return;
      // The pool's transaction counted the session (session_count).
      s.state.counted = true;
      s.log({
        type: 'BATCH',
        message: `dispatching ${batch.length} task${batch.length === 1 ? '' : 's'}: [${batch.map((t) => t.id).join(', ')}]`,
      });
      s.state.batches++;
      batch.forEach((task, i) => {
        const claimed = claims[i];
        dispatched++;
        durations.dispatched(task.id);
        const end = (s.inPlace ? runInPlace(s, task) : this.attempt(s, task, merges, undefined, claimed))
          .catch((err) => this.taskCrashed(s, task, err))
          .then(async (how) => {
            // Stopped because of the machine's failure elsewhere: not this task's failure either.
            if (how === 'interrupted' && s.envFailure) await releaseInterrupted(s, task).catch((err) => s.logger.warn(String(err)));
            // From its dispatch to its recorded result: what the pool's order weighs it by next.
            if (how !== 'interrupted') durations.ended(task.id);
            return how;
          });
        track(task, end);
      });
    };
    // Nothing runs and no claim waits to be dispatched: the loop may end.
    const idle = () => !running.size && !prepared.length;
    // A stop before the loop dispatched what a completion's pass claimed: those claims are undone.
    const undoPrepared = async () => {
      const claims = prepared.splice(0).flatMap((p) => p.pool.claims);
      if (!claims.length) return;
      await s
        .transact((file) => {
          for (const c of claims) undoDispatch(file, c.before.id, c.before);
        })
        .catch((err: Error) => s.logger.warn(`could not undo the claims of ${claims.map((c) => c.before.id).join(', ')}: ${err.message}`));
    };
    // Concurrent workers refresh the base and take over lapsed claims before each pass, and in
    // place runInPlace claims its task itself: their passes stay in the loop.
    if (!s.worker && !s.inPlace)
      s.afterResult = (file, taskId) => {
        if (s.stopping) return undefined;
        durations.ended(taskId);
        const claimed = prepared.reduce((n, p) => n + p.pool.batch.length, 0);
        const budget = s.config.maxTasksPerSession - dispatched - claimed;
        const input = passInput(budget, !!s.spending.hold, taskId);
        const pass = recordPass(poolPass(s, file, input), s.transactionMark, input, taskId);
        return {
          written: () => {
            prepared.push(pass);
            inbox.post({ kind: 'pass-ready' });
          },
          next: pass.pool.next,
        };
      };

    try {
      for (;;) {
        if (s.stopping) {
          await undoPrepared();
          break;
        }
        if (s.worker) {
          const ends = await s.worker.takeOverLapsed(new Set(running.keys()), async (id): Promise<TaskEnd> => {
            // A lapsed attempt without a verdict is resumed here, by this worker.
            const [resumption] = await recoverInProgress(s, merges, s.worker!.workerId, new Set([id]));
            return resumption ? this.attempt(s, resumption.task, merges, resumption.resume) : 'completed';
          });
          for (const [id, end] of ends) {
            const task = s.store.load().file.tasks.find((t) => t.id === id);
            if (task)
              track(
                task,
                end.catch((err) => this.taskCrashed(s, task, err)),
              );
          }
          // Other workers merge too: new worktrees start from the base branch as it is now.
          s.state.head = (await s.git.head()) ?? s.state.head;
        }
        // A reached budget_usd or a tool's usage limit: no new agent starts; running ones finish.
        const hold = s.spending.hold;
        // What the passes of tasks' completions claimed is dispatched first; the last of them is
        // this wake-up's pass while it stands (passStands), also when the loop wakes again for
        // the end of the task whose completion ran it.
        const early = prepared.splice(0);
        for (const p of early) reportPass(p.pool);
        for (const p of early) dispatchBatch(p.pool);
        lastPass = early.at(-1) ?? lastPass;
        const current = lastPass && passStands(s, lastPass, running.keys()) ? lastPass : undefined;
        lastPass = current;
        const budget = current ? current.budget : s.config.maxTasksPerSession - dispatched;
        const pool = current ? current.pool : await s.transact((file) => poolPass(s, file, passInput(budget, !!hold)));
        if (!current) reportPass(pool);
        if (pool.noAgent) {
          s.log({ type: 'ERROR', category: 'CONFIG', message: NO_AGENT_COMMAND });
          if (idle()) return 'config-error';
        }
        if (!current) dispatchBatch(pool);
        // The first batch has its own worktrees made first; later ones take from the pool.
        s.pool.fill();
        if (hold && idle()) {
          if (hold === 'budget' || !s.config.waitOnLimit) return hold;
          const pause = s.spending.pause!;
          s.log({ type: 'WARN', message: waitingMessage(pause) });
          if (!(await s.spending.waitForResume(s.stopSignal))) break;
          s.log({ type: 'WARN', message: resumedMessage(pause) });
          // In place, an attempt the limit paused holds the working tree: it resumes before anything new starts.
          if (s.inPlace)
            for (const task of s.store.load().file.tasks.filter(runsInPlace))
              await recoverInPlace(s, task).catch((err) => this.taskCrashed(s, task, err));
          continue;
        }
        // A concurrent worker waits while others hold tasks: their ends free dependents, and a
        // claim that lapses is this worker's to recover. A failed task waiting for its back-off
        // wakes the loop up too.
        const othersWorking = pool.elsewhere > 0 && budget > 0 && !hold;
        const waitForRetry = budget > 0 && !hold && pool.retryAt !== undefined;
        if (idle() && !othersWorking && !waitForRetry) {
          // Merges not checked yet are checked before the run ends; a requeued task runs again.
          if (s.gate && (await s.gate.beforeIdle(s, merges))) continue;
          if (pool.allCompleted) return 'all-completed';
          return budget <= 0 && pool.eligible ? 'max-tasks-per-session' : 'nothing-runnable';
        }
        if (idle() && waitForRetry) {
          const at = new Date(pool.retryAt!).toISOString().replace(/\.\d{3}Z$/, 'Z');
          s.logger.info(`waiting until ${at} to retry a failed task (or until ${s.baseBranch} moves)`);
        }
        if (waitForRetry) inbox.after(pool.retryAt! - Date.now(), { kind: 'retry-due' });
        if (s.worker) inbox.after(Math.min(2000, (s.worker.leaseSeconds * 1000) / 3), { kind: 'poll' });
        await inbox.next();
        inbox.clearTimers();
      }
      await Promise.allSettled([...running.values()].map((r) => r.end));
      await undoPrepared();
      return 'stopped';
    } finally {
      inbox.clearTimers();
      s.afterResult = undefined;
    }
  }

  /** An unexpected error inside one task's run: record it on the task, or stop if we cannot. */
  private async taskCrashed(s: Session, task: Task, err: unknown): Promise<TaskEnd> {
    // Not the task's failure (the machine's, or its configuration): nothing is charged.
    try {
      const uncharged = endUncharged(s, task, err);
      if (uncharged) return await uncharged;
    } catch (second) {
      // Recording that failed too (the task file became unusable, the disk is full): that is
      // what stops the session now.
      s.logger.error(second instanceof Error ? second : String(second));
      const machine = classifyError(second) ?? classifyError(err);
      if (machine) {
        s.stopForEnvironment(machine);
        return 'interrupted';
      }
      err = second;
    }
    if (err instanceof TaskVanishedError) {
      s.log({
        type: 'WARN',
        taskId: task.id,
        message: 'the task was removed from harness-tasks.json while it ran; its worktree was discarded',
      });
      await s.discardWorktree(task.id, task.attempts + 1).catch(() => undefined);
      return 'failed';
    }
    if (err instanceof ClaimRefusedError) return 'interrupted';
    if (err instanceof ClaimLostError || err instanceof StaleAttemptError) return refuseStale(s, task.id, err);
    // A git command that failed because the worktree went from under it: not the task's failure.
    if (!s.inPlace && worktreeLost(s.worktreePath(task.id), s.fenceOf(task.id))) {
      return giveBackLostWorktree(s, task, s.worktreePath(task.id)).catch(() => 'interrupted' as const);
    }
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof LockHeldError) {
      s.stopForEnvironment(stuckLock(err));
      return 'interrupted';
    }
    if (err instanceof TaskFileError) {
      s.log({
        type: 'ERROR',
        taskId: task.id,
        category: 'CONFIG',
        message: `cannot update harness-tasks.json, stopping: ${firstLine(message)}`,
      });
      s.stopFor({ kind: 'config', message });
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
    await s.gate?.settled();
    await s.worktreesRemoved();
    // Preparations of the pool's worktrees end too (at once when stopped: they are redone later);
    // its new worktrees not begun are left to the next session.
    s.pool.close();
    await s.pool.settled();
    let file: TaskFile;
    try {
      file = await s.transact((f) => {
        if (s.state.counted) f.last_session = logTimestamp();
        return structuredClone(f);
      });
    } catch {
      file = s.store.load().file;
    }
    const stats = computeStats(file.tasks);
    const cause = s.state.stopCause;
    const failure = cause?.kind === 'environment' || cause?.kind === 'crash-loop' ? cause.failure : undefined;
    const unrecorded = [...s.state.envUnrecorded];
    if (failure)
      s.log({
        type: 'ERROR',
        category: 'ENV_SETUP',
        message: `session stopped (${notCharged(unrecorded)}). To fix: ${failure.advice}; then run again`,
      });
    s.log({ type: 'STATS', message: formatStats(stats, { batches_dispatched: s.state.batches }) });
    const workLeft = file.tasks.some((t) => t.status !== 'completed' && !isPermanentlyFailed(t));
    try {
      if (workLeft) writeFileSync(s.paths.activeMarker, '', { flag: 'a' });
      else if (existsSync(s.paths.activeMarker)) rmSync(s.paths.activeMarker);
    } catch (err) {
      s.logger.warn(`could not update ${s.paths.activeMarker}: ${(err as Error).message}`);
    }
    rmdirIfEmpty(s.config.worktreeRoot);

    const hold = reason === 'budget' || reason === 'usage-limit' ? holdMessage(s, reason) : undefined;
    const counts = countTasks(file.tasks, { live: false, now: Date.now() });
    // In place, a question holds the tree: the rest waits on its answer too.
    const people =
      waitsOnPeople(file.tasks) || (s.inPlace && file.tasks.some((t) => t.status === 'awaiting_answer' && holdsTreeForAnswer(t)));
    const awaitingAnswers = people ? file.tasks.filter((t) => t.status === 'awaiting_answer').map((t) => t.id) : [];
    const awaitingReviews = people ? file.tasks.filter((t) => t.status === 'awaiting_review').map((t) => t.id) : [];
    const end = outcomeOf({ reason, cause, counts, costUsd: stats.cost_usd, unrecorded, hold, awaitingAnswers, awaitingReviews });
    return { ...end, session: s.number, stats, ...(s.state.notes.length ? { notes: [...s.state.notes] } : {}) };
  }

  private outcome(exitCode: RunOutcome['exitCode'], reason: StopReason, message: string, session: number, stats: Stats): RunOutcome {
    return { exitCode, reason, message, session, stats };
  }
}

const NO_AGENT_COMMAND = 'No agent command: pass --agent, set LAUNCHPAD_AGENT, launchpad.agent.command or session_config.agent_command';

/**
 * The sessions before this one kept ending in a crash with no task making progress: the session
 * stops before dispatching anything (the interrupted tasks stay in progress, uncharged).
 */
function stopForCrashLoop(s: Session): boolean {
  const crashed = crashesWithoutProgress(s.paths.progress);
  if (crashed.length < CRASH_LOOP_LIMIT) return false;
  const sessions = crashed
    .reverse()
    .map((n) => `SESSION-${n}`)
    .join(', ');
  const failure: EnvFailure = {
    category: 'ENV_SETUP',
    cause: `the last ${crashed.length} sessions (${sessions}) each ended in a crash (the controller killed, or the machine stopped) with no task making progress; stopping so that a crash loop does not go on`,
    advice:
      'find why launchpad run dies (out of memory: dmesg | grep -i oom; a supervisor or a time limit killing it); the interrupted tasks stay in progress, not charged, and the next run resumes them',
  };
  s.log({ type: 'ERROR', category: 'ENV_SETUP', message: failure.cause });
  s.stopFor({ kind: 'crash-loop', failure });
  return true;
}

/** The in-progress tasks recovery handles: all (or `only`) but those an executor follows. */
function withoutAdopted(s: Session, only: ReadonlySet<string> | undefined, adopted: readonly RunningAttempt[]): Set<string> {
  const followed = new Set(adopted.map((a) => a.task.id));
  return new Set(
    s.store
      .load()
      .file.tasks.filter((t) => t.status === 'in_progress' && !followed.has(t.id) && (!only || only.has(t.id)))
      .map((t) => t.id),
  );
}

/** The run's modes, read before any lock: an unreadable file is left to the locked start. */
function peekMode(store: StateStore): {
  concurrency?: string | undefined;
  isolation?: string | null | undefined;
  inPlaceInProgress?: boolean;
  /** Where review "manual" is set: session_config, or the first task that sets it. */
  manualReview?: string | undefined;
} {
  try {
    if (!store.exists()) return {};
    const { file } = store.load();
    const cfg = file.session_config;
    const reviewed = file.tasks.find((t) => t.review === 'manual' && t.status !== 'completed');
    const manualReview = cfg.review === 'manual' ? 'session_config.review' : reviewed ? `task ${reviewed.id}'s review` : undefined;
    return { concurrency: cfg.concurrency_mode, isolation: cfg.isolation, inPlaceInProgress: file.tasks.some(runsInPlace), manualReview };
  } catch {
    return {};
  }
}

async function underMergeLock<T>(artefacts: string, workerId: string, work: () => Promise<T>): Promise<T> {
  const lock = await acquireLock(mergeLockPath(artefacts), `launchpad run (worker ${workerId} starting)`, 30 * 60_000);
  try {
    return await work();
  } finally {
    lock.release();
  }
}

function releaseLock(lock: LockHandle | undefined, progress: ProgressLog, session: number | undefined): void {
  try {
    if (session !== undefined) progress.append(session, { type: 'LOCK', message: lock ? 'released' : 'worker done' });
  } catch {
    // The log cannot be written (the session already said why): the lock goes all the same.
  } finally {
    lock?.release();
  }
}

/**
 * A step before the session exists (the lock, the first writes of the state files): the
 * machine's failure there ends the run with its cause and what to do (exit 2), not a stack trace.
 */
function beforeSession<T>(step: () => T): T {
  try {
    return step();
  } catch (err) {
    throw asEnvFailureError(err);
  }
}

function asEnvFailureError(err: unknown): unknown {
  if (err instanceof EnvFailureError) return err;
  const machine = classifyError(err);
  return machine ? new EnvFailureError(machine) : err;
}

function lastLoggedSession(file: string): number {
  const m = /\[SESSION-(\d+)\]/.exec(tailLog(file, 1)[0] ?? '');
  return m ? Number(m[1]) : 0;
}

/** The state lock held for longer than a run waits for it: a stuck holder, the machine's failure. */
function stuckLock(err: LockHeldError): EnvFailure {
  return {
    category: 'ENV_SETUP',
    cause: `harness-tasks.json could not be updated: ${firstLine(err.message)}`,
    advice: `if that command is stuck, stop it (or remove ${err.lockDir} when no launchpad command runs)`,
  };
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.replace(/"/g, "'");
}

function emptyStats(): Stats {
  return { tasks_total: 0, completed: 0, failed: 0, in_batch: 0, pending: 0, blocked: 0, attempts_total: 0, checkpoints: 0 };
}

/** The worktree pool, at the session's start (not in place: no worktree is made there). */
async function openPool(s: Session): Promise<void> {
  if (!s.inPlace) await s.pool.open();
}
