// Every count of tasks by state that a person sees (the status bar, the run's notification, the
// Tasks view's groups, `launchpad status` and its --json) comes from here, over one read of the
// task file and of whether a run is live. Each name has one meaning; the counts are disjoint and
// add up to tasks_total.
import type { Task } from '../taskFile/schema';
import { analyzeTasks, type TaskState } from './dag';

export interface TaskCounts {
  tasks_total: number;
  /** Merged. */
  completed: number;
  /** In progress under a live run (or a concurrent worker's current lease). */
  running: number;
  /** In progress with no run holding it: the next run resumes it. */
  interrupted: number;
  /** Its agent asked a question: waits for a person's `launchpad answer` (its dependents wait too). */
  awaiting_answer: number;
  awaiting_review: number;
  /** Can start now. */
  ready: number;
  /** Waiting on dependencies that have not completed yet. */
  waiting: number;
  /** No validation command: no run starts it. */
  needs_validation: number;
  /** Failed, and a run retries it by itself. */
  retrying: number;
  /** Failed for good: its attempts are used up or it went over its cost limit (`launchpad retry` starts it again). */
  failed: number;
  /** Waiting on a failed task (or on a cycle or an unknown dependency): no run starts it. */
  blocked: number;
}

const FIELD: Record<TaskState, Exclude<keyof TaskCounts, 'tasks_total'>> = {
  completed: 'completed',
  running: 'running',
  interrupted: 'interrupted',
  awaiting_answer: 'awaiting_answer',
  awaiting_review: 'awaiting_review',
  ready: 'ready',
  waiting: 'waiting',
  needs_validation: 'needs_validation',
  retryable: 'retrying',
  failed: 'failed',
  blocked: 'blocked',
};

/** What says whether a run is working on an in_progress task now. */
export interface RunPresence {
  /** A live `launchpad run` holds the session lock. */
  live: boolean;
  /** Now, in ms: a concurrent worker's lease holds its task until it expires. */
  now: number;
}

/** A live run holds every in_progress task; without one, a task whose worker's lease is current is held. */
export function heldBy(presence: RunPresence): (task: Task) => boolean {
  return (t) => presence.live || (!!t.lease_expires_at && Date.parse(t.lease_expires_at) > presence.now);
}

/** How many tasks are in `state`. */
export function countOf(c: TaskCounts, state: TaskState): number {
  return c[FIELD[state]];
}

/** The counts of tasks whose states are given (from analyzeTasks, or TaskSummary.state). */
export function countStates(states: Iterable<TaskState>): TaskCounts {
  const c: TaskCounts = {
    tasks_total: 0,
    completed: 0,
    running: 0,
    interrupted: 0,
    awaiting_answer: 0,
    awaiting_review: 0,
    ready: 0,
    waiting: 0,
    needs_validation: 0,
    retrying: 0,
    failed: 0,
    blocked: 0,
  };
  for (const s of states) {
    c.tasks_total++;
    c[FIELD[s]]++;
  }
  return c;
}

/** The counts of a task file as it is, with whether a run is live. */
export function countTasks(tasks: readonly Task[], presence: RunPresence): TaskCounts {
  return countStates(analyzeTasks(tasks, heldBy(presence)).states.values());
}

/**
 * `3/7 completed · 1 running · 1 awaiting an answer · 1 to retry · 1 failed · 1 blocked`: completed out of all, then
 * what moves or needs a person; the states with none are left out. `all` adds the tasks that
 * wait their turn (`2 ready · 1 waiting`), as `status` shows them; `paint` colours each part.
 */
export function formatCounts(
  c: TaskCounts,
  opts: { all?: boolean; paint?: (field: keyof TaskCounts, text: string) => string } = {},
): string {
  const paint = opts.paint ?? ((_: keyof TaskCounts, text: string) => text);
  const parts = [paint('completed', `${c.completed}/${c.tasks_total} completed`)];
  const add = (field: Exclude<keyof TaskCounts, 'tasks_total'>, words: string) =>
    c[field] && parts.push(paint(field, `${c[field]} ${words}`));
  add('running', 'running');
  add('interrupted', 'interrupted');
  add('awaiting_answer', 'awaiting an answer');
  add('awaiting_review', 'awaiting review');
  add('retrying', 'to retry');
  add('failed', 'failed');
  add('blocked', 'blocked');
  add('needs_validation', 'without validation');
  if (opts.all) {
    add('ready', 'ready');
    add('waiting', 'waiting');
  }
  return parts.join(' · ');
}
