// The queue executor: the controller's side of workers on other machines. The controller stays
// the single writer of harness-tasks.json, the log and the base branch: it dispatches (a
// transition, as for a local attempt), publishes the attempt as a BullMQ job, follows its progress
// (who runs it: claimed_by; its checkpoints), and when a result comes back accepts it only for the
// attempt it expects (the task's agent id: fencing), fetches the attempt's commits from the shared
// remote into harness-<id>, and ends it the way a local attempt ends: discarded, or validated on
// the worker and merged here through the merge queue.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';

import { checkpoint } from '../controller/agentRun';
import { stopForLimit } from '../controller/budget';
import { discardAttempt } from '../controller/discard';
import { EnvFailureError } from '../controller/envFailure';
import { mergeTask, type TaskEnd } from '../controller/merge';
import type { MergeQueue } from '../controller/mergeQueue';
import { buildPrompt } from '../controller/prompt';
import type { Session } from '../controller/session';
import type { ClaimedTask, Resume } from '../controller/taskRun';
import type { TaskTerminal } from '../controller/types';
import type { AttemptExecutor, RunningAttempt } from '../executor/types';
import { branchFor } from '../ids';
import type { AttemptPaths } from '../statePaths';
import { DEFAULT_VALIDATION_TIMEOUT_S, type Task } from '../taskFile/schema';
import { dispatchTask, recordCost, recordQueueRunner, restartTask, resumeTask } from '../tasks/transitions';
import { connectionFor, type LeaseTimes, loadBullmq } from './bull';
import {
  type AttemptJob,
  attemptProgressSchema,
  type AttemptResult,
  attemptResultSchema,
  JOB_VERSION,
  jobIdFor,
  QUEUE_NAME,
  refsFor,
} from './job';
import { redact, redactError } from './redact';
import { deleteRemoteRefs, fetchResult, publishBase, pushRef } from './remoteGit';

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

export class QueueExecutor implements AttemptExecutor {
  readonly name = 'queue';
  private readonly bull = loadBullmq();
  private readonly queue;
  private readonly events;
  private readonly followed = new Map<string, Followed>();
  private published: string | undefined;
  private publishing: Promise<void> = Promise.resolve();
  private gitTurn: Promise<unknown> = Promise.resolve();
  private closing = false;

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
    this.events = new this.bull.QueueEvents(QUEUE_NAME, { connection, ...prefix });
    this.queue.on('error', () => undefined);
    this.events.on('error', () => undefined);
    this.events.on('progress', ({ jobId, data }) => void this.progress(jobId, data));
  }

  /** Connects (a clear error when Redis cannot be reached) before the session starts. */
  async ready(): Promise<void> {
    try {
      await Promise.all([this.queue.waitUntilReady(), this.events.waitUntilReady()]);
    } catch (err) {
      throw new Error(`cannot reach the queue at ${redact(this.opts.queueUrl)}: ${redactError(err)}`);
    }
  }

  /** Closes the connections; ones that do not close within 3 s (Redis unreachable) are dropped. */
  async close(): Promise<void> {
    this.closing = true;
    const closed = Promise.allSettled([this.events.close(), this.queue.close()]);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([closed, new Promise<void>((r) => (timer = setTimeout(r, 3000)))]);
    clearTimeout(timer);
  }

  async run(s: Session, task: Task, merges: MergeQueue, resume?: Resume, claimed?: ClaimedTask): Promise<TaskEnd> {
    const branch = branchFor(task.id);
    // The run loop usually records the dispatch with its pool (claimTask); else it is done here.
    const { agentId, base, before, attempt } =
      claimed ??
      (await s.transact((file) => {
        const agentId = `agent_${randomBytes(4).toString('hex')}`;
        const base = resume?.base ?? s.state.head;
        const d = resume ? resumeTask(file, task.id, agentId) : dispatchTask(file, task.id, { agentId, branch, baseCommit: base });
        return { agentId, base, ...d };
      }));
    const jobId = jobIdFor(task.id, agentId);
    s.log({
      type: 'DISPATCH',
      taskId: task.id,
      message: `agent=${agentId} worktree=${branch} executor=queue job=${jobId}${resume ? ` resuming=attempt-${resume.interruptedAttempt}` : ''}`,
    });
    s.taskEvents.fire({ taskId: task.id, kind: 'dispatched' });
    const worktree = s.worktreePath(task.id);
    const terminal = s.terminals.open(task, worktree);
    const files = s.createAttempt(task.id, attempt, agentId);
    const prompt = buildPrompt(before, { worktree: '. (a worktree on a queue worker)', branch, baseBranch: s.baseBranch }, resume);
    writeFileSync(files.prompt, prompt);
    try {
      await this.publishBase(s, base);
      // A resumed attempt's work so far goes to the remote: the worker continues from it.
      if (resume) {
        const head = await s.git.head(resume.worktree);
        if (head) await pushRef(s.git, head, refsFor(task.id, agentId).partial).catch(() => undefined);
        await s.removeWorktree(task.id).catch(() => undefined);
      }
      const job: AttemptJob = {
        version: JOB_VERSION,
        taskId: task.id,
        title: task.title,
        agentId,
        attempt,
        baseCommit: base,
        baseBranch: s.baseBranch,
        projectDir: projectDirOf(s),
        prompt,
        agentCommand: s.config.agentCommand!,
        ...(s.config.agent?.preset ? { preset: s.config.agent.preset.name } : {}),
        agentTimeoutMs: s.config.agentTimeoutMs,
        validation: {
          command: task.validation?.command?.trim() ?? '',
          timeoutMs: (task.validation?.timeout_seconds ?? DEFAULT_VALIDATION_TIMEOUT_S) * 1000,
        },
        worktreeSetup: s.config.worktreeSetup ?? null,
      };
      if (!job.validation.command) throw new Error(`task ${task.id} has no validation.command`);
      await this.queue.add(task.id, job, {
        jobId,
        attempts: this.opts.jobAttempts ?? 3,
        backoff: { type: 'exponential', delay: 1000 },
        removeOnComplete: { age: 7 * 86400 },
        removeOnFail: { age: 7 * 86400 },
      });
    } catch (err) {
      // Not published (the queue or the remote cannot be reached): the task goes back to pending,
      // its attempt counted as recovery's "started afresh" counts it, and the session stops.
      s.log({ type: 'WARN', taskId: task.id, message: `could not publish the attempt: ${redactError(err)}` });
      await s.transact((file) => void restartTask(file, task.id)).catch(() => undefined);
      s.requestStop();
      terminal.close('interrupted');
      return 'interrupted';
    }
    return this.follow(s, before, merges, { agentId, jobId, files, terminal });
  }

  async adopt(s: Session, merges: MergeQueue): Promise<RunningAttempt[]> {
    const { file } = s.store.load();
    const adopted: RunningAttempt[] = [];
    for (const task of file.tasks) {
      if (task.status !== 'in_progress' || !task.agent_id) continue;
      const jobId = jobIdFor(task.id, task.agent_id);
      const job = await this.bull.Job.fromId<AttemptJob, AttemptResult>(this.queue, jobId);
      const state = job ? await job.getState() : undefined;
      if (!job || state === 'failed' || state === 'unknown') continue;
      const files = s.attemptOf(task.id, task.agent_id) ?? s.createAttempt(task.id, task.attempts, task.agent_id);
      s.log({
        type: 'RECOVERY',
        taskId: task.id,
        message: `action="followed queued attempt" reason="its job ${jobId} is ${state} in the queue"`,
      });
      const terminal = s.terminals.open(task, s.worktreePath(task.id));
      adopted.push({ task, end: this.follow(s, task, merges, { agentId: task.agent_id, jobId, files, terminal }) });
    }
    return adopted;
  }

  /** Waits for the job's end, then ends the attempt from its result. */
  private async follow(
    s: Session,
    task: Task,
    merges: MergeQueue,
    a: { agentId: string; jobId: string; files: AttemptPaths; terminal: TaskTerminal },
  ): Promise<TaskEnd> {
    const { agentId, jobId, files, terminal } = a;
    this.followed.set(jobId, { s, taskId: task.id, agentId });
    let raw: unknown;
    try {
      const job = await this.bull.Job.fromId<AttemptJob, AttemptResult>(this.queue, jobId);
      if (!job) throw new Error(`job ${jobId} is gone from the queue`);
      const stopped = new Promise<'stopped'>((resolve) => {
        if (s.stopping) resolve('stopped');
        s.stopSignal.addEventListener('abort', () => resolve('stopped'), { once: true });
      });
      const end = await Promise.race([job.waitUntilFinished(this.events), stopped]);
      if (end === 'stopped') {
        // The job goes on; the next run follows it (adopt).
        terminal.close('interrupted');
        return 'interrupted';
      }
      raw = end;
    } catch (err) {
      // The job failed on every try (its workers' faults, not the agent's verdict): started
      // afresh, as recovery starts an attempt that left nothing; failed once its attempts are used.
      const reason = redactError(err).replace(/"/g, "'");
      const current = s.store.load().file.tasks.find((t) => t.id === task.id);
      if (current && current.attempts >= current.max_attempts) {
        s.log({ type: 'RECOVERY', taskId: task.id, message: `action="marked failed" reason="queue job failed: ${reason}"` });
        await s.failTask(current, 'TASK_EXEC', `queue job failed on every try: ${reason}`, undefined, 'queue job failed');
        terminal.close('failed');
        return 'failed';
      }
      s.log({ type: 'RECOVERY', taskId: task.id, message: `action="started afresh" reason="queue job failed: ${reason}"` });
      await s.transact((file) => void restartTask(file, task.id));
      terminal.close('interrupted');
      return 'interrupted';
    } finally {
      this.followed.delete(jobId);
    }
    return this.deliver(s, task, merges, { agentId, files, terminal }, raw);
  }

  /**
   * A result: accepted only when it is for the attempt the task expects (its agent id, still in
   * progress); then its commits are fetched into harness-<id> and the attempt ends here.
   */
  async deliver(
    s: Session,
    task: Task,
    merges: MergeQueue,
    a: { agentId: string; files: AttemptPaths; terminal: TaskTerminal },
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
    try {
      writeFileSync(files.transcript, r.outputTail);
    } catch {
      // The tail is in the result; the transcript is a convenience.
    }
    // Merged already (the controller died between the merge and recording it): completed.
    if (startedAt && r.commit !== startedAt && (await s.git.commitExists(r.commit)) && (await s.git.isAncestor(r.commit, 'HEAD'))) {
      s.log({ type: 'RECOVERY', taskId: task.id, message: 'action="marked completed" reason="its commits are merged already"' });
      await s.completeTask(task, undefined);
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
    files.recordVerdict(
      agentId,
      ok
        ? { kind: 'success' }
        : { kind: 'fail', category: r.verdict === 'timeout' ? 'TIMEOUT' : 'AGENT_FAIL', reason: r.reason ?? r.verdict },
    );
    const resumed = r.resumedFrom ? ` resumed_from=${r.resumedFrom.slice(0, 7)}` : '';
    s.log({
      type: 'AGENT_DONE',
      taskId: task.id,
      message: `agent=${agentId} result=${ok ? 'success' : 'error'} worker=${r.workerId}${resumed} agent_ms=${r.timings.agentMs}`,
    });
    s.taskEvents.fire({ taskId: task.id, kind: 'agent-done' });
    const cleanup = () => deleteRemoteRefs(s.git, this.opts.remote, [r.ref, refsFor(task.id, agentId).partial]);
    // The tool's usage or rate limit on the worker: as on this machine, the attempt is given
    // back and dispatching pauses (its work, fetched above, stays for the next run).
    if (r.limit && !ok) {
      await cleanup();
      return stopForLimit(s, task, s.config.agent?.preset?.name ?? 'agent', r.limit, terminal);
    }
    if (!ok) {
      await cleanup();
      return discardAttempt(s, task, worktree, terminal, {
        category: r.verdict === 'timeout' ? 'TIMEOUT' : 'AGENT_FAIL',
        reason: r.reason ?? `agent ended with ${r.verdict}`,
        tail: r.outputTail,
        discardReason: r.verdict === 'timeout' ? 'agent timed out' : 'agent reported failure',
      });
    }
    files.markWorkCommitted(agentId);
    const command = task.validation?.command?.trim() ?? '';
    const shown = r.validation.result === 'pass' ? 'PASS' : r.validation.result === 'timeout' ? 'TIMEOUT' : 'FAIL';
    s.log({ type: 'VALIDATE', taskId: task.id, message: `command="${command}" result=${shown} worker=${r.workerId}` });
    s.taskEvents.fire({ taskId: task.id, kind: 'validated' });
    await cleanup();
    if (r.validation.result !== 'pass') {
      return discardAttempt(s, task, worktree, terminal, {
        category: r.validation.result === 'timeout' ? 'TIMEOUT' : 'TEST_FAIL',
        reason: r.validation.reason ?? `${command} failed`,
        tail: r.validation.tail,
        discardReason: 'validation failed',
      });
    }
    return merges.enqueue(task.id, () => mergeTask(s, task, worktree, terminal, files));
  }

  private async progress(jobId: string, data: unknown): Promise<void> {
    const f = this.followed.get(jobId);
    const p = attemptProgressSchema.safeParse(data);
    if (!f || !p.success || p.data.agentId !== f.agentId) return;
    const { s, taskId, agentId } = f;
    if (p.data.kind === 'started') {
      const runner = `queue:${p.data.workerId}`;
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
