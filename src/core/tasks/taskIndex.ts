// Indexes of a task list that the dependency rules (dag.ts) and the transitions ask for on every
// pass: where each id is, and who depends on each id. A run's passes over a large file see the
// same ids and dependency lists again and again, so the last index built is kept and handed out
// again while they are the same; an index is read only, since it is shared.
import type { Task } from '../taskFile/schema';

/**
 * The positions of the tasks that depend on each id (each dependent once). Kept with the
 * dependency lists it was made from: the next pass reuses it while every task's list is the
 * same (the same frozen array, as a transaction leaves an unchanged task, or equal).
 */
export function reverseEdges(tasks: readonly Task[]): ReadonlyMap<string, readonly number[]> {
  const last = lastEdges;
  if (last && last.pos === positions(tasks) && sameDependencies(tasks, last.lists)) return last.dependents;
  const dependents = new Map<string, number[]>();
  const lists: Array<readonly string[]> = new Array(tasks.length);
  for (let i = 0; i < tasks.length; i++) {
    const on = tasks[i]!.depends_on;
    lists[i] = kept(on);
    for (let k = 0; k < on.length; k++) {
      const d = on[k]!;
      // Each dependency once (a list names a few; no Set per task).
      if (k > 0 && on.indexOf(d) < k) continue;
      let list = dependents.get(d);
      if (!list) dependents.set(d, (list = []));
      list.push(i);
    }
  }
  lastEdges = { pos: positions(tasks), lists, dependents };
  return dependents;
}

let lastEdges: { pos: ReadonlyMap<string, number>; lists: Array<readonly string[]>; dependents: Map<string, number[]> } | undefined;

function sameDependencies(tasks: readonly Task[], lists: Array<readonly string[]>): boolean {
  for (let i = 0; i < tasks.length; i++) {
    const a = tasks[i]!.depends_on;
    const b = lists[i]!;
    if (a === b) continue;
    if (a.length !== b.length) return false;
    for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false;
    lists[i] = kept(a);
  }
  return true;
}

/**
 * A dependency list as the cache keeps it: a frozen one (a snapshot's task: it cannot change)
 * as it is, so the next check finds it at once; any other as a copy, so a change made to it in
 * place is seen.
 */
function kept(list: readonly string[]): readonly string[] {
  return Object.isFrozen(list) ? list : [...list];
}

/**
 * Where each id is in `tasks` (the last of a repeated id, as `new Map(pairs)` keeps). A pass
 * over a large file asks several times, and every pass of a run over the same ids: the last map
 * made is kept with its ids and handed out again while the ids are the same, in order (strings
 * compared, most of them the very same ones). Read only: it is shared.
 */
export function positions(tasks: readonly Task[]): ReadonlyMap<string, number> {
  const last = lastPositions;
  if (last && last.ids.length === tasks.length) {
    let i = 0;
    while (i < tasks.length && tasks[i]!.id === last.ids[i]) i++;
    if (i === tasks.length) return last.pos;
  }
  const ids: string[] = new Array(tasks.length);
  const pos = new Map<string, number>();
  for (let i = 0; i < tasks.length; i++) pos.set((ids[i] = tasks[i]!.id), i);
  lastPositions = { ids, pos };
  return pos;
}

let lastPositions: { ids: string[]; pos: Map<string, number> } | undefined;

/**
 * The task with `id` in `tasks` (ids are unique in any file the schema accepts), through the
 * positions kept for them: a large file's run looks its tasks up several times per task.
 */
export function taskWithId(tasks: readonly Task[], id: string): Task | undefined {
  return taskById(tasks, positions(tasks), id);
}

/** The task with `id`, by positions(tasks). */
export function taskById(tasks: readonly Task[], pos: ReadonlyMap<string, number>, id: string): Task | undefined {
  const i = pos.get(id);
  return i === undefined ? undefined : tasks[i];
}
