// One pass over the eligible pool, inside a transaction: fail the tasks past their cost limit,
// mark dependency failures, order the eligible pool, pick the batch that can run beside what
// runs, and claim it (transitions.dispatchTask, through taskRun.claimTask). The run loop runs a
// pass in a transaction of its own when it wakes; a task's end runs one in the transaction that
// records its result (Session.afterResult), so a task costs one write of the task file, not
// two, and the loop dispatches what that pass claimed.
import type { Task, TaskFile } from '../taskFile/schema';
import { type DependencyFailure, heldBack, type RetryClock, scanPool, selectBatch } from '../tasks/dag';
import { markDependencyFailures } from '../tasks/transitions';
import { failOverCost } from './budget';
import { holdsTreeForAnswer } from './inPlaceRun';
import type { Session } from './session';
import { type ClaimedTask, claimTask } from './taskRun';

/** What the loop knows when it asks for a pass. */
export interface PassInput {
  /** Tasks running, or claimed and about to be dispatched: the batch runs beside them. */
  running: readonly Task[];
  /** How many more tasks this session may dispatch (max_tasks_per_session). */
  budget: number;
  /** A reached budget or a tool's usage limit: nothing new starts. */
  hold: boolean;
  /** Estimated ms per task id, for the pool's order (TaskDurations). */
  durations: ReadonlyMap<string, number>;
}

export interface PoolPass {
  overCost: Array<{ taskId: string; reason: string }>;
  failures: DependencyFailure[];
  /** How many tasks were eligible (running ones left out). */
  eligible: number;
  /** A failed task waiting for its back-off: when the loop should wake up for it. */
  retryAt: number | undefined;
  missing: Task[];
  allCompleted: boolean;
  /** Concurrent mode: tasks other workers hold. */
  elsewhere: number;
  /** Eligible tasks that wait although slots are free, and why (shared files, a task that runs alone). */
  heldBack: Array<{ id: string; reason: string }>;
  /** A batch was found but no agent is configured. */
  noAgent: boolean;
  /** The tasks to dispatch, each as it was before its claim when claimed here. */
  batch: Task[];
  /** Their claims (empty in place, where runInPlace dispatches its one task itself). */
  claims: ClaimedTask[];
  /** The first eligible task in the pool's order that this pass did not start (null: none). */
  next: string | null;
}

export function poolPass(s: Session, file: TaskFile, input: PassInput): PoolPass {
  const running = new Set(input.running.map((t) => t.id));
  const clock: RetryClock = { head: s.state.head, now: Date.now(), backoffSeconds: s.config.retryBackoffSeconds };
  const overCost = failOverCost(file, s.config.maxCostUsd);
  const failures = markDependencyFailures(file);
  const scan = scanPool(file.tasks, clock, { durations: input.durations }, running);
  // In place, a question's work holds the tree: only its task, once answered, may start.
  const holding = s.inPlace ? file.tasks.find(holdsTreeForAnswer) : undefined;
  const eligible = scan.eligible.filter((t) => !running.has(t.id) && (!holding || t.id === holding.id));
  // Concurrent mode: tasks other workers hold (they constrain the batch, take none of its slots).
  const elsewhere = s.worker ? file.tasks.filter((t) => t.status === 'in_progress' && !running.has(t.id)) : [];
  const maxParallel = s.inPlace ? 1 : s.config.maxParallel;
  const selected = input.budget > 0 && !input.hold ? selectBatch(eligible, input.running, maxParallel, elsewhere) : [];
  let batch = selected.slice(0, input.budget);
  // Only where the rules, not the session's task budget, left slots free.
  const held =
    input.budget > 0 && !input.hold && selected.length <= input.budget
      ? heldBack(eligible, input.running, maxParallel, batch, elsewhere)
      : [];
  const noAgent = batch.length > 0 && !s.config.agentCommand;
  if (noAgent) batch = [];
  const claims = s.inPlace ? [] : batch.map((task) => claimTask(s, file, task.id));
  if (batch.length) s.countIn(file);
  return {
    overCost,
    failures,
    eligible: eligible.length,
    retryAt: scan.retryAt,
    missing: scan.missing,
    allCompleted: file.tasks.every((t) => t.status === 'completed'),
    elsewhere: elsewhere.length,
    heldBack: noAgent ? [] : held,
    noAgent,
    batch: claims.length ? claims.map((c) => c.before) : batch,
    claims,
    next: eligible.find((t) => !batch.includes(t))?.id ?? null,
  };
}

/** A pass as the loop keeps it: what it found, and what it assumed. */
export interface RecordedPass {
  pool: PoolPass;
  /** The transaction it ran in (Session.transactionMark). */
  mark: number;
  /** The dispatch budget it was given. */
  budget: number;
  /** The tasks it counted as running, its own batch included. */
  running: ReadonlySet<string>;
  /** The task whose completion ran it, which may still be ending. */
  ending: string | undefined;
}

export function recordPass(pool: PoolPass, mark: number, input: PassInput, ending?: string): RecordedPass {
  const running = new Set([...input.running, ...pool.batch].map((t) => t.id));
  return { pool, mark, budget: input.budget, running, ending };
}

/**
 * Whether `pass` still stands for a pass now, so the loop need not read the file again: no
 * transaction was asked for since it ran (every task's end asks for one), the tasks running are
 * those it counted (the completed one's may still be ending), and no retry it waits for is due.
 */
export function passStands(s: Session, pass: RecordedPass, running: Iterable<string>, now = Date.now()): boolean {
  if (!s.isLatestTransaction(pass.mark)) return false;
  if (pass.pool.retryAt !== undefined && pass.pool.retryAt <= now) return false;
  let n = 0;
  for (const id of running) {
    if (id === pass.ending) continue;
    if (!pass.running.has(id)) return false;
    n++;
  }
  return n === pass.running.size;
}
