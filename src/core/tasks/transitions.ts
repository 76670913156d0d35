// Every change of a task's state, as functions over the loaded task file (run inside a
// StateStore transaction): dispatch, resume, restart, checkpoint, complete, fail, a question and its answer, review,
// dependency failure, retry, and a concurrent worker's claims (lease renewal, take-over of a
// lapsed claim, the fencing check).
// Nothing else writes `status` or the fields that go with it; every timestamp they write is
// logTimestamp's (UTC, seconds). A recovery ends a task through complete or fail like any run.
import { addUsd } from '../agents/parsers/parser';
import type { AgentReport } from '../agents/report';
import { compareIds } from '../ids';
import { InputError } from '../inputError';
import { type Category, logTimestamp } from '../log/logLine';
import { writableTask } from '../taskFile/draft';
import type { Checkpoint, Question, ReviewComment, ReviewRound, Task, TaskFile } from '../taskFile/schema';
import { blockedDependents, type DependencyFailure, eligibleTasks, findDependencyFailures } from './dag';
import { type ErrorEntry, formatErrorEntry, oneLineReason } from './errorEntry';
import { taskWithId } from './taskIndex';

/** How much failing output an error_tail keeps (characters): enough for a hover, bounded. */
export const ERROR_TAIL_CHARS = 4000;

/**
 * The task `id`, which a run is about to write to, as an object it may write (writableTask: a
 * transaction's draft shares unchanged tasks with the store, frozen).
 */
export function mustFind(file: TaskFile, id: string): Task {
  const task = taskWithId(file.tasks, id);
  // A person deleted the task from the file while it ran: nothing left to record it in.
  if (!task) throw new TaskVanishedError(id);
  return writableTask(file, task);
}

/** The task `id` to write to, or undefined when there is none. */
function findWritable(file: TaskFile, id: string): Task | undefined {
  const task = taskWithId(file.tasks, id);
  return task && writableTask(file, task);
}

export class TaskVanishedError extends Error {
  constructor(readonly taskId: string) {
    super(`task ${taskId} is no longer in harness-tasks.json`);
    this.name = 'TaskVanishedError';
  }
}

export interface Claim {
  agentId: string;
  /** The task's branch; null when it runs in the main working tree (in-place). */
  branch: string | null;
  /** The commit the task's work starts from (its worktree's base, or HEAD in place). */
  baseCommit: string;
  /** Concurrent mode: the worker taking it, with a lease. */
  worker?: WorkerLease | undefined;
}

/** A concurrent worker's identity and how long its claims live without a renewal. */
export interface WorkerLease {
  workerId: string;
  leaseSeconds: number;
}

/** What a worker holds: the claim is its own while the task's claim_generation is unchanged. */
export interface ClaimToken {
  taskId: string;
  workerId: string;
  generation: number;
}

/** The task was claimed (or ended) by another worker between choosing it and claiming it. */
export class ClaimRefusedError extends Error {
  constructor(readonly taskId: string) {
    super(`task ${taskId} was claimed by another worker first`);
    this.name = 'ClaimRefusedError';
  }
}

/** This worker's claim was taken over (its lease lapsed): it must not write or merge the task. */
export class ClaimLostError extends Error {
  constructor(
    readonly token: ClaimToken,
    readonly holder: string | null | undefined,
  ) {
    super(
      `the claim of ${token.workerId} on ${token.taskId} (generation ${token.generation}) was taken over${holder ? ` by ${holder}` : ''}`,
    );
    this.name = 'ClaimLostError';
  }
}

/**
 * An agent takes the task: in_progress, one more attempt counted (only a dispatch counts one),
 * who runs it where. Checkpoints are kept
 * (each says which attempt made it): they are what a resumed or retried agent learns from.
 * Returns the task as it was before, and the attempt's number.
 */
export function dispatchTask(
  file: TaskFile,
  id: string,
  claim: Claim,
  now = new Date(),
): { before: Task; attempt: number; token?: ClaimToken | undefined } {
  const t = mustFind(file, id);
  // A concurrent worker chose the task in an earlier transaction: the claim is the real gate.
  if (claim.worker && !eligibleTasks(file.tasks).some((e) => e.id === id)) throw new ClaimRefusedError(id);
  const before = structuredClone(t);
  t.status = 'in_progress';
  t.attempts += 1;
  t.agent_id = claim.agentId;
  t.worktree_branch = claim.branch;
  t.started_at_commit = claim.baseCommit;
  const token = claim.worker ? takeClaim(t, claim.worker, now) : undefined;
  return { before, attempt: t.attempts, token };
}

function takeClaim(t: Task, worker: WorkerLease, now: Date): ClaimToken {
  t.claimed_by = worker.workerId;
  t.lease_expires_at = leaseEnd(now, worker.leaseSeconds);
  t.claim_generation = (t.claim_generation ?? 0) + 1;
  return { taskId: t.id, workerId: worker.workerId, generation: t.claim_generation };
}

function leaseEnd(now: Date, seconds: number): string {
  return logTimestamp(new Date(now.getTime() + seconds * 1000));
}

/** Whether `token` is still the task's claim (in progress, same worker, same generation). */
export function holdsClaim(t: Task | undefined, token: ClaimToken): boolean {
  return !!t && t.status === 'in_progress' && t.claimed_by === token.workerId && (t.claim_generation ?? 0) === token.generation;
}

/** A heartbeat or checkpoint of the holder: the lease runs `leaseSeconds` from now again. */
export function renewLease(file: TaskFile, token: ClaimToken, leaseSeconds: number, now = new Date()): 'renewed' | 'lost' {
  if (!holdsClaim(taskWithId(file.tasks, token.taskId), token)) return 'lost';
  findWritable(file, token.taskId)!.lease_expires_at = leaseEnd(now, leaseSeconds);
  return 'renewed';
}

/** Whether a concurrent worker may take over the in-progress task: its lease lapsed, or it has none. */
export function claimLapsed(t: Task, now = new Date()): boolean {
  if (t.status !== 'in_progress') return false;
  if (!t.claimed_by || !t.lease_expires_at) return true;
  const end = Date.parse(t.lease_expires_at);
  return !Number.isFinite(end) || end <= now.getTime();
}

/**
 * A worker takes over an in-progress task whose claim lapsed (its holder died or stalled), or
 * one its own earlier process held: a new claim generation, so the old holder's fencing check
 * fails. Returns the new token and the claim it replaced, or undefined when the task is not
 * its to take (not in progress, or another worker's lease is live).
 */
export function takeOverClaim(
  file: TaskFile,
  id: string,
  worker: WorkerLease,
  now = new Date(),
): { token: ClaimToken; previous: { claimedBy: string | null; leaseExpiresAt: string | null; generation: number } } | undefined {
  const shared = taskWithId(file.tasks, id);
  if (!shared || shared.status !== 'in_progress') return undefined;
  if (shared.claimed_by !== worker.workerId && !claimLapsed(shared, now)) return undefined;
  const t = writableTask(file, shared);
  const previous = { claimedBy: t.claimed_by ?? null, leaseExpiresAt: t.lease_expires_at ?? null, generation: t.claim_generation ?? 0 };
  return { token: takeClaim(t, worker, now), previous };
}

function releaseClaim(t: Task): void {
  t.agent_id = null;
  t.worktree_branch = null;
  if (t.claimed_by !== undefined) t.claimed_by = null;
  if (t.lease_expires_at !== undefined) t.lease_expires_at = null;
}

/**
 * A new agent continues an interrupted attempt in the work it left (its branch and base commit
 * stay). The attempt is the same one, so nothing more is counted: an interruption (a crash, a
 * person's stop, a lost worker) is never the task's fault; crash loops are stopped per session
 * instead. Returns the task as it was before, and the attempt's number.
 */
export function resumeTask(file: TaskFile, id: string, agentId: string): { before: Task; attempt: number; token?: ClaimToken | undefined } {
  const t = mustFind(file, id);
  const before = structuredClone(t);
  t.status = 'in_progress';
  t.agent_id = agentId;
  return { before, attempt: t.attempts };
}

/**
 * An interrupted attempt that left nothing to continue from (no commit, no change, no
 * checkpoint; or no worktree or branch at all): the task goes back to pending to start afresh,
 * with no error recorded and the attempt given back (an interruption is not the task's fault).
 */
export function restartTask(file: TaskFile, id: string): Task {
  const t = mustFind(file, id);
  t.status = 'pending';
  t.attempts = Math.max(0, t.attempts - 1);
  releaseClaim(t);
  return t;
}

/**
 * An in-place task whose base commit is gone (its branch was rewritten): not the task's fault,
 * and there is nothing to resume or roll back to. The attempt in progress is given back: the
 * task goes back to pending without a base, no error recorded.
 */
export function forgetVanishedBase(file: TaskFile, id: string): Task {
  const t = mustFind(file, id);
  t.status = 'pending';
  t.attempts = Math.max(0, t.attempts - 1);
  releaseClaim(t);
  t.started_at_commit = null;
  return t;
}

/**
 * The attempt failed for the machine's reason (ENV_SETUP) or a configuration error, not the
 * task's: it is not charged. `before` is the task as dispatchTask found it. By default the task
 * returns to that state: status, attempts, claim, base commit and checkpoints as they were. With
 * `keepWork` (the agent's work is on its branch, kept for the next run) nothing changes: the
 * task stays in progress, and the next run continues the same attempt as after any interruption.
 */
export function undoDispatch(file: TaskFile, id: string, before: Task, opts: { keepWork?: boolean } = {}): Task {
  const t = mustFind(file, id);
  if (opts.keepWork) return t;
  t.attempts = before.attempts;
  // The fields dispatchTask writes, each as it was (absent when it was absent).
  for (const key of ['status', 'agent_id', 'worktree_branch', 'started_at_commit', 'checkpoints'] as const) {
    if (key in before) (t as Record<string, unknown>)[key] = structuredClone(before[key]);
    else delete t[key];
  }
  return t;
}

/**
 * Files a merged attempt changed outside the task's files_hint, kept on the task so `status`
 * and the editor can show them (replaced by each merged attempt; an empty list clears it).
 */
export function recordOutOfScope(file: TaskFile, id: string, files: readonly string[]): Task {
  const t = mustFind(file, id);
  if (files.length) t.out_of_scope = [...files];
  else delete t.out_of_scope;
  return t;
}

/**
 * What an attempt's agent reported it spent, added to the task's `cost` (dollars and tokens
 * summed, attempts_reported + 1). A report with neither cost nor tokens changes nothing: a tool
 * that reports nothing shows nothing, never an estimate. Returns whether it recorded.
 */
export function recordCost(file: TaskFile, id: string, report: Pick<AgentReport, 'costUsd' | 'tokens'>): boolean {
  const input = report.tokens?.input;
  const output = report.tokens?.output;
  if (report.costUsd === undefined && input === undefined && output === undefined) return false;
  const t = mustFind(file, id);
  const cost = (t.cost ??= { attempts_reported: 0 });
  if (report.costUsd !== undefined) cost.usd = addUsd(cost.usd, report.costUsd);
  if (input !== undefined) cost.input_tokens = (cost.input_tokens ?? 0) + input;
  if (output !== undefined) cost.output_tokens = (cost.output_tokens ?? 0) + output;
  cost.attempts_reported = (cost.attempts_reported ?? 0) + 1;
  return true;
}

/**
 * A queue worker took the attempt of agent `agentId`: who runs it is shown where a concurrent
 * worker's claim is (claimed_by). Only while that agent's attempt is the task's; returns whether
 * it was recorded. The lease itself is the queue's (its job lock), so no lease_expires_at here.
 */
export function recordQueueRunner(file: TaskFile, id: string, agentId: string, runner: string): boolean {
  const t = taskWithId(file.tasks, id);
  if (!t || t.status !== 'in_progress' || t.agent_id !== agentId) return false;
  writableTask(file, t).claimed_by = runner;
  return true;
}

/** A CHECKPOINT line of the running agent, kept with the time it was seen and who made it. */
export function recordCheckpoint(file: TaskFile, id: string, step: CheckpointStep, now = logTimestamp()): Checkpoint {
  const t = mustFind(file, id);
  const checkpoint: Checkpoint = { ...step, timestamp: now, attempt: t.attempts, agent_id: t.agent_id ?? null };
  (t.checkpoints ??= []).push(checkpoint);
  return checkpoint;
}

export type CheckpointStep = Pick<Checkpoint, 'step' | 'total' | 'description'>;

/** Validated and merged (or found merged by a recovery): completed, its claim released. */
export function completeTask(file: TaskFile, id: string, now = logTimestamp()): Task {
  const t = mustFind(file, id);
  t.status = 'completed';
  t.completed_at = now;
  releaseClaim(t);
  t.error_tail = null;
  delete t.question;
  return t;
}

/**
 * The agent ended its turn with a question for a person: the task awaits an answer, its
 * worktree and branch kept (worktree_branch and started_at_commit stay: the answered attempt
 * resumes there). The asking attempt is given back, as undoDispatch gives one back: attempts
 * as `before` its dispatch (`before`: the task as the attempt's dispatch or resumption found
 * it), so only the attempt after the answer counts. Returns the question.
 */
export function askQuestion(file: TaskFile, id: string, before: Task, text: string, now = logTimestamp()): Question {
  const t = mustFind(file, id);
  const question: Question = { text, asked_at: now, attempt: t.attempts, agent_id: t.agent_id ?? null };
  t.status = 'awaiting_answer';
  // A resumed attempt (in progress before) was counted at its first dispatch.
  t.attempts = before.status === 'in_progress' ? Math.max(0, before.attempts - 1) : before.attempts;
  t.question = question;
  if (t.claimed_by !== undefined) t.claimed_by = null;
  if (t.lease_expires_at !== undefined) t.lease_expires_at = null;
  return question;
}

/** Whether the task's question was answered and the attempt that resumes its worktree has not started yet. */
export function awaitsResume(task: Task): boolean {
  return task.status === 'pending' && typeof task.question?.answer === 'string';
}

/**
 * A person's answer to the task's question: pending again, the answer on the question, so the
 * pool picks it first and its next attempt resumes the asking one's worktree with both in its
 * prompt. Throws InputError (changing nothing) for an unknown task or one not awaiting an answer.
 */
export function answerQuestion(file: TaskFile, id: string, answer: string, now = logTimestamp()): Task {
  const found = taskWithId(file.tasks, id);
  if (!found) throw new InputError(`no task "${id}" in harness-tasks.json`);
  if (found.status !== 'awaiting_answer' || !found.question) {
    throw new InputError(
      `task "${id}" is ${found.status.replace('_', ' ')}, not awaiting an answer: only a task whose agent asked a question can be answered`,
    );
  }
  const t = writableTask(file, found);
  t.status = 'pending';
  t.question = { ...t.question!, answer, answered_at: now };
  return t;
}

/**
 * Its validation passed under manual review: the task awaits a person's review of `commit`, its
 * worktree and branch kept (worktree_branch and started_at_commit stay) and the claim released.
 * The attempt stays counted: it succeeded. After a request for changes this is the next round.
 */
export function awaitReview(file: TaskFile, id: string, change: { commit: string; base: string }, now = logTimestamp()): ReviewRound {
  const t = mustFind(file, id);
  const last = t.review_round;
  const number = last?.verdict === 'changes_requested' ? last.number + 1 : (last?.number ?? 1);
  const round: ReviewRound = { number, commit: change.commit, base: change.base, requested_at: now };
  t.status = 'awaiting_review';
  t.review_round = round;
  if (t.claimed_by !== undefined) t.claimed_by = null;
  if (t.lease_expires_at !== undefined) t.lease_expires_at = null;
  return round;
}

/** What a person decided on the task's review that no attempt has acted on yet. */
export function reviewDecision(task: Task): 'approved' | 'changes_requested' | undefined {
  return task.status === 'pending' ? (task.review_round?.verdict ?? undefined) : undefined;
}

function awaitingReview(file: TaskFile, id: string, verb: string): Task {
  const found = taskWithId(file.tasks, id);
  if (!found) throw new InputError(`no task "${id}" in harness-tasks.json`);
  if (found.status !== 'awaiting_review' || !found.review_round) {
    throw new InputError(
      `task "${id}" is ${found.status.replace('_', ' ')}, not awaiting review: only a task whose validation passed under review "manual" can be ${verb}`,
    );
  }
  return writableTask(file, found);
}

/**
 * A person approves the change under review: pending again with the verdict, so the pool takes
 * it first and its next dispatch merges the reviewed branch without an agent. That dispatch
 * counts the approved attempt again, so it is given back here.
 */
export function approveReview(file: TaskFile, id: string, now = logTimestamp()): Task {
  const t = awaitingReview(file, id, 'approved');
  t.status = 'pending';
  t.attempts = Math.max(0, t.attempts - 1);
  t.review_round = { ...t.review_round!, verdict: 'approved', decided_at: now };
  return t;
}

/**
 * A person asks for changes: pending again with the comments, so the next dispatch resumes the
 * same worktree with them in its prompt. A review round is not a failed attempt: the attempt is
 * given back (the next dispatch counts it again). Refused after `maxRounds` requests.
 */
export function requestChanges(
  file: TaskFile,
  id: string,
  comments: readonly ReviewComment[],
  maxRounds: number,
  now = logTimestamp(),
): Task {
  const t = awaitingReview(file, id, 'sent back');
  if (!comments.length) throw new InputError(`request-changes ${id}: at least one comment is needed`);
  const round = t.review_round!;
  if (round.number > maxRounds) {
    throw new InputError(
      `task "${id}" has had changes requested ${round.number - 1} times, the most session_config.max_review_rounds (${maxRounds}) allows: approve it, or \`launchpad retry ${id}\` starts it afresh`,
    );
  }
  t.status = 'pending';
  t.attempts = Math.max(0, t.attempts - 1);
  t.review_round = { ...round, verdict: 'changes_requested', decided_at: now, comments: [...comments] };
  return t;
}

/**
 * A completed task whose merge was reverted because the base branch failed its integration
 * check after it (or an attempt that may not merge because a dependency of it was). Charged
 * (the task broke the base): `[INTEGRATION] reason` appended to error_log, `tail` kept from its
 * start (its first line says why), and back to pending, or failed once out of attempts. Uncharged
 * (its own work was fine; it built on a task that was reverted): the attempt is given back and
 * the task waits for that one again. Its claim is released either way. Returns the entry when
 * charged.
 */
export function requeueAfterIntegration(
  file: TaskFile,
  id: string,
  how: { charged: true; reason: string; tail: string } | { charged: false },
  now = logTimestamp(),
): ErrorEntry | undefined {
  const t = mustFind(file, id);
  delete t.completed_at;
  releaseClaim(t);
  if (!how.charged) {
    t.status = 'pending';
    t.attempts = Math.max(0, t.attempts - 1);
    return undefined;
  }
  const entry = { category: 'INTEGRATION' as const, reason: oneLineReason(how.reason) };
  t.error_log.push(formatErrorEntry(entry.category, entry.reason));
  t.error_tail = how.tail.slice(0, ERROR_TAIL_CHARS);
  if (t.attempts >= t.max_attempts) {
    t.status = 'failed';
    t.failed_at = now;
  } else t.status = 'pending';
  return entry;
}

export interface Failure {
  category: Category;
  /** Why, in words; flattened to one bounded line for the entry. */
  reason: string;
  /** The failing output; its last ERROR_TAIL_CHARS are kept. */
  tail?: string | undefined;
  /** No retry can help (the attempt's base commit is gone): attempts set to max_attempts. */
  final?: boolean | undefined;
}

/**
 * A failed attempt: failed, `[CATEGORY] reason` appended to error_log, the output's tail kept,
 * its claim released. Returns the entry as written.
 */
export function failTask(file: TaskFile, id: string, failure: Failure, now = logTimestamp()): ErrorEntry {
  const entry = { category: failure.category, reason: oneLineReason(failure.reason) };
  const t = mustFind(file, id);
  t.status = 'failed';
  t.error_log.push(formatErrorEntry(entry.category, entry.reason));
  t.error_tail = failure.tail ? failure.tail.slice(-ERROR_TAIL_CHARS) : null;
  t.failed_at = now;
  if (failure.final) t.attempts = Math.max(t.attempts, t.max_attempts);
  releaseClaim(t);
  // Its worktree is discarded: a later attempt starts afresh, not from the question's or the review's work.
  delete t.question;
  delete t.review_round;
  return entry;
}

/**
 * What a run marks before choosing work: every task findDependencyFailures finds (a cycle, an
 * unknown dependency, a permanently failed one) fails with its `[DEPENDENCY]` entry. Returns
 * what it marked.
 */
export function markDependencyFailures(file: TaskFile, now = logTimestamp()): DependencyFailure[] {
  const failures = findDependencyFailures(file.tasks);
  if (!failures.length) return failures;
  const byId = new Map(file.tasks.map((t) => [t.id, t]));
  for (const f of failures) {
    const t = writableTask(file, byId.get(f.taskId)!);
    t.status = 'failed';
    t.error_log.push(f.entry);
    t.failed_at = now;
    releaseClaim(t);
  }
  return failures;
}

/**
 * Whether `retry` accepts the task: every failed one, whatever its attempts or its reason, and
 * one awaiting review (its reviewed commits are kept under refs/launchpad/attempts/).
 */
export function canRetry(task: Task): boolean {
  return task.status === 'failed' || task.status === 'awaiting_review';
}

/**
 * A person's retry: the failed task goes back to pending with attempts 0 (its budget restored)
 * and its error_log kept, so the next prompt still carries what went wrong. The tasks blocked
 * because of it, transitively, go back to pending with their own attempts. Returns every task
 * it reset, by id; throws InputError (changing nothing) for an unknown or not failed task.
 */
export function retryTask(file: TaskFile, id: string): Task[] {
  return retryTasks(file, [id]);
}

/**
 * retryTask for several tasks at once, all or nothing: every id must name a failed task. A task
 * in the list that an earlier one unblocked gets its budget restored too.
 */
export function retryTasks(file: TaskFile, ids: readonly string[]): Task[] {
  const tasks = ids.map((id) => {
    const task = taskWithId(file.tasks, id);
    if (!task) throw new InputError(`no task "${id}" in harness-tasks.json`);
    if (!canRetry(task)) {
      throw new InputError(
        `task "${id}" is ${task.status.replace('_', ' ')}, not failed: only a failed task (or one awaiting review) can be retried`,
      );
    }
    return task;
  });
  const reset = new Map<string, Task>();
  for (const shared of tasks) {
    const task = writableTask(file, reset.get(shared.id) ?? shared);
    task.attempts = 0;
    // A change under review is given up: the next attempt starts afresh.
    if (task.status === 'awaiting_review') {
      delete task.review_round;
      task.worktree_branch = null;
    }
    for (const t of [task, ...unblockDependents(file, task.id)]) {
      t.status = 'pending';
      t.failed_at = null;
      reset.set(t.id, t);
    }
  }
  return [...reset.values()].sort((a, b) => compareIds(a.id, b.id));
}

/**
 * The tasks a run marked failed because of `id` (directly or through another blocked task) go
 * back to pending with their own attempts: `id` is being retried or removed. Returns them.
 */
export function unblockDependents(file: TaskFile, id: string): Task[] {
  const unblocked = blockedDependents(file.tasks, id).map((t) => writableTask(file, t));
  for (const t of unblocked) {
    t.status = 'pending';
    t.failed_at = null;
  }
  return unblocked;
}

/**
 * A spec's box a person ticked by hand: the task it imports as is done (no attempt, no merge of
 * Launchpad's). Returns whether it changed.
 */
export function markDoneByHand(file: TaskFile, id: string): boolean {
  const t = mustFind(file, id);
  if (t.status === 'completed') return false;
  t.status = 'completed';
  return true;
}

/** A spec's box a person emptied: the completed task is to be done again, with a fresh budget. */
export function reopenTask(file: TaskFile, id: string): boolean {
  const t = mustFind(file, id);
  if (t.status !== 'completed') return false;
  t.status = 'pending';
  t.attempts = 0;
  t.completed_at = null;
  return true;
}

/**
 * A failure that was not the task's after all (a usage limit the tool hit, found only once the
 * attempt was recorded as failed): pending again, the attempt and its error entry given back.
 * Returns whether it changed.
 */
export function unfailTask(file: TaskFile, id: string): boolean {
  const found = taskWithId(file.tasks, id);
  if (!found || found.status !== 'failed') return false;
  const t = writableTask(file, found);
  t.status = 'pending';
  t.attempts = Math.max(0, t.attempts - 1);
  t.error_log.pop();
  t.error_tail = null;
  t.failed_at = null;
  return true;
}
