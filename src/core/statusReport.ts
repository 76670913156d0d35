// Everything `status` shows, as data: the CLI prints it, `status --json` emits it, the
// extension reads the same fields. Read-only: no lock, no write.
import { type KeptAttempt, keptAttemptsIn, keptByTask } from './git/keptAttempts';
import { listTaskWorktrees, type TaskWorktree } from './git/taskWorktrees';
import { type IntegrationState, readIntegrationState } from './integration/state';
import { liveLockHolder, type LockHolder } from './lock';
import { tailLog } from './log/logReader';
import type { StatePaths } from './statePaths';
import { countStates, heldBy, type RunPresence, type TaskCounts } from './tasks/counts';
import { analyzeTasks, type TaskState } from './tasks/dag';
import { computeStats } from './tasks/stats';
import { canRetry } from './tasks/transitions';
export { describeCost } from './tasks/stats';
import type { Task, TaskFile } from './taskFile/schema';
import type { StateStore } from './taskFile/store';
import type { SlotState } from './worktrees/poolReport';
import { describePool } from './worktrees/poolText';

/** What a task left in progress that nothing holds is told as, by `status` and the Tasks view. */
export const INTERRUPTED_HINT = 'interrupted: the next run resumes it';

export interface TaskSummary {
  id: string;
  title: string;
  status: Task['status'];
  state: TaskState;
  priority: Task['priority'];
  attempts: number;
  max_attempts: number;
  depends_on: string[];
  /** `launchpad retry` accepts it (every failed task); `state` says whether a run retries it by itself. */
  retryable: boolean;
  agent_id: string | null;
  /** Until when a concurrent worker holds it (null outside concurrent runs). */
  lease_expires_at: string | null;
  worktree_branch: string | null;
  last_error: string | null;
  blocked_reason: string | null;
  validation_command: string | null;
  /** Refs keeping this task's discarded or interrupted attempts (`launchpad prune-attempts` deletes them). */
  kept_attempts: string[];
  /** Files its merged attempt changed outside files_hint (empty when none). */
  out_of_scope: string[];
  /** What its agents reported they spent, summed over attempts; null when none reported anything. */
  cost: TaskCost | null;
  /** Its agent's question (state awaiting_answer), with a person's answer once given; null when none. */
  question: TaskQuestion | null;
  /** Its review before merge (review "manual"): the round, the commit, the verdict and comments; null when none. */
  review: TaskReview | null;
}

export type TaskQuestion = NonNullable<Task['question']>;
export type TaskReview = NonNullable<Task['review_round']>;

export type TaskCost = NonNullable<Task['cost']>;

export interface PoolStatus {
  dir: string;
  /** session_config.worktree_pool. */
  size: number;
  slots: number;
  /** Slots by state (`launchpad pool` describes each). */
  states: Record<SlotState, number>;
  /** Prepared slots at the base branch's head. */
  at_base: number;
  /** `6 slots (5 prepared at the base, 1 claimed)`. */
  summary: string;
}

/** The counts by state (tasks/counts.ts), and two sums of them by the tasks' `status`. */
export interface StatusReport extends TaskCounts {
  root: string;
  /** running + interrupted: the tasks whose status is in_progress. */
  in_progress: number;
  /** ready + waiting + needs_validation: not started, nothing failed in their way. */
  pending: number;
  attempts_total: number;
  /** Dollars the tasks' agents reported, summed; null when none reported any. */
  cost_usd: number | null;
  session_count: number;
  last_session: string | null;
  /** The live `run` holding the session lock, if any. */
  active_session: LockHolder | null;
  worktrees: TaskWorktree[];
  /** The idle worktrees kept for reuse (session_config.worktree_pool), when the pool folder holds any. */
  worktree_pool: PoolStatus | null;
  recent_log: string[];
  tasks: TaskSummary[];
  /** The base branch's integration gate (.launchpad/integration.json), when a check has run; its error when it cannot be read. */
  integration: IntegrationState | null;
  integration_error?: string;
}

/**
 * The tasks as `status` shows them; `kept` (by task id) fills kept_attempts, where git was asked;
 * `presence` says whether an in_progress task is running or interrupted.
 */
export function summarizeTasks(
  file: TaskFile,
  kept: ReadonlyMap<string, readonly KeptAttempt[]> = new Map(),
  presence: RunPresence = { live: true, now: Date.now() },
): TaskSummary[] {
  const { states, blockedReasons } = analyzeTasks(file.tasks, heldBy(presence));
  return file.tasks.map((t) => ({
    id: t.id,
    title: t.title,
    status: t.status,
    state: states.get(t.id)!,
    priority: t.priority,
    attempts: t.attempts,
    max_attempts: t.max_attempts,
    depends_on: t.depends_on,
    retryable: canRetry(t),
    agent_id: t.agent_id ?? null,
    lease_expires_at: t.lease_expires_at ?? null,
    worktree_branch: t.worktree_branch ?? null,
    last_error: t.error_log.at(-1) ?? null,
    blocked_reason: blockedReasons.get(t.id) ?? null,
    validation_command: t.validation?.command ?? null,
    kept_attempts: (kept.get(t.id) ?? []).map((k) => k.ref),
    out_of_scope: t.out_of_scope ?? [],
    cost: t.cost ?? null,
    question: t.question ?? null,
    review: t.review_round ?? null,
  }));
}

/** The pool in a line (no disk walked); null when it holds nothing. */
async function poolStatus(store: StateStore, file: TaskFile, env: NodeJS.ProcessEnv): Promise<PoolStatus | null> {
  // Loaded here: the extension imports this module at activation, and the pool's readers would load the task file's schema.
  const { readPool } = await import('./worktrees/poolReport');
  const pool = await readPool(store.paths, file, { settings: { env } });
  if (!pool?.slots.length) return null;
  const states: Record<SlotState, number> = { prepared: 0, claimed: 0, stale_claim: 0, not_prepared: 0, on_branch: 0, not_worktree: 0 };
  for (const s of pool.slots) states[s.state]++;
  return {
    dir: pool.dir,
    size: pool.size,
    slots: pool.slots.length,
    states,
    at_base: pool.slots.filter((s) => s.state === 'prepared' && s.at_base).length,
    summary: describePool(pool),
  };
}

export async function buildStatus(store: StateStore, logLines = 5, env: NodeJS.ProcessEnv = process.env): Promise<StatusReport> {
  const paths: StatePaths = store.paths;
  const { file } = store.load();
  const stats = computeStats(file.tasks);
  const active = liveLockHolder(paths.sessionLock) ?? null;
  const tasks = summarizeTasks(file, keptByTask(await keptAttemptsIn(paths.root)), { live: !!active, now: Date.now() });
  const counts = countStates(tasks.map((t) => t.state));
  return {
    root: paths.root,
    ...counts,
    in_progress: counts.running + counts.interrupted,
    pending: counts.ready + counts.waiting + counts.needs_validation,
    attempts_total: stats.attempts_total,
    cost_usd: stats.cost_usd ?? null,
    session_count: file.session_count,
    last_session: file.last_session ?? null,
    active_session: active,
    worktrees: await listTaskWorktrees(paths.root),
    worktree_pool: await poolStatus(store, file, env),
    recent_log: tailLog(paths.progress, logLines),
    tasks,
    ...integrationOf(paths),
  };
}

function integrationOf(paths: StatePaths): Pick<StatusReport, 'integration' | 'integration_error'> {
  try {
    return { integration: readIntegrationState(paths.integrationState) ?? null };
  } catch (err) {
    return { integration: null, integration_error: (err as Error).message };
  }
}
