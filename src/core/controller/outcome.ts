// How a session's end becomes the run's outcome, in one pure function: the first cause that
// stopped it (the machine's failure, an unusable configuration, a crash loop) outranks how the
// loop saw its end, and decides the exit code and the message a person reads.
import { formatCounts, type TaskCounts } from '../tasks/counts';
import type { EnvFailure } from './envFailure';
import type { RunOutcome, StopReason } from './types';

/** What stopped a session before the loop ran out of work: the first one is the one reported. */
export type StopCause =
  /** The machine failed (ENV_SETUP): not the tasks' failure; nothing is charged. */
  | { kind: 'environment'; failure: EnvFailure }
  /** harness-tasks.json or the run's settings became unusable. */
  | { kind: 'config'; message: string }
  /** Sessions keep ending in a crash without progress (crashLoop.ts). */
  | { kind: 'crash-loop'; failure: EnvFailure };

export interface SessionEnd {
  /** How the loop ended. */
  reason: StopReason;
  cause: StopCause | undefined;
  /** The task file's counts as the session leaves it (tasks/counts.ts: the names a person sees everywhere). */
  counts: TaskCounts;
  /** Dollars the tasks' agents reported, summed; absent when none reported any. */
  costUsd?: number | undefined;
  /** Tasks whose attempt could not be given back after the machine failed (the task file could not be written). */
  unrecorded: readonly string[];
  /** The words for a budget or a usage limit that held the run (budget.ts's holdMessage). */
  hold?: string | undefined;
  /** The work left waits only on people (dag.waitsOnPeople): answers to these tasks' questions… */
  awaitingAnswers?: readonly string[] | undefined;
  /** …and reviews of these tasks. */
  awaitingReviews?: readonly string[] | undefined;
}

/** The run's outcome from the session's end (its number and notes are added by the caller). */
export function outcomeOf(end: SessionEnd): Pick<RunOutcome, 'exitCode' | 'reason' | 'message'> {
  const { cause } = end;
  const left = countsText(end);
  if (cause?.kind === 'environment' || cause?.kind === 'crash-loop') {
    const message = `stopped by the environment, not by the tasks (${notCharged(end.unrecorded)}): ${cause.failure.cause}\nto fix: ${cause.failure.advice}; then run launchpad again (${left})`;
    return { exitCode: 2, reason: cause.kind === 'crash-loop' ? 'crash-loop' : 'environment', message };
  }
  if (cause?.kind === 'config' || end.reason === 'config-error')
    return { exitCode: 2, reason: 'config-error', message: describe('config-error', end.counts.tasks_total, left) };
  if (end.counts.completed === end.counts.tasks_total)
    return { exitCode: 0, reason: 'all-completed', message: describe('all-completed', end.counts.tasks_total, left) };
  const answers = end.awaitingAnswers ?? [];
  const reviews = end.awaitingReviews ?? [];
  if (end.reason === 'nothing-runnable' && (answers.length || reviews.length)) {
    const waits = [
      ...(answers.length ? [`${answers.join(', ')} asked a question (launchpad answer ID "…")`] : []),
      ...(reviews.length ? [`${reviews.join(', ')} awaits review (launchpad review ID, then approve or request-changes)`] : []),
    ];
    return {
      exitCode: 8,
      reason: answers.length ? 'awaiting-answers' : 'awaiting-review',
      message: `waiting for people: ${waits.join('; ')} (${left}); then run again`,
    };
  }
  if (end.reason === 'budget' || end.reason === 'usage-limit')
    return { exitCode: end.reason === 'budget' ? 6 : 7, reason: end.reason, message: `${end.hold} (${left})` };
  return { exitCode: 1, reason: end.reason, message: describe(end.reason, end.counts.tasks_total, left) };
}

/** Whether an environment stop charged anything: never, unless the task file could not be written. */
export function notCharged(unrecorded: readonly string[]): string {
  return unrecorded.length
    ? `the attempts of ${unrecorded.join(', ')} stay counted: harness-tasks.json could not be written`
    : 'no attempt was charged';
}

/** The session's counts, as the end of a message shows them: `1/3 completed · 1 failed · 1 ready`. */
function countsText(end: SessionEnd): string {
  return formatCounts(end.counts, { all: true }) + (end.costUsd !== undefined ? ` · $${end.costUsd} reported` : '');
}

function describe(reason: StopReason, total: number, left: string): string {
  switch (reason) {
    case 'all-completed':
      return total ? `all ${total} tasks completed` : 'no tasks yet: add some with "launchpad add"';
    case 'nothing-runnable':
      return `stopped: nothing left that can run (${left})`;
    case 'max-tasks-per-session':
      return `stopped: max_tasks_per_session reached (${left}); run again to continue`;
    case 'stopped':
      return `stopped by request (${left}); the next run recovers tasks in progress`;
    case 'config-error':
      return `stopped: configuration error, see the log (${left})`;
    case 'controller-error':
      return `stopped: controller error, see the log and the Launchpad output (${left})`;
    default:
      return `stopped: ${reason} (${left})`;
  }
}
