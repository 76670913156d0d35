// The shape of the Tasks view, as plain data: which nodes exist, under which parent, in what
// order, paged. No vscode import: the rules are tested in node. States come from the core
// (analyzeTasks via TaskSummary.state); nothing here decides what a task's state is.
import { compareIds } from '../../core/ids';
import type { TaskState } from '../../core/tasks/dag';

/** Children shown per parent before a "show more" item (a parent with thousands of children stays quick to open). */
export const PAGE_SIZE = 200;

/** Group order in the state view: what moves first, then what needs a person, then what waits. */
export const STATE_ORDER: readonly TaskState[] = [
  'running',
  'interrupted',
  'awaiting_answer',
  'awaiting_review',
  'ready',
  'retryable',
  'failed',
  'blocked',
  'needs_validation',
  'waiting',
  'completed',
];

export type TasksViewMode = 'state' | 'dependency';

export type TaskNode = ErrorNode | GroupNode | TaskItemNode | MoreNode;

export interface ErrorNode {
  kind: 'error';
  key: string;
  message: string;
}
export interface GroupNode {
  kind: 'group';
  key: string;
  state: TaskState;
  count: number;
}
export interface TaskItemNode {
  kind: 'task';
  key: string;
  taskId: string;
  parent: TaskNode | undefined;
  /** Dependency view: the task already appears above on this path (a cycle); not expanded. */
  cycle: boolean;
  /** Dependency view: it has dependents to show. */
  expandable: boolean;
  /**
   * Dependency view: the task is shown in full under this other dependency of it; here it is a
   * row that points there, not expanded (a join appears once). '' when that is the top level.
   */
  shownUnder?: string | undefined;
}
export interface MoreNode {
  kind: 'more';
  key: string;
  /** The key of the list this pages (a group, a task in the dependency view, or ROOT_KEY). */
  listKey: string;
  parent: TaskNode | undefined;
  hidden: number;
}

export const ROOT_KEY = 'root';

export interface TaskLike {
  id: string;
  state: TaskState;
  depends_on: readonly string[];
}

/** Task ids per state, each list in natural id order; empty states are left out. */
export function groupByState(tasks: readonly TaskLike[]): Map<TaskState, string[]> {
  const groups = new Map<TaskState, string[]>();
  for (const t of tasks) {
    let list = groups.get(t.state);
    if (!list) groups.set(t.state, (list = []));
    list.push(t.id);
  }
  for (const list of groups.values()) list.sort(compareIds);
  return new Map(STATE_ORDER.filter((s) => groups.has(s)).map((s) => [s, groups.get(s)!]));
}

export interface DependencyIndex {
  /** Tasks with no known dependency, then one member of each part of the graph no root reaches (cycles). */
  roots: string[];
  /** Task id → the tasks that depend on it, natural order. */
  dependents: Map<string, string[]>;
  /**
   * Task id → the dependency it is shown in full under: the first through which a breadth-first
   * walk from the roots reaches it (a shortest path). Roots have none. Under its other
   * dependencies a task is a row pointing here, so a join's subtree appears once.
   */
  home: Map<string, string>;
}

export function dependencyIndex(tasks: readonly TaskLike[]): DependencyIndex {
  const known = new Set(tasks.map((t) => t.id));
  const dependents = new Map<string, string[]>();
  const roots: string[] = [];
  for (const t of tasks) {
    const deps = [...new Set(t.depends_on)].filter((d) => known.has(d));
    if (!deps.length) roots.push(t.id);
    for (const d of deps) {
      let list = dependents.get(d);
      if (!list) dependents.set(d, (list = []));
      list.push(t.id);
    }
  }
  for (const list of dependents.values()) list.sort(compareIds);
  roots.sort(compareIds);

  // Tasks only reachable through a cycle would never show: make one of each such part a root.
  // Breadth-first from each root in order; the first edge that reaches a task is its home.
  const home = new Map<string, string>();
  const reached = new Set<string>();
  const walk = (start: string) => {
    if (reached.has(start)) return;
    reached.add(start);
    const queue = [start];
    for (let i = 0; i < queue.length; i++) {
      const id = queue[i]!;
      for (const d of dependents.get(id) ?? []) {
        if (reached.has(d)) continue;
        reached.add(d);
        home.set(d, id);
        queue.push(d);
      }
    }
  };
  roots.forEach(walk);
  for (const id of [...known].sort(compareIds)) {
    if (reached.has(id)) continue;
    roots.push(id);
    walk(id);
  }
  return { roots, dependents, home };
}

/** The ids of one page-limited list, and how many are left out. */
export function page<T>(items: readonly T[], limit: number): { shown: readonly T[]; hidden: number } {
  if (items.length <= limit) return { shown: items, hidden: 0 };
  return { shown: items.slice(0, limit), hidden: items.length - limit };
}

/** The limit that shows `index`, rounded up to whole pages. */
export function limitShowing(index: number, current: number): number {
  return index < current ? current : Math.ceil((index + 1) / PAGE_SIZE) * PAGE_SIZE;
}

/** Ids from a root down to `id` along each task's home (a shortest path), or undefined. */
export function pathTo(index: DependencyIndex, id: string): string[] | undefined {
  const path: string[] = [];
  for (let at: string | undefined = id; at !== undefined; at = index.home.get(at)) {
    path.unshift(at);
    if (path.length > index.home.size + 1) return undefined;
  }
  return index.roots.includes(path[0]!) ? path : undefined;
}

export function groupKey(state: TaskState): string {
  return `state:${state}`;
}

/** A task node's key: unique across the tree, stable across refreshes (the TreeItem id). */
export function taskKey(mode: TasksViewMode, path: readonly string[]): string {
  return mode === 'state' ? `task:${path.at(-1)}` : `dep:${path.join('>')}`;
}

/** The ids on the path from a dependency-view root down to this node. */
export function pathOf(node: TaskItemNode): string[] {
  const path: string[] = [];
  for (let n: TaskNode | undefined = node; n && n.kind === 'task'; n = n.parent) path.unshift(n.taskId);
  return path;
}
