// The queue executor: the controller's side of workers on other machines. The controller stays
// the single writer of harness-tasks.json, the log and the base branch: it dispatches (a
// transition, as for a local attempt), publishes the attempt as a BullMQ job, follows its progress
// (who runs it: claimed_by; its checkpoints), and when a result comes back accepts it only for the
// attempt it expects (the task's agent id: fencing), fetches the attempt's commits from the shared
// remote into harness-<id>, and ends it the way a local attempt ends: discarded, or merged here
// through the merge queue once the controller's own run of the validation passed (a worker's
// pass is a claim, never proof).
// The queue's own faults are never the task's. An attempt is counted once, when it is dispatched;
// a job that vanished (Redis restarted without its data, or the controller died before publishing
// it) is published again for the same attempt, and the worker continues from the work pushed at
// the agent's last checkpoint. A job that failed on every try (its workers' fault), or Redis
// unreachable for `outageMs`, stops the run (ENV_SETUP, exit 2) with the attempt left in progress:
// the next run follows its job, or publishes it again.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

import { checkpoint } from '../controller/agentRun';
import { chargedOverloadMessage, stopForLimit } from '../controller/budget';
import { discardAttempt } from '../controller/discard';
import { type EnvFailure, EnvFailureError } from '../controller/envFailure';
import { endUncharged, stopForEnvironment } from '../controller/envStop';
import { mergeTask, type TaskEnd } from '../controller/merge';
import type { MergeQueue } from '../controller/mergeQueue';
import { prepareWorktree } from '../controller/prepare';
import { buildPrompt } from '../controller/prompt';
import { protectedPathsOf } from '../controller/protectedPaths';
import type { Session } from '../controller/session';
import {
  awaitAnswer,
  type ClaimedTask,
  claimTask,
  continuationText,
  continuedResume,
  continuesAfter,
  inspectWork,
  type Resume,
  runTask,
} from '../controller/taskRun';
import type { TaskTerminal } from '../controller/types';
import { validateTask } from '../controller/validate';
import { type AttemptExecutor, QUEUE_RUNNER, type RunningAttempt, runsOnQueue } from '../executor/types';
import { branchFor } from '../ids';
import type { AttemptPaths } from '../statePaths';
import { DEFAULT_VALIDATION_TIMEOUT_S, type Task } from '../taskFile/schema';
import { recordCost, recordQueueRunner, resumeTask, reviewDecision, undoDispatch } from '../tasks/transitions';
import { connectionFor, type LeaseTimes, loadBullmq, pollMs, raceStop, withinMs } from './bull';
import {
  type AttemptJob,
  attemptJobSchema,
  attemptProgressSchema,
  type AttemptResult,
  attemptResultSchema,
  JOB_VERSION,
  jobIdFor,
  parseOrExplain,
  QUEUE_NAME,
  refsFor,
} from './job';
import { redact, redactError } from './redact';
import { attemptRefsOnRemote, deleteRemoteRefs, fetchResult, publishBase, pushRef } from './remoteGit';

export interface QueueExecutorOptions {
  queueUrl: string;
  /** The shared git remote workers clone (a URL or a path; credentials from the environment). */
  remote: string;
  lease: LeaseTimes;
  /** Tries of a job whose worker failed (not the agent's verdict: git, the disk, a crash), with back-off. */
  jobAttempts?: number;
  prefix?: string | undefined;
}

interface Followed {
  s: Session;
  taskId: string;
  agentId: string;
}

/** What following a job needs: its attempt, and the job to publish again if it vanishes. */
interface Follow {
  agentId: string;
  jobId: string;
  files: AttemptPaths;
  terminal: TaskTerminal;
  job: AttemptJob;
}

/** Redis has not answered for the run's outage allowance: the machine's failure, not the task's. */
export class QueueUnreachableError extends EnvFailureError {}

const FULL_SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

export class QueueExecutor implements AttemptExecutor {
  readonly name = 'queue';
  private readonly bull = loadBullmq();
  private readonly queue;
  private readonly events;
  private readonly followed = new Map<string, Followed>();
  /** Wakes the follower of a job when the queue reports its end. */
  private readonly wakers = new Map<string, () => void>();
  private published: string | undefined;
  private publishing: Promise<void> = Promise.resolve();
  private gitTurn: Promise<unknown> = Promise.resolve();
  private closing = false;
  /** Since when Redis has failed to answer (Date.now()); undefined while it answers. */
  private troubleSince: number | undefined;
  /** The session whose ended attempts' refs are deleted from the remote when the run closes. */
  private session: Session | undefined;

  /** Runs `work` after every earlier call's work has ended (whether it failed or not). */
  private oneGitAtATime<T>(work: () => Promise<T>): Promise<T> {
    const turn = this.gitTurn.then(work, work);
    this.gitTurn = turn.catch(() => undefined);
    return turn;
  }

  constructor(private readonly opts: QueueExecutorOptions) {
    const connection = connectionFor(opts.queueUrl, () => this.closing);
    const prefix = opts.prefix ? { prefix: opts.prefix } : {};
    this.queue = new this.bull.Queue<AttemptJob, AttemptResult>(QUEUE_NAME, { connection, ...prefix });
    // Its blocking read is abandoned by BullMQ only after this long plus a second: with Redis gone,
    // that is how long the process outlives close().
    this.events = new this.bull.QueueEvents(QUEUE_NAME, { connection, blockingTimeout: 2000, ...prefix });
    this.queue.on('error', () => undefined);
    this.events.on('error', () => undefined);
    this.events.on('progress', ({ jobId, data }) => void this.progress(jobId, data));
    const wake = ({ jobId }: { jobId: string }) => this.wakers.get(jobId)?.();
    this.events.on('completed', wake);
    this.events.on('failed', wake);
    this.events.on('removed', wake);
  }

  /** Connects (a clear error when Redis cannot be reached) before the session starts. */
  async ready(): Promise<void> {
    try {
      await Promise.all([this.queue.waitUntilReady(), this.events.waitUntilReady()]);
    } catch (err) {
      throw new Error(`cannot reach the queue at ${redact(this.opts.queueUrl)}: ${redactError(err)}`);
    }
  }

  /**
   * Deletes the refs of attempts that ended from the remote (a superseded worker's result, what a
   * killed controller left), then closes the connections; ones that do not close within 3 s, or
   * while Redis does not answer, are dropped.
   */
  async close(): Promise<void> {
    if (this.session) await this.sweepRefs(this.session).catch(() => undefined);
    this.closing = true;
    const closed = this.troubleSince === undefined && (await withinMs(Promise.allSettled([this.events.close(), this.queue.close()]), 3000));
    // Redis unreachable: the connections are dropped, their reconnections and waiting calls with them.
    if (!closed) await withinMs(Promise.allSettled([this.events.disconnect(), this.queue.disconnect()]), 1000);
  }

  async run(s: Session, task: Task, merges: MergeQueue, resume?: Resume, claimed?: ClaimedTask): Promise<TaskEnd> {
    this.session = s;
    const branch = branchFor(task.id);
    // The run loop usually records the dispatch with its pool (claimTask); else it is done here.
    const dispatched =
      claimed ??
      (await s.transact((file) => {
        if (!resume) return claimTask(s, file, task.id);
        const agentId = `agent_${randomBytes(4).toString('hex')}`;
        return { agentId, base: resume.base, ...resumeTask(file, task.id, agentId) };
      }));
    const { agentId, before, attempt } = dispatched;
    // An approved change needs no agent: this controller validates and merges it (taskRun.ts).
    if (!resume && reviewDecision(before) === 'approved') return runTask(s, task, merges, undefined, dispatched);
    // Every effect of this attempt from here on is fenced by its agent id (its job's too).
    const fence = { taskId: task.id, agentId };
    s.drive(fence);
    const jobId = jobIdFor(task.id, agentId);
    // After an answer or a requested change the worker continues the kept work, pushed below.
    const after = resume ? undefined : continuesAfter(before);
    if (after) resume = await continuedResume(s, before, s.worktreePath(task.id), dispatched.base, fence, after);
    const turn = resume && !after ? ` resuming=attempt-${resume.interruptedAttempt}` : after ? ` ${continuationText(before, after)}` : '';
    s.log({
      type: 'DISPATCH',
      taskId: task.id,
      message: `agent=${agentId} worktree=${branch} executor=queue job=${jobId}${turn}`,
    });
    s.taskEvents.fire({ taskId: task.id, kind: 'dispatched' });
    const terminal = s.terminals.open(task, s.worktreePath(task.id));
    const files = s.createAttempt(task.id, attempt, agentId);
    const prompt = buildPrompt(
      before,
      {
        worktree: '. (a worktree on a queue worker)',
        branch,
        baseBranch: s.baseBranch,
        protectedPaths: protectedPathsOf(before, s.config.protectedPaths),
      },
      resume,
    );
    writeFileSync(files.prompt, prompt);
    let job: AttemptJob;
    try {
      job = jobFor(s, task, { agentId, attempt, base: await baseFor(s, task.id, dispatched.base), prompt });
      const pushed = await raceStop(
        (async () => {
          // Nothing is published without its base on the remote (the push checks it is a commit here).
          await this.publishBase(s, job.baseCommit);
          // A resumed attempt's work so far goes to the remote: the worker continues from it.
          const head = resume && (await s.git.head(resume.worktree));
          if (head) await pushRef(s.git, this.opts.remote, head, refsFor(task.id, agentId).partial);
        })(),
        s.stopSignal,
      );
      if (pushed === 'stopped') {
        // A person's stop before anything was published: the dispatch is undone.
        await s.transact((file) => void undoDispatch(file, task.id, before));
        terminal.close('interrupted');
        return 'interrupted';
      }
    } catch (err) {
      // Not published: the dispatch is undone, uncharged, and the session stops.
      const failure: EnvFailure =
        err instanceof EnvFailureError
          ? err.failure
          : {
              category: 'ENV_SETUP',
              cause: `could not publish ${task.id}'s attempt: ${redactError(err).split('\n')[0]}`,
              advice: `check that ${redact(this.opts.remote)} is reachable and accepts pushes to refs/launchpad/queue/, then run again`,
            };
      return stopForEnvironment(s, before, failure, terminal, { agentRan: false });
    }
    // From here the job may exist, whatever the answer: the attempt stays the task's until its
    // job ends (a stop or Redis's failure leave it in progress, for the next run to follow).
    await s.transact((file) => recordQueueRunner(file, task.id, agentId, QUEUE_RUNNER));
    const follow: Follow = { agentId, jobId, files, terminal, job };
    try {
      if ((await this.add(s, job)) === 'stopped') {
        terminal.close('interrupted');
        return 'interrupted';
      }
    } catch (err) {
      if (!(err instanceof QueueUnreachableError)) throw err;
      this.stopRun(s, task.id, err.failure);
      terminal.close('interrupted');
      return 'interrupted';
    }
    if (resume) await s.removeWorktree(task.id).catch(() => undefined);
    return this.follow(s, before, merges, follow);
  }

  /**
   * At a session's start: every in-progress attempt whose job is in the queue is followed, and one
   * whose job is not there (Redis lost it, or the controller died before publishing it) is published
   * again, unless this machine holds its work (recovery's). A job that failed on every try in the
   * last run is published again: its workers' fault stopped that run, and a person has fixed it.
   */
  async adopt(s: Session, merges: MergeQueue): Promise<RunningAttempt[]> {
    this.session = s;
    const { file } = s.store.load();
    const inProgress = file.tasks.filter((t) => t.status === 'in_progress' && t.agent_id);
    await this.removeStaleJobs(s);
    await this.sweepRefs(s).catch(() => undefined);
    const adopted: RunningAttempt[] = [];
    for (const task of inProgress) {
      const agentId = task.agent_id!;
      const jobId = jobIdFor(task.id, agentId);
      s.drive({ taskId: task.id, agentId });
      const state = await this.redisOrThrow(s, `reading the job ${jobId}`, () => this.queue.getJobState(jobId));
      if (state === 'stopped') break;
      if (state === 'unknown' && (existsSync(s.worktreePath(task.id)) || (await s.git.branchExists(branchFor(task.id))))) continue;
      const files = s.attemptOf(task.id, agentId) ?? s.createAttempt(task.id, task.attempts, agentId);
      const prompt =
        readPrompt(files) ??
        buildPrompt(task, {
          worktree: '. (a worktree on a queue worker)',
          branch: branchFor(task.id),
          baseBranch: s.baseBranch,
          protectedPaths: protectedPathsOf(task, s.config.protectedPaths),
        });
      if (!existsSync(files.prompt)) writeFileSync(files.prompt, prompt);
      const job = jobFor(s, task, {
        agentId,
        attempt: Math.max(1, task.attempts),
        base: await baseFor(s, task.id, task.started_at_commit),
        prompt,
      });
      // Its job may be published from here: a stop leaves the attempt in progress.
      if (!runsOnQueue(task)) await s.transact((f) => recordQueueRunner(f, task.id, agentId, QUEUE_RUNNER));
      const terminal = s.terminals.open(task, s.worktreePath(task.id));
      const follow: Follow = { agentId, jobId, files, terminal, job };
      if (state === 'failed') {
        s.log({
          type: 'RECOVERY',
          taskId: task.id,
          message: `action="published its job again" reason="its job ${jobId} failed on every try in the last run (its workers' fault, not charged)"`,
        });
        const removed = await this.redisOrThrow(s, `removing the job ${jobId}`, () => this.queue.remove(jobId));
        if (removed === 'stopped') break;
        if ((await this.publish(s, job)) === 'stopped') break;
      } else if (state !== 'unknown') {
        s.log({
          type: 'RECOVERY',
          taskId: task.id,
          message: `action="followed queued attempt" reason="its job ${jobId} is ${state} in the queue"`,
        });
      }
      const end = this.follow(s, task, merges, follow);
      // The run loop handles its end; until it takes it, a rejection is not unhandled.
      end.catch(() => undefined);
      adopted.push({ task, end });
    }
    return adopted;
  }

  /** Waits for the job's end (publishing it again if it vanished), then ends the attempt from its result. */
  private async follow(s: Session, task: Task, merges: MergeQueue, a: Follow): Promise<TaskEnd> {
    const { agentId, jobId, files, terminal } = a;
    this.followed.set(jobId, { s, taskId: task.id, agentId });
    let raw: unknown;
    try {
      const end = await this.watch(s, task, a);
      if (end === 'interrupted') {
        // The job goes on; the next run follows it (adopt).
        terminal.close('interrupted');
        return 'interrupted';
      }
      raw = end.result;
    } finally {
      this.followed.delete(jobId);
    }
    return this.deliver(s, task, merges, { agentId, files, terminal, base: a.job.baseCommit }, raw);
  }

  /**
   * Reads the job's state until it ends, woken by the queue's events and at least every poll. A job
   * gone from the queue is published again once a worker still running it has surely lost its lock
   * (`lockDurationMs` after it was found gone) and ended its agent.
   */
  private async watch(s: Session, task: Task, a: Follow): Promise<{ result: unknown } | 'interrupted'> {
    const { jobId } = a;
    const lease = this.opts.lease;
    let goneAt: number | undefined;
    let waitingSince: number | undefined;
    try {
      for (;;) {
        if (s.stopping) return 'interrupted';
        const woken = new Promise<void>((resolve) => this.wakers.set(jobId, resolve));
        const state = await this.redis(s, `reading the job ${jobId}`, () => this.queue.getJobState(jobId)).catch((err: unknown) => {
          if (err instanceof QueueUnreachableError) throw err;
          return undefined; // Redis answered with an error (loading its data after a restart): the next poll asks again.
        });
        if (state === 'stopped') return 'interrupted';
        if (state === 'completed' || state === 'failed') {
          const job = await this.redisOrThrow(s, `reading the job ${jobId}`, () => this.queue.getJob(jobId));
          if (job === 'stopped') return 'interrupted';
          if (job && state === 'completed') return { result: job.returnvalue };
          if (job) return this.workersFailed(s, task.id, jobId, job.failedReason ?? 'no reason given', job.attemptsMade);
        }
        if (state === 'unknown') {
          waitingSince = undefined;
          if (goneAt === undefined) {
            goneAt = Date.now();
            s.log({
              type: 'WARN',
              taskId: task.id,
              message: `its job ${jobId} is not in the queue (Redis lost it, or it was never published): it is published again in ${Math.ceil(lease.lockDurationMs / 1000)} s unless it comes back`,
            });
          } else if (Date.now() - goneAt >= lease.lockDurationMs) {
            if ((await this.publish(s, a.job)) === 'stopped') return 'interrupted';
            s.log({
              type: 'RECOVERY',
              taskId: task.id,
              message: `action="published its job again" reason="its job ${jobId} vanished from the queue: the same attempt, not charged; a worker continues from its last partial push"`,
            });
            goneAt = undefined;
          }
        } else if (state !== undefined) goneAt = undefined;
        if (state === 'waiting' || state === 'delayed' || state === 'prioritized') {
          waitingSince ??= Date.now();
          if (Date.now() - waitingSince >= lease.outageMs) {
            s.log({
              type: 'WARN',
              taskId: task.id,
              message: `its job ${jobId} has waited ${Math.round((Date.now() - waitingSince) / 1000)} s and no worker took it: start launchpad worker with this queue and --repo ${redact(this.opts.remote)}`,
            });
            waitingSince = Infinity;
          }
        } else if (state === 'active') waitingSince = undefined;
        let timer: NodeJS.Timeout | undefined;
        await raceStop(Promise.race([woken, new Promise<void>((r) => (timer = setTimeout(r, pollMs(lease))))]), s.stopSignal);
        clearTimeout(timer);
      }
    } catch (err) {
      if (!(err instanceof QueueUnreachableError)) throw err;
      this.stopRun(s, task.id, err.failure);
      return 'interrupted';
    } finally {
      this.wakers.delete(jobId);
    }
  }

  /**
   * The job failed on every try on the workers (git, their disk, worktree_setup, a worker dying
   * again and again): not the task's failure. The run stops so a person fixes the workers; the
   * attempt stays in progress and the next run publishes its job again.
   */
  private workersFailed(s: Session, taskId: string, jobId: string, reason: string, tries: number): 'interrupted' {
    this.stopRun(s, taskId, {
      category: 'ENV_SETUP',
      cause: `the queue job ${jobId} failed on every try (${tries}) on the workers: ${redact(reason).split('\n')[0]}`,
      advice:
        'fix what the workers report (their output, launchpad worker -v: their clone, disk, the git remote, worktree_setup); then run again, and the attempt continues from its last partial push',
    });
    return 'interrupted';
  }

  /** The queue's fault stops the run: logged once, the first cause reported; nothing is charged. */
  private stopRun(s: Session, taskId: string, failure: EnvFailure): void {
    if (!s.envFailure)
      s.log({
        type: 'ERROR',
        taskId,
        category: 'ENV_SETUP',
        message: `${failure.cause} (not charged: the attempt stays in progress, and the next run follows its job or publishes it again)`,
      });
    s.stopForEnvironment(failure);
  }

  /** Publishes the job (again): its base first, then the job itself. */
  private async publish(s: Session, job: AttemptJob): Promise<'published' | 'stopped'> {
    const pushed = await raceStop(this.publishBase(s, job.baseCommit), s.stopSignal);
    if (pushed === 'stopped') return 'stopped';
    return this.add(s, job);
  }

  private async add(s: Session, job: AttemptJob): Promise<'published' | 'stopped'> {
    const added = await this.redisOrThrow(s, `publishing the job of ${job.taskId}`, () =>
      this.queue.add(job.taskId, job, {
        jobId: jobIdFor(job.taskId, job.agentId),
        attempts: this.opts.jobAttempts ?? 3,
        backoff: { type: 'exponential', delay: 1000 },
        removeOnComplete: { age: 7 * 86400 },
        removeOnFail: { age: 7 * 86400 },
      }),
    );
    return added === 'stopped' ? 'stopped' : 'published';
  }

  /**
   * A call to Redis, given up on a stop ('stopped') and, once Redis has failed to answer for the
   * run's outage allowance, with QueueUnreachableError. An error Redis answers with is thrown as it
   * is while the allowance lasts. A call given up on may still reach Redis later: whatever it
   * publishes is for an attempt that stays in progress.
   */
  private async redis<T>(s: Session, what: string, op: () => Promise<T>): Promise<T | 'stopped'> {
    const started = Date.now();
    const deadline = (this.troubleSince ?? started) + this.opts.lease.outageMs;
    const unreachable = (detail: string) => {
      this.troubleSince ??= started;
      const seconds = Math.round(this.opts.lease.outageMs / 1000);
      return new QueueUnreachableError({
        category: 'ENV_SETUP',
        cause: `the queue at ${redact(this.opts.queueUrl)} has not answered for ${seconds} s (${what}: ${detail})`,
        advice:
          'start Redis again (with its data: appendonly yes), or check the network and --queue; then run again: the attempts in progress are followed, or published again',
      });
    };
    try {
      const got = await raceStop(
        withinMs(op(), Math.max(0, deadline - started)).then((v) => ({ v })),
        s.stopSignal,
      );
      if (got === 'stopped') return 'stopped';
      if (got.v === undefined) throw unreachable('no answer');
      this.troubleSince = undefined;
      return got.v as T;
    } catch (err) {
      if (err instanceof QueueUnreachableError) throw err;
      this.troubleSince ??= started;
      if (Date.now() >= deadline) throw unreachable(redactError(err));
      throw err;
    }
  }

  /** redis(), where an error Redis answers with ends the step too (as unreachable once the allowance is spent). */
  private async redisOrThrow<T>(s: Session, what: string, op: () => Promise<T>): Promise<T | 'stopped'> {
    for (;;) {
      try {
        return await this.redis(s, what, op);
      } catch (err) {
        if (err instanceof QueueUnreachableError) throw err;
        await raceStop(new Promise((r) => setTimeout(r, pollMs(this.opts.lease))), s.stopSignal);
      }
    }
  }

  /**
   * A result: accepted only when it is for the attempt the task expects (its agent id, still in
   * progress); then its commits are fetched into harness-<id> and the attempt ends here. The
   * attempt's refs leave the remote once its end is recorded: a controller killed before that
   * fetches them again.
   */
  async deliver(
    s: Session,
    task: Task,
    merges: MergeQueue,
    a: { agentId: string; files: AttemptPaths; terminal: TaskTerminal; base: string },
    raw: unknown,
  ): Promise<TaskEnd> {
    const { agentId, files, terminal } = a;
    const current = s.store.load().file.tasks.find((t) => t.id === task.id);
    const verdict = acceptResult(current, { taskId: task.id, agentId }, raw);
    if (verdict.kind === 'refused') {
      s.log({ type: 'WARN', taskId: task.id, message: `result refused (stale or foreign): ${redact(verdict.reason)}` });
      terminal.close('interrupted');
      return 'interrupted';
    }
    const r = verdict.result;
    const startedAt = current?.started_at_commit;
    const worktree = s.worktreePath(task.id);
    const branch = branchFor(task.id);
    const cleanup = () => deleteRemoteRefs(s.git, this.opts.remote, [r.ref, refsFor(task.id, agentId).partial]);
    // An attempt that ended keeps nothing on the remote; one interrupted here (left in progress
    // for the next run, which fetches its result again) keeps its refs until it ends.
    const ended = async (end: Promise<TaskEnd>) => {
      const how = await end;
      if (how !== 'interrupted') await cleanup();
      return how;
    };
    try {
      writeFileSync(files.transcript, r.outputTail);
    } catch {
      // The tail is in the result; the transcript is a convenience.
    }
    // Merged already (the controller died between the merge and recording it): completed.
    if (startedAt && r.commit !== startedAt && (await s.git.commitExists(r.commit)) && (await s.git.isAncestor(r.commit, 'HEAD'))) {
      s.log({ type: 'RECOVERY', taskId: task.id, message: 'action="marked completed" reason="its commits are merged already"' });
      await ended(s.completeTask(task, undefined).then(() => 'completed' as const));
      return 'completed';
    }
    await s.removeWorktree(task.id).catch(() => undefined);
    try {
      // One at a time: `git worktree add` first writes a placeholder HEAD, which a concurrent
      // fetch's connectivity check would read as a bad object.
      await this.oneGitAtATime(async () => {
        await fetchResult(s.git, this.opts.remote, r.ref, r.commit, `refs/heads/${branch}`);
        await s.git.addWorktreeForBranch(worktree, branch);
      });
    } catch (err) {
      // The shared remote or the network failed, not the task: the session stops uncharged, and
      // the attempt's commits stay on the remote under r.ref.
      throw new EnvFailureError({
        category: 'ENV_SETUP',
        cause: `could not fetch ${task.id}'s result from the shared remote: ${(err as Error).message.split('\n')[0]}`,
        advice: `check that ${redact(this.opts.remote)} is reachable and still holds ${r.ref}, then run again`,
      });
    }
    if (r.costUsd !== undefined) await s.transact((file) => void recordCost(file, task.id, { costUsd: r.costUsd })).catch(() => undefined);

    const ok = r.verdict === 'success';
    const question = r.verdict === 'question' ? (r.question ?? '') : undefined;
    files.recordVerdict(
      agentId,
      ok
        ? { kind: 'success' }
        : question !== undefined
          ? { kind: 'question', text: question }
          : { kind: 'fail', category: r.verdict === 'timeout' ? 'TIMEOUT' : 'AGENT_FAIL', reason: r.reason ?? r.verdict },
    );
    const resumed = r.resumedFrom ? ` resumed_from=${r.resumedFrom.slice(0, 7)}` : '';
    const result = ok ? 'success' : question !== undefined ? 'question' : 'error';
    s.log({
      type: 'AGENT_DONE',
      taskId: task.id,
      message: `agent=${agentId} result=${result} worker=${r.workerId}${resumed} agent_ms=${r.timings.agentMs}`,
    });
    s.taskEvents.fire({ taskId: task.id, kind: 'agent-done' });
    // The question came back with the work so far, fetched above: the task awaits an answer here.
    if (question !== undefined) return ended(awaitAnswer(s, task, worktree, terminal, files.number, a.base, question));
    // The tool's usage or rate limit on the worker: as on this machine, the attempt is given
    // back and dispatching pauses (its work, fetched above, stays for the next run).
    const preset = s.config.agent?.preset?.name ?? 'agent';
    if (r.limit && !ok && !s.spending.chargesLimit(task.id, r.limit)) return ended(stopForLimit(s, task, preset, r.limit, terminal));
    if (r.limit && !ok) s.log({ type: 'WARN', taskId: task.id, message: chargedOverloadMessage(preset, r.limit) });
    else s.spending.noLimit(task.id);
    if (!ok)
      return ended(
        discardAttempt(s, task, worktree, terminal, {
          category: r.verdict === 'timeout' ? 'TIMEOUT' : 'AGENT_FAIL',
          reason: r.reason ?? `agent ended with ${r.verdict}`,
          tail: r.outputTail,
          discardReason: r.verdict === 'timeout' ? 'agent timed out' : 'agent reported failure',
        }),
      );
    files.markWorkCommitted(agentId);
    const command = task.validation?.command?.trim() ?? '';
    const shown = r.validation.result === 'pass' ? 'PASS' : r.validation.result === 'timeout' ? 'TIMEOUT' : 'FAIL';
    s.log({ type: 'VALIDATE', taskId: task.id, message: `command="${command}" result=${shown} worker=${r.workerId}` });
    s.taskEvents.fire({ taskId: task.id, kind: 'validated' });
    if (r.validation.result !== 'pass') {
      return ended(
        discardAttempt(s, task, worktree, terminal, {
          category: r.validation.result === 'timeout' ? 'TIMEOUT' : 'TEST_FAIL',
          reason: r.validation.reason ?? `${command} failed`,
          tail: r.validation.tail,
          discardReason: 'validation failed',
        }),
      );
    }
    return ended(this.checkHere(s, task, merges, { worktree, terminal, files, base: a.base, workerId: r.workerId }));
  }

  /**
   * A worker's pass is its word: its agent had the run of that machine, and its result crossed
   * Redis, where anyone holding the queue's URL can write. What merges is checked here as a local
   * attempt's work is: the state files untouched since its base, then the task's validation on
   * the fetched commit, in a worktree of the controller's set up as a new one (the included
   * files, worktree_setup). Only this validation's pass merges.
   */
  private async checkHere(
    s: Session,
    task: Task,
    merges: MergeQueue,
    a: { worktree: string; terminal: TaskTerminal; files: AttemptPaths; base: string; workerId: string },
  ): Promise<TaskEnd> {
    const { worktree, terminal, files } = a;
    const problem = await inspectWork(s, task, worktree, a.base, { commitLeftovers: false, warnIfEmpty: true });
    if (problem)
      return discardAttempt(s, task, worktree, terminal, {
        category: 'AGENT_FAIL',
        reason: problem,
        discardReason: 'agent reported failure',
      });
    try {
      const ready = await prepareWorktree(s, task, worktree, terminal, files, { kind: 'new' });
      if (ready.kind === 'failed')
        return stopForEnvironment(
          s,
          task,
          {
            category: 'ENV_SETUP',
            cause: `the worktree that checks ${task.id}'s result here could not be set up: ${ready.failure.cause}`,
            advice: ready.failure.advice,
          },
          terminal,
        );
      const v = ready.kind === 'interrupted' ? ready : await validateTask(s, task, worktree, terminal, files, a.base);
      if (v.kind === 'interrupted') {
        terminal.close('interrupted');
        return 'interrupted';
      }
      if (v.kind === 'fail')
        return discardAttempt(s, task, worktree, terminal, {
          ...v,
          reason: `${v.reason} (it passed on worker ${a.workerId}; the controller's run decides)`,
          discardReason: 'validation failed',
        });
    } catch (err) {
      const end = endUncharged(s, task, err, terminal);
      if (end) return end;
      throw err;
    } finally {
      s.ports.releaseTask(task.id);
    }
    return merges.enqueue(task.id, () => mergeTask(s, task, worktree, terminal, files));
  }

  private async progress(jobId: string, data: unknown): Promise<void> {
    const f = this.followed.get(jobId);
    const p = attemptProgressSchema.safeParse(data);
    if (!f || !p.success || p.data.agentId !== f.agentId) return;
    const { s, taskId, agentId } = f;
    if (p.data.kind === 'started') {
      const runner = `${QUEUE_RUNNER}:${p.data.workerId}`;
      const recorded = await s.transact((file) => recordQueueRunner(file, taskId, agentId, runner)).catch(() => false);
      if (recorded) {
        const resumed = p.data.resumedFrom ? ` resuming from ${p.data.resumedFrom.slice(0, 7)}` : '';
        s.log({ type: 'WARN', taskId, message: `running on queue worker ${p.data.workerId}${resumed}` });
        s.taskEvents.fire({ taskId, kind: 'checkpoint' });
      }
      return;
    }
    const current = s.store.load().file.tasks.find((t) => t.id === taskId);
    if (current?.agent_id !== agentId) return;
    await checkpoint(s, taskId, { step: p.data.step, total: p.data.total, description: p.data.description });
  }

  private publishBase(s: Session, head: string): Promise<void> {
    const next = this.publishing.then(async () => {
      if (this.published === head) return;
      await publishBase(s.git, this.opts.remote, s.baseBranch, head);
      this.published = head;
    });
    this.publishing = next.catch(() => undefined);
    return next;
  }

  /**
   * Jobs waiting for a worker whose attempt this controller dispatched (its attempt folder says so)
   * and which is no longer its task's (the task ended, or went back to pending, while Redis kept the
   * job): removed before a worker bills an agent for nothing. Other controllers' jobs are left alone.
   */
  private async removeStaleJobs(s: Session): Promise<void> {
    const jobs = await this.redisOrThrow(s, 'listing the waiting jobs', () => this.queue.getJobs(['waiting', 'delayed', 'prioritized']));
    if (jobs === 'stopped') return;
    for (const job of jobs) {
      const data = job?.data as Partial<AttemptJob> | undefined;
      if (!job?.id || !data?.taskId || !data.agentId || !this.endedHere(s, data.taskId, data.agentId)) continue;
      await this.redisOrThrow(s, `removing the job ${job.id}`, () => this.queue.remove(job.id!));
      s.log({
        type: 'RECOVERY',
        taskId: data.taskId,
        message: `action="removed stale job" reason="its attempt (${data.agentId}) is no longer the task's"`,
      });
    }
  }

  /** Deletes the remote's refs of attempts this controller dispatched and which ended (best effort). */
  private async sweepRefs(s: Session): Promise<void> {
    const refs = await attemptRefsOnRemote(s.git, this.opts.remote);
    const ended = refs.filter((r) => this.endedHere(s, r.taskId, r.agentId)).map((r) => r.ref);
    await deleteRemoteRefs(s.git, this.opts.remote, ended);
  }

  /** Whether agent `agentId`'s attempt of `taskId` was dispatched here and is not the task's attempt now. */
  private endedHere(s: Session, taskId: string, agentId: string): boolean {
    const t = s.store.load().file.tasks.find((x) => x.id === taskId);
    if (t?.status === 'in_progress' && t.agent_id === agentId) return false;
    return s.attemptOf(taskId, agentId) !== undefined;
  }
}

/** The job of an attempt, checked against its schema before it is published. */
function jobFor(s: Session, task: Task, a: { agentId: string; attempt: number; base: string; prompt: string }): AttemptJob {
  const job: AttemptJob = {
    version: JOB_VERSION,
    taskId: task.id,
    title: task.title,
    agentId: a.agentId,
    attempt: a.attempt,
    baseCommit: a.base,
    baseBranch: s.baseBranch,
    projectDir: projectDirOf(s),
    prompt: a.prompt,
    agentCommand: s.config.agentCommand ?? '',
    ...(s.config.agent?.preset ? { preset: s.config.agent.preset.name } : {}),
    agentTimeoutMs: s.config.agentTimeoutMs,
    validation: {
      command: task.validation?.command?.trim() ?? '',
      timeoutMs: (task.validation?.timeout_seconds ?? DEFAULT_VALIDATION_TIMEOUT_S) * 1000,
    },
    worktreeSetup: s.config.worktreeSetup ?? null,
    protectedPaths: protectedPathsOf(task, s.config.protectedPaths),
  };
  try {
    return parseOrExplain(attemptJobSchema, job, `the job of ${task.id}`);
  } catch (err) {
    throw new EnvFailureError({
      category: 'ENV_SETUP',
      cause: (err as Error).message,
      advice: `fix what it names (harness-tasks.json, the agent command, the run's options), then run again`,
    });
  }
}

/**
 * The commit an attempt starts from: the one recorded for it when it is a full commit id here,
 * else the base branch's head (a WARN says so). The job never carries anything else.
 */
async function baseFor(s: Session, taskId: string, recorded: string | null | undefined): Promise<string> {
  if (recorded && FULL_SHA.test(recorded) && (await s.git.commitExists(recorded))) return recorded;
  const head = await s.git.resolve(`refs/heads/${s.baseBranch}`);
  if (!head) throw new Error(`the base branch ${s.baseBranch} has no commit`);
  s.log({
    type: 'WARN',
    taskId,
    message: `its recorded base commit "${recorded ?? ''}" is not a commit of this repository: the attempt starts from ${head.slice(0, 7)}, the head of ${s.baseBranch}`,
  });
  return head;
}

function readPrompt(files: AttemptPaths): string | undefined {
  try {
    return readFileSync(files.prompt, 'utf8');
  } catch {
    return undefined;
  }
}

/** The state root's folder inside the repository: where the agent and the validation run. */
function projectDirOf(s: Session): string {
  return relative(s.toplevel, s.paths.root).split('\\').join('/');
}

/**
 * The fencing check: a result is accepted only when it parses, names the attempt the controller
 * published (task and agent id), and that attempt is still the task's (in progress, same agent
 * id). A stale worker's result, one for an attempt recovery replaced, or a forged one is refused.
 */
export function acceptResult(
  current: Task | undefined,
  expected: { taskId: string; agentId: string },
  raw: unknown,
): { kind: 'accepted'; result: AttemptResult } | { kind: 'refused'; reason: string } {
  const parsed = attemptResultSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { kind: 'refused', reason: `malformed result: ${issue?.path.join('.') || '(the whole value)'}: ${issue?.message}` };
  }
  const r = parsed.data;
  if (r.taskId !== expected.taskId || r.agentId !== expected.agentId)
    return { kind: 'refused', reason: `result for ${r.taskId}/${r.agentId}, expected ${expected.taskId}/${expected.agentId}` };
  if (!current || current.status !== 'in_progress' || current.agent_id !== expected.agentId)
    return {
      kind: 'refused',
      reason: `the task's attempt is ${current?.agent_id ?? 'none'} (${current?.status ?? 'removed'}), not ${expected.agentId}`,
    };
  return { kind: 'accepted', result: r };
}
