// The dependency rules, in one place: cycle detection, unknown dependencies, blocked
// propagation to a fixpoint, the eligible pool and its order, batch construction, and the
// state a task shows. Pure functions over the task list; linear in tasks + edges.
import { compareIds } from '../ids';
import type { Category } from '../log/logLine';
import type { Task } from '../taskFile/schema';
import { formatErrorEntry, isCostLimitEntry, parseErrorEntry } from './errorEntry';
import { positions, reverseEdges, taskById } from './taskIndex';

/**
 * What a person sees for a task; `status` plus what the dependency rules say about it. An
 * in_progress task is `running` while a run holds it, `interrupted` when none does (the next run
 * resumes it). A task `awaiting_answer` is neither eligible nor failed: it and its dependents wait
 * for a person's `launchpad answer`.
 */
export type TaskState =
  | 'running'
  | 'interrupted'
  | 'awaiting_answer'
  | 'awaiting_review'
  | 'ready'
  | 'waiting'
  | 'needs_validation'
  | 'retryable'
  | 'failed'
  | 'blocked'
  | 'completed';

/** A failure the dependency rules put on a task: `entry` goes to its error_log. */
export interface DependencyFailure {
  taskId: string;
  /** The entry's text after `[DEPENDENCY] `, as the ERROR line logs it. */
  reason: string;
  entry: string;
  /** The permanently failed dependency that blocks it, when that is the reason. */
  blockedBy?: string;
}

/** The reason of a task blocked by a permanently failed dependency: `Blocked by failed <id>`. */
const BLOCKED_BY = 'Blocked by failed ';

/** The category of an error_log entry `[CATEGORY] reason`. */
export function entryCategory(entry: string | undefined): Category | undefined {
  return parseErrorEntry(entry)?.category;
}

export function lastFailureCategory(task: Task): Category | undefined {
  return entryCategory(task.error_log.at(-1));
}

/**
 * Failed by the dependency rules (cycle, unknown or failed dependency). The protocol says an
 * error_log that *contains* a [DEPENDENCY] entry; we look at the last entry, so a task that
 * was unblocked by a retry and later failed on its own stays retryable.
 */
export function isDependencyFailure(task: Task): boolean {
  return task.status === 'failed' && lastFailureCategory(task) === 'DEPENDENCY';
}

/** Failed and will never be retried without a person's `retry`. */
export function isPermanentlyFailed(task: Task): boolean {
  return (
    task.status === 'failed' && (task.attempts >= task.max_attempts || isDependencyFailure(task) || isCostLimitEntry(task.error_log.at(-1)))
  );
}

export function isRetryable(task: Task): boolean {
  return task.status === 'failed' && !isPermanentlyFailed(task);
}

export function hasValidationCommand(task: Task): boolean {
  return !!task.validation?.command?.trim();
}

/** An empty files_hint may touch anything; a merge conflict retries alone. */
export function runsSolo(task: Task): boolean {
  return task.files_hint.length === 0 || lastFailureCategory(task) === 'MERGE_CONFLICT';
}

/**
 * What a run marks before selecting work: tasks on a cycle, tasks with unknown dependencies,
 * then everything that depends on a permanently failed task, repeated to a fixpoint. Tasks
 * already failed for a dependency reason are not marked again.
 */
export function findDependencyFailures(tasks: readonly Task[]): DependencyFailure[] {
  if (stillSettled(tasks)) return [];
  const failures = dependencyFailures(tasks);
  lastSettled = failures.length ? undefined : settledState(tasks);
  return failures;
}

function dependencyFailures(tasks: readonly Task[]): DependencyFailure[] {
  const pos = positions(tasks);
  const failures: DependencyFailure[] = [];
  const marked = new Set<string>();
  const mark = (task: Task, reason: string, blockedBy?: string) => {
    marked.add(task.id);
    if (isDependencyFailure(task)) return;
    const entry = formatErrorEntry('DEPENDENCY', reason);
    failures.push(blockedBy === undefined ? { taskId: task.id, reason, entry } : { taskId: task.id, reason, entry, blockedBy });
  };

  for (const task of tasks) {
    if (task.status === 'completed') continue;
    const unknown = task.depends_on.find((d) => !pos.has(d));
    if (unknown !== undefined) mark(task, `Unknown dependency ${unknown}`);
  }
  for (const [taskId, cycle] of findCycles(tasks, pos)) {
    if (!marked.has(taskId)) mark(tasks[pos.get(taskId)!]!, `Circular dependency detected: ${cycle}`);
  }

  // Blocked propagation: a breadth-first walk over reverse edges from every permanent failure.
  const dependents = reverseEdges(tasks);
  const queue = tasks.filter((t) => marked.has(t.id) || isPermanentlyFailed(t)).map((t) => t.id);
  const seen = new Set(queue);
  for (let i = 0; i < queue.length; i++) {
    const failedId = queue[i]!;
    for (const j of dependents.get(failedId) ?? []) {
      const dep = tasks[j]!;
      if (seen.has(dep.id) || dep.status === 'completed' || dep.status === 'in_progress' || dep.status === 'awaiting_answer') continue;
      seen.add(dep.id);
      queue.push(dep.id);
      if (!marked.has(dep.id) && !isPermanentlyFailed(dep)) mark(dep, `${BLOCKED_BY}${failedId}`, failedId);
    }
  }
  return failures;
}

/**
 * The last tasks findDependencyFailures found nothing to mark in (a settled state), as what
 * its rules read of each task: the same dependents (so the same ids and dependency lists), and
 * each task's status, with attempts and last entry where it is failed. A pass over a large file
 * asks after every task's end; a settled state stays settled while each task either is as it
 * was, or has since completed, or has started (from pending, or from a failure not of these
 * rules): those only take tasks out of cycles and out of the walk from permanent failures, and
 * in a settled state every live task with an unknown dependency or on a cycle is failed for it
 * already, so none of them can have started. Anything else, and the rules run again.
 */
interface SettledState {
  dependents: ReadonlyMap<string, readonly number[]>;
  status: Array<Task['status']>;
  attempts: number[];
  maxAttempts: number[];
  lastEntry: Array<string | undefined>;
  dependencyFailure: Uint8Array;
}

let lastSettled: SettledState | undefined;

function settledState(tasks: readonly Task[]): SettledState {
  const n = tasks.length;
  const s: SettledState = {
    dependents: reverseEdges(tasks),
    status: new Array(n),
    attempts: new Array(n),
    maxAttempts: new Array(n),
    lastEntry: new Array(n),
    dependencyFailure: new Uint8Array(n),
  };
  for (let i = 0; i < n; i++) {
    const t = tasks[i]!;
    s.status[i] = t.status;
    s.attempts[i] = t.attempts;
    s.maxAttempts[i] = t.max_attempts;
    s.lastEntry[i] = t.error_log.at(-1);
    s.dependencyFailure[i] = isDependencyFailure(t) ? 1 : 0;
  }
  return s;
}

function stillSettled(tasks: readonly Task[]): boolean {
  const s = lastSettled;
  // reverseEdges hands out the same map while the ids and dependency lists are the same.
  if (!s || s.status.length !== tasks.length || reverseEdges(tasks) !== s.dependents) return false;
  for (let i = 0; i < tasks.length; i++) {
    const t = tasks[i]!;
    const was = s.status[i]!;
    if (t.status === was) {
      if (was !== 'failed') continue;
      if (t.attempts === s.attempts[i] && t.max_attempts === s.maxAttempts[i] && t.error_log.at(-1) === s.lastEntry[i]) continue;
      return false;
    }
    if (t.status === 'completed') continue;
    if (t.status === 'in_progress' && (was === 'pending' || (was === 'failed' && !s.dependencyFailure[i]))) continue;
    // A question and its answer: the task had started, and goes on from where it was.
    if ((t.status === 'awaiting_answer' && was === 'in_progress') || (t.status === 'pending' && was === 'awaiting_answer')) continue;
    return false;
  }
  return true;
}

/**
 * The dependency that blocks a dependency-failed task, read back from its last entry: the task
 * file keeps the relation only as that entry's text.
 */
export function blockedByOf(task: Task): string | undefined {
  if (!isDependencyFailure(task)) return undefined;
  const reason = parseErrorEntry(task.error_log.at(-1))!.reason;
  const id = reason.startsWith(BLOCKED_BY) ? reason.slice(BLOCKED_BY.length) : '';
  return /^\S+$/.test(id) ? id : undefined;
}

/**
 * The task a retry must name to unblock `id`'s chain: from `id`, each task failed as `Blocked by
 * failed <next>` leads to the next, up to one that failed on its own. `pos` is positions(tasks).
 */
export function rootBlocker(tasks: readonly Task[], pos: ReadonlyMap<string, number>, id: string): string {
  const seen = new Set([id]);
  for (let at = id; ;) {
    const task = taskById(tasks, pos, at);
    const next = task && blockedByOf(task);
    if (next === undefined || seen.has(next)) return at;
    seen.add(next);
    at = next;
  }
}

/**
 * Every task blocked because of `id`, directly or through another blocked task, in
 * breadth-first order from it: what a retry of `id` unblocks. Linear in tasks.
 */
export function blockedDependents(tasks: readonly Task[], id: string): Task[] {
  const blocked = new Map<string, Task[]>();
  for (const t of tasks) {
    const by = blockedByOf(t);
    if (by === undefined) continue;
    let list = blocked.get(by);
    if (!list) blocked.set(by, (list = []));
    list.push(t);
  }
  const found: Task[] = [];
  const seen = new Set([id]);
  for (let i = -1; i < found.length; i++) {
    for (const t of blocked.get(i < 0 ? id : found[i]!.id) ?? []) {
      if (seen.has(t.id)) continue;
      seen.add(t.id);
      found.push(t);
    }
  }
  return found;
}

/**
 * Every non-completed task that lies on a cycle, with one cycle through it written from it back
 * to it (`a -> b -> a`; a self-reference is `a -> a`). Tarjan's algorithm, iterative.
 */
function findCycles(tasks: readonly Task[], pos: ReadonlyMap<string, number>): Map<string, string> {
  // Tasks by number (positions): the walk's state in typed arrays, not maps keyed by id, since
  // a pass over a large file runs this every time.
  const n = tasks.length;
  const liveAt = (id: string) => {
    const i = pos.get(id);
    return i !== undefined && tasks[i]!.status !== 'completed' ? i : -1;
  };
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const components: string[][] = [];
  let counter = 0;

  for (const root of tasks) {
    const r = liveAt(root.id);
    if (r < 0 || index[r]! >= 0) continue;
    const work: Array<{ i: number; next: number }> = [{ i: r, next: 0 }];
    index[r] = low[r] = counter++;
    stack.push(r);
    onStack[r] = 1;
    while (work.length) {
      const frame = work.at(-1)!;
      const deps = tasks[frame.i]!.depends_on;
      if (frame.next < deps.length) {
        const d = liveAt(deps[frame.next++]!);
        if (d < 0) continue;
        if (index[d]! < 0) {
          index[d] = low[d] = counter++;
          stack.push(d);
          onStack[d] = 1;
          work.push({ i: d, next: 0 });
        } else if (onStack[d]) {
          low[frame.i] = Math.min(low[frame.i]!, index[d]!);
        }
        continue;
      }
      work.pop();
      const parent = work.at(-1);
      if (parent) low[parent.i] = Math.min(low[parent.i]!, low[frame.i]!);
      if (low[frame.i] === index[frame.i]) {
        const component: string[] = [];
        let i: number;
        do {
          i = stack.pop()!;
          onStack[i] = 0;
          component.push(tasks[i]!.id);
        } while (i !== frame.i);
        const id = tasks[frame.i]!.id;
        const selfLoop = component.length === 1 && tasks[frame.i]!.depends_on.includes(id);
        if (component.length > 1 || selfLoop) components.push(component);
      }
    }
  }

  const cycles = new Map<string, string>();
  for (const component of components) {
    const members = new Set(component.sort(compareIds));
    if (component.length <= EXACT_CYCLE_LIMIT) {
      for (const id of component) cycles.set(id, cycleThrough(id, members, tasks, pos).join(' -> '));
      continue;
    }
    // A huge knot: a path per member would cost members x edges and name thousands of tasks in
    // every message. One cycle, shortened, stands for all of them.
    const sample = cycleThrough(component[0]!, members, tasks, pos);
    const path = sample.length > 8 ? [...sample.slice(0, 4), `… ${sample.length - 8} more …`, ...sample.slice(-4)] : sample;
    const text = `${path.join(' -> ')} (${component.length} tasks depend on each other in a cycle)`;
    for (const id of component) cycles.set(id, id === component[0] ? text : `${id} is part of ${text}`);
  }
  return cycles;
}

/** Strongly connected components up to this size get an exact cycle through each member. */
const EXACT_CYCLE_LIMIT = 64;

/** Shortest path id -> … -> id inside one strongly connected component (breadth-first). */
function cycleThrough(start: string, members: Set<string>, tasks: readonly Task[], pos: ReadonlyMap<string, number>): string[] {
  const parent = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i]!;
    for (const d of tasks[pos.get(id)!]!.depends_on) {
      if (!members.has(d)) continue;
      if (d === start) {
        const back: string[] = [];
        for (let cur: string | undefined = id; cur !== start && cur !== undefined; cur = parent.get(cur)) back.push(cur);
        return [start, ...back.reverse(), start];
      }
      if (!parent.has(d)) {
        parent.set(d, id);
        queue.push(d);
      }
    }
  }
  return [start, start];
}

const PRIORITY_RANK = { P0: 0, P1: 1, P2: 2 } as const;

function allDepsCompleted(task: Task, tasks: readonly Task[], pos: ReadonlyMap<string, number>): boolean {
  return task.depends_on.every((d) => taskById(tasks, pos, d)?.status === 'completed');
}

/** What the pool's order may use besides the tasks themselves (passed in: dag.ts does no I/O). */
export interface PoolOrderHints {
  /**
   * How long an attempt of a task takes (ms), by id: its own earlier attempts, or what the run
   * has measured. A task without one counts as the median of these; with none at all, every
   * task counts 1, so the longest chain is the one with the most tasks.
   */
  durations?: ReadonlyMap<string, number>;
}

/** What the retry rule needs besides the tasks: the base branch's head, the time, the back-off. */
export interface RetryClock {
  /** The base branch's commit now. */
  head: string;
  /** Milliseconds since the epoch. */
  now: number;
  /** session_config.retry_backoff_seconds: the first back-off; 0 retries at once. */
  backoffSeconds: number;
}

/** The longest back-off between two attempts on an unchanged base (unless the first is longer). */
export const MAX_RETRY_BACKOFF_S = 600;

/** The back-off after `attempts` attempts: the first one, doubled per further attempt, capped. */
export function retryBackoffSeconds(attempts: number, backoffSeconds: number): number {
  const doubled = backoffSeconds * 2 ** Math.max(0, Math.min(attempts - 1, 30));
  return Math.min(doubled, Math.max(MAX_RETRY_BACKOFF_S, backoffSeconds));
}

/**
 * The retry rule: a failed task is retried once the base branch has moved since its failed
 * attempt started (its started_at_commit is no longer the head: what it may have needed could be
 * there now), or once its back-off since failed_at has passed, whichever comes first. Returns
 * when it may start (ms), or undefined when it may start now. A task without a recorded base or
 * failure time is not held back.
 */
export function retryNotBefore(task: Task, clock: RetryClock): number | undefined {
  if (clock.backoffSeconds <= 0 || !task.started_at_commit || task.started_at_commit !== clock.head) return undefined;
  const failedAt = Date.parse(task.failed_at ?? '');
  if (!Number.isFinite(failedAt)) return undefined;
  const at = failedAt + retryBackoffSeconds(task.attempts, clock.backoffSeconds) * 1000;
  return at > clock.now ? at : undefined;
}

/** What a pass needs of the pool, from one walk over the tasks. */
export interface PoolScan {
  /** The eligible pool in order (eligibleTasks). */
  eligible: Task[];
  /** Tasks that would be eligible but have no validation command (logged once per run). */
  missing: Task[];
  /**
   * The earliest time a retryable task held back by retryNotBefore may start (ms), among the
   * tasks not running; undefined when none is held back: when the run loop wakes up for it.
   */
  retryAt: number | undefined;
}

export function scanPool(tasks: readonly Task[], clock?: RetryClock, hints: PoolOrderHints = {}, running?: ReadonlySet<string>): PoolScan {
  const { ready, missing, retryAt } = walkPool(tasks, clock, running);
  return { eligible: poolOrder(tasks, ready, hints), missing, retryAt };
}

/** scanPool's walk: the eligible pool unordered (pending tasks first), missing, retryAt. */
function walkPool(
  tasks: readonly Task[],
  clock?: RetryClock,
  running?: ReadonlySet<string>,
): { ready: Task[]; missing: Task[]; retryAt: number | undefined } {
  const pos = positions(tasks);
  const pending: Task[] = [];
  const retry: Task[] = [];
  const missing: Task[] = [];
  let retryAt: number | undefined;
  for (const t of tasks) {
    const first = t.status === 'pending';
    if ((!first && !isRetryable(t)) || !allDepsCompleted(t, tasks, pos)) continue;
    // A task without a validation command is never eligible: nothing could prove it done.
    if (!hasValidationCommand(t)) missing.push(t);
    else if (first) pending.push(t);
    else {
      const at = clock && retryNotBefore(t, clock);
      if (at === undefined) retry.push(t);
      else if (!running?.has(t.id) && (retryAt === undefined || at < retryAt)) retryAt = at;
    }
  }
  return { ready: pending.concat(retry), missing, retryAt };
}

/**
 * The eligible pool: pending tasks whose dependencies are all completed, and retryable failed
 * ones that the retry rule (retryNotBefore, given a clock) lets start now, in the order they
 * should start (poolOrder), those without a validation command left out.
 */
export function eligibleTasks(tasks: readonly Task[], clock?: RetryClock, hints: PoolOrderHints = {}): Task[] {
  return scanPool(tasks, clock, hints).eligible;
}

/**
 * The order of the eligible pool: a task whose question was answered first (a person waits on
 * it, and its worktree is kept); then priority (a P0 retry before P1 work); within a
 * priority, first attempts before retries; then the task that holds the most work up — the
 * longest chain of estimated durations from it through the tasks that wait on it, its own
 * included (longestChains); then, for retries, the oldest failure; then the id.
 */
export function poolOrder(tasks: readonly Task[], pool: readonly Task[], hints: PoolOrderHints = {}): Task[] {
  const chain =
    pool.length > 1 ? (chainsOf(tasks, pool, hints.durations) ?? longestChains(tasks, hints.durations)) : new Map<string, number>();
  const retried = (t: Task) => (t.status === 'failed' ? 1 : 0);
  const answered = (t: Task) => (t.status === 'pending' && typeof t.question?.answer === 'string' ? 0 : 1);
  return [...pool].sort(
    (a, b) =>
      answered(a) - answered(b) ||
      PRIORITY_RANK[a.priority] - PRIORITY_RANK[b.priority] ||
      retried(a) - retried(b) ||
      (chain.get(b.id) ?? 0) - (chain.get(a.id) ?? 0) ||
      (retried(a) ? (a.failed_at ?? '').localeCompare(b.failed_at ?? '') : 0) ||
      compareIds(a.id, b.id),
  );
}

/**
 * For every task that will still run (not completed, not failed for good): its estimated
 * duration plus the longest such chain among the tasks that depend on it — the work that
 * cannot finish before it does. Linear in tasks + edges (dependents before dependencies, by
 * counting); a task on a cycle, or upstream of one, gets what was found below it so far.
 */
export function longestChains(tasks: readonly Task[], durations?: ReadonlyMap<string, number>): Map<string, number> {
  const fallback = durations?.size ? median([...durations.values()]) : 1;
  const live = tasks.filter((t) => t.status !== 'completed' && !isPermanentlyFailed(t));
  const index = new Map<string, number>();
  live.forEach((t, i) => index.set(t.id, i));
  const n = live.length;
  // Each task's live dependencies, once each; and how many live tasks wait on each.
  const deps: number[][] = new Array(n);
  const waiting = new Int32Array(n);
  const seenBy = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    const list: number[] = [];
    const on = live[i]!.depends_on;
    for (let k = 0; k < on.length; k++) {
      const j = index.get(on[k]!);
      if (j === undefined || j === i || seenBy[j] === i) continue;
      seenBy[j] = i;
      list.push(j);
      waiting[j]!++;
    }
    deps[i] = list;
  }
  const below = new Float64Array(n);
  const chain = new Map<string, number>();
  const queue: number[] = [];
  for (let i = 0; i < n; i++) if (waiting[i] === 0) queue.push(i);
  const total = (i: number) => (durations?.get(live[i]!.id) ?? fallback) + below[i]!;
  for (let q = 0; q < queue.length; q++) {
    const i = queue[q]!;
    const own = total(i);
    chain.set(live[i]!.id, own);
    for (const j of deps[i]!) {
      if (own > below[j]!) below[j] = own;
      if (--waiting[j]! === 0) queue.push(j);
    }
  }
  for (let i = 0; i < n; i++) if (!chain.has(live[i]!.id)) chain.set(live[i]!.id, total(i));
  return chain;
}

/**
 * longestChains' figure for `roots` alone: a walk over the tasks that wait on them, directly or
 * not, and no further, so a pool of tasks that little waits on costs that little on a file with
 * a long backlog. Undefined when the walk meets a cycle (longestChains says what a cycle gets).
 */
export function chainsOf(
  tasks: readonly Task[],
  roots: readonly Task[],
  durations?: ReadonlyMap<string, number>,
): Map<string, number> | undefined {
  const fallback = durations?.size ? median([...durations.values()]) : 1;
  const pos = positions(tasks);
  const dependents = reverseEdges(tasks);
  const live = (i: number) => tasks[i]!.status !== 'completed' && !isPermanentlyFailed(tasks[i]!);
  // Per position: UNSEEN, ON_PATH while its dependents are walked, else its chain.
  const UNSEEN = -1;
  const ON_PATH = -2;
  const chain = new Map<number, number>();
  const out = new Map<string, number>();
  for (const root of roots) {
    const r = pos.get(root.id);
    if (r === undefined || !live(r)) continue;
    const stack: Array<{ i: number; next: number; below: number }> = [];
    const enter = (i: number) => {
      chain.set(i, ON_PATH);
      stack.push({ i, next: 0, below: 0 });
    };
    if ((chain.get(r) ?? UNSEEN) === UNSEEN) enter(r);
    while (stack.length) {
      const frame = stack.at(-1)!;
      const waiting = dependents.get(tasks[frame.i]!.id) ?? [];
      if (frame.next < waiting.length) {
        const j = waiting[frame.next++]!;
        if (j === frame.i || !live(j)) continue;
        const known = chain.get(j) ?? UNSEEN;
        if (known === ON_PATH) return undefined;
        if (known === UNSEEN) enter(j);
        else if (known > frame.below) frame.below = known;
        continue;
      }
      stack.pop();
      const own = (durations?.get(tasks[frame.i]!.id) ?? fallback) + frame.below;
      chain.set(frame.i, own);
      const parent = stack.at(-1);
      if (parent && own > parent.below) parent.below = own;
    }
    out.set(root.id, chain.get(r)!);
  }
  return out;
}

function median(values: number[]): number {
  const sorted = values.sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The next tasks to start, given those already running: batch construction applied
 * to free slots. No dependency between any two, no overlapping files_hint, solo tasks alone.
 * When the first eligible task must run solo and others are running, nothing starts: it waits
 * for the running ones to finish rather than being overtaken.
 * `elsewhere` (concurrent mode: tasks other workers hold) constrains the batch like running
 * tasks do — dependencies, files_hint, solo — but takes none of this worker's slots:
 * max_parallel_agents counts each worker's own agents.
 */
export function selectBatch(
  eligible: readonly Task[],
  running: readonly Task[],
  maxParallel: number,
  elsewhere: readonly Task[] = [],
): Task[] {
  if (running.some(runsSolo) || elsewhere.some(runsSolo)) return [];
  const batch: Task[] = [];
  const busy = [...running, ...elsewhere];
  for (const task of eligible) {
    if (batch.length + running.length >= maxParallel) break;
    if (runsSolo(task)) {
      if (busy.length === 0) return [task];
      if (batch.length === 0) return [];
      continue;
    }
    if (busy.some((other) => dependsEitherWay(task, other) || hintsOverlap(task.files_hint, other.files_hint))) continue;
    batch.push(task);
    busy.push(task);
  }
  return batch;
}

/**
 * Why eligible tasks left out of `batch` wait although slots are free: a files_hint shared with a
 * task running or starting, or a task that runs alone. Empty when no slot is left (then they
 * wait for a slot, which needs no explaining); at most as many as there are free slots, the first
 * in the pool's order: those are the ones the lost parallelism is about.
 */
export function heldBack(
  eligible: readonly Task[],
  running: readonly Task[],
  maxParallel: number,
  batch: readonly Task[],
  elsewhere: readonly Task[] = [],
): Array<{ id: string; reason: string }> {
  const free = maxParallel - running.length - batch.length;
  if (free <= 0) return [];
  const busy = [...running, ...elsewhere, ...batch];
  const solo = busy.find(runsSolo);
  const out: Array<{ id: string; reason: string }> = [];
  const alone = "runs alone (no files_hint, or a merge conflict's retry)";
  let soloFirst: Task | undefined;
  for (const task of eligible) {
    if (out.length >= free) break;
    if (batch.includes(task)) continue;
    if (solo) {
      out.push({ id: task.id, reason: `${solo.id} ${alone}` });
      continue;
    }
    if (soloFirst) {
      out.push({ id: task.id, reason: `${soloFirst.id} ${alone} and starts first` });
      continue;
    }
    if (runsSolo(task)) {
      if (!busy.length) continue;
      out.push({ id: task.id, reason: `it ${alone}: it starts once the tasks running end` });
      if (!batch.length) soloFirst = task;
      continue;
    }
    for (const other of busy) {
      const shared = sharedHint(task.files_hint, other.files_hint);
      if (shared !== undefined) {
        out.push({ id: task.id, reason: `shares ${shared} with ${other.id}` });
        break;
      }
    }
  }
  return out;
}

function dependsEitherWay(a: Task, b: Task): boolean {
  return a.depends_on.includes(b.id) || b.depends_on.includes(a.id);
}

/**
 * Directory-level overlap: `src/auth/` overlaps `src/auth/oauth/` and `src/auth/x.ts`, not
 * `src/authz/`. A glob counts as the directory before its first wildcard.
 */
export function hintsOverlap(a: readonly string[], b: readonly string[]): boolean {
  return sharedHint(a, b) !== undefined;
}

/** The first hint of `a` that overlaps one of `b`, as written; undefined when none does. */
function sharedHint(a: readonly string[], b: readonly string[]): string | undefined {
  const nb = b.map(normalizeHint);
  return a.find((hint) => {
    const x = normalizeHint(hint);
    return nb.some((y) => x === '' || y === '' || x === y || y.startsWith(x + '/') || x.startsWith(y + '/'));
  });
}

export function normalizeHint(hint: string): string {
  let h = hint.trim().replace(/\\/g, '/');
  const wildcard = h.search(/[*?[{]/);
  if (wildcard >= 0) h = h.slice(0, h.lastIndexOf('/', wildcard) + 1);
  h = h
    .replace(/\/{2,}/g, '/')
    .replace(/^(\.\/)+/, '')
    .replace(/\/+$/, '');
  return h === '.' ? '' : h;
}

export interface DependencyAnalysis {
  states: Map<string, TaskState>;
  /** Why a task is blocked: its [DEPENDENCY] entry, stored or what a run would mark. */
  blockedReasons: Map<string, string>;
}

/**
 * Whether only a person's answers can move the work on: some task awaits an answer, and every
 * other task not completed awaits one too or waits on dependencies.
 */
export function waitsOnAnswers(tasks: readonly Task[]): boolean {
  const states = [...analyzeTasks(tasks).states.values()].filter((s) => s !== 'completed');
  return states.includes('awaiting_answer') && states.every((s) => s === 'awaiting_answer' || s === 'waiting');
}

/**
 * The state of every task as `status` shows it. Read-only: nothing is marked. `held` says
 * whether a run holds an in_progress task; without it every in_progress task is running (the
 * run's own view of its tasks).
 */
export function analyzeTasks(tasks: readonly Task[], held: (task: Task) => boolean = () => true): DependencyAnalysis {
  const pos = positions(tasks);
  const blockedReasons = new Map<string, string>();
  for (const t of tasks) if (isDependencyFailure(t)) blockedReasons.set(t.id, t.error_log.at(-1)!);
  for (const f of findDependencyFailures(tasks)) blockedReasons.set(f.taskId, f.entry);

  const states = new Map<string, TaskState>();
  for (const t of tasks) {
    let state: TaskState;
    if (t.status === 'completed') state = 'completed';
    else if (t.status === 'in_progress') state = held(t) ? 'running' : 'interrupted';
    else if (t.status === 'awaiting_answer') state = 'awaiting_answer';
    else if (t.status === 'awaiting_review') state = 'awaiting_review';
    else if (blockedReasons.has(t.id)) state = 'blocked';
    else if (t.status === 'failed' && isPermanentlyFailed(t)) state = 'failed';
    else if (!allDepsCompleted(t, tasks, pos)) state = 'waiting';
    else if (!hasValidationCommand(t)) state = 'needs_validation';
    else state = t.status === 'failed' ? 'retryable' : 'ready';
    states.set(t.id, state);
  }
  return { states, blockedReasons };
}
