// Every change of a task's state, as functions over the loaded task file (run inside a
// StateStore transaction): dispatch, checkpoint, complete, fail, dependency failure, retry.
// Nothing else writes `status` or the fields that go with it; every timestamp they write is
// logTimestamp's (UTC, seconds). A recovery ends a task through complete or fail like any run.
import { compareIds } from '../ids';
import { InputError } from '../inputError';
import { logTimestamp, type Category } from '../log/logLine';
import type { Checkpoint, Task, TaskFile } from '../taskFile/schema';
import { blockedDependents, findDependencyFailures, type DependencyFailure } from './dag';
import { formatErrorEntry, oneLineReason, type ErrorEntry } from './errorEntry';

/** How much failing output an error_tail keeps (characters): enough for a hover, bounded. */
export const ERROR_TAIL_CHARS = 4000;

/** The task `id`, which a run is about to write to. */
export function mustFind(file: TaskFile, id: string): Task {
  const task = file.tasks.find((t) => t.id === id);
  // A person deleted the task from the file while it ran: nothing left to record it in.
  if (!task) throw new TaskVanishedError(id);
  return task;
}

export class TaskVanishedError extends Error {
  constructor(readonly taskId: string) {
    super(`task ${taskId} is no longer in harness-tasks.json`);
    this.name = 'TaskVanishedError';
  }
}

export interface Claim {
  agentId: string;
  branch: string;
  /** The base branch's commit the task's worktree starts from. */
  baseCommit: string;
}

/**
 * An agent takes the task: in_progress, one more attempt counted (at dispatch, so a task that
 * crashes its controller still runs out of attempts), who runs it where, checkpoints cleared.
 * Returns the task as it was before, and the attempt's number.
 */
export function dispatchTask(file: TaskFile, id: string, claim: Claim): { before: Task; attempt: number } {
  const t = mustFind(file, id);
  const before = structuredClone(t);
  t.status = 'in_progress';
  t.attempts += 1;
  t.agent_id = claim.agentId;
  t.worktree_branch = claim.branch;
  t.started_at_commit = claim.baseCommit;
  t.checkpoints = [];
  return { before, attempt: t.attempts };
}

/**
 * The attempt ended for the machine's reason before the agent ran (its worktree could not be
 * set up: ENV_SETUP), so it is not charged: the task returns to what it was before dispatchTask
 * (`before`): status, attempts, claim, base commit and checkpoints, each absent when it was.
 * error_log is left alone: the failure is the environment's, not the next agent's to read.
 */
export function refundAttempt(file: TaskFile, id: string, before: Task): Task {
  const t = mustFind(file, id);
  for (const key of ['status', 'attempts', 'agent_id', 'worktree_branch', 'started_at_commit', 'checkpoints'] as const) {
    if (key in before) (t as Record<string, unknown>)[key] = structuredClone(before[key]);
    else delete (t as Record<string, unknown>)[key];
  }
  return t;
}

/** A CHECKPOINT line of the running agent, kept with the time it was seen. */
export function recordCheckpoint(file: TaskFile, id: string, step: CheckpointStep, now = logTimestamp()): Checkpoint {
  const checkpoint = { ...step, timestamp: now };
  (mustFind(file, id).checkpoints ??= []).push(checkpoint);
  return checkpoint;
}

export type CheckpointStep = Pick<Checkpoint, 'step' | 'total' | 'description'>;

/** Validated and merged (or found merged by a recovery): completed, its claim released. */
export function completeTask(file: TaskFile, id: string, now = logTimestamp()): Task {
  const t = mustFind(file, id);
  t.status = 'completed';
  t.completed_at = now;
  t.agent_id = null;
  t.worktree_branch = null;
  t.error_tail = null;
  return t;
}

export interface Failure {
  category: Category;
  /** Why, in words; flattened to one bounded line for the entry. */
  reason: string;
  /** The failing output; its last ERROR_TAIL_CHARS are kept. */
  tail?: string | undefined;
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
  t.agent_id = null;
  t.worktree_branch = null;
  return entry;
}

/**
 * What a run marks before choosing work: every task findDependencyFailures finds (a cycle, an
 * unknown dependency, a permanently failed one) fails with its `[DEPENDENCY]` entry. Returns
 * what it marked.
 */
export function markDependencyFailures(file: TaskFile, now = logTimestamp()): DependencyFailure[] {
  const failures = findDependencyFailures(file.tasks);
  const byId = new Map(file.tasks.map((t) => [t.id, t]));
  for (const f of failures) {
    const t = byId.get(f.taskId)!;
    t.status = 'failed';
    t.error_log.push(f.entry);
    t.failed_at = now;
    t.agent_id = null;
    t.worktree_branch = null;
  }
  return failures;
}

/**
 * A person's retry: the failed task goes back to pending with attempts 0 (its budget restored)
 * and its error_log kept, so the next prompt still carries what went wrong. The tasks blocked
 * because of it, transitively, go back to pending with their own attempts. Returns every task
 * it reset, by id; throws InputError (changing nothing) for an unknown or not failed task.
 */
export function retryTask(file: TaskFile, id: string): Task[] {
  const task = file.tasks.find((t) => t.id === id);
  if (!task) throw new InputError(`no task "${id}" in harness-tasks.json`);
  if (task.status !== 'failed') {
    throw new InputError(`task "${id}" is ${task.status.replace('_', ' ')}, not failed: only a failed task can be retried`);
  }
  const unblocked = blockedDependents(file.tasks, id);
  task.attempts = 0;
  for (const t of [task, ...unblocked]) {
    t.status = 'pending';
    t.failed_at = null;
  }
  return [task, ...unblocked].sort((a, b) => compareIds(a.id, b.id));
}
