// The task graph as the panel draws it, from the state model's snapshot: one node per task, one
// edge per dependency, the critical path marked. No state is decided here: each task's state is
// the core's, and the path is the core's longest chain of work, counted in tasks.
import { longestChains, type TaskState } from '../../core/tasks/dag';
import type { StateSnapshot } from '../model/stateModel';
import type { GraphEdge, TaskGraph } from './protocol';

/** The graph of the snapshot's tasks; `words` names each state as the Tasks view does. */
export function taskGraph(snapshot: StateSnapshot, words: Readonly<Record<TaskState, string>>): TaskGraph {
  const problem = snapshot.error?.message ?? (snapshot.exists ? undefined : 'This workspace has no harness-tasks.json yet.');
  const tasks = snapshot.tasks;
  const critical = criticalPath(snapshot);
  const onPath = new Set(critical);
  const edges: GraphEdge[] = [];
  for (const t of tasks) {
    // A dependency listed twice is still one arrow.
    for (const dep of new Set(t.depends_on)) if (snapshot.byId.has(dep) && dep !== t.id) edges.push({ from: dep, to: t.id });
  }
  return {
    nodes: tasks.map((t) => ({ id: t.id, title: t.title, state: t.state, stateWords: words[t.state], critical: onPath.has(t.id) })),
    edges,
    critical,
    problem,
  };
}

/**
 * The longest chain of tasks that will still run (not completed, not failed for good), counted in
 * tasks: the chain the run's pool order puts first when it has no durations. It starts at the
 * task with the longest chain below it and steps each time to a dependent whose chain is one
 * shorter; ties go to the task first in the file. A single unfinished task is no path.
 */
export function criticalPath(snapshot: StateSnapshot): string[] {
  const tasks = snapshot.tasks.map((t) => t.task);
  const chain = longestChains(tasks);
  let best: string | undefined;
  for (const t of tasks) if (chain.has(t.id) && (best === undefined || chain.get(t.id)! > chain.get(best)!)) best = t.id;
  if (best === undefined || chain.get(best)! < 2) return [];
  const dependents = new Map<string, string[]>();
  for (const t of tasks) for (const d of t.depends_on) if (chain.has(t.id)) dependents.set(d, [...(dependents.get(d) ?? []), t.id]);
  const path = [best];
  const seen = new Set(path);
  for (let at = best; chain.get(at)! > 1;) {
    const next = dependents.get(at)?.find((id) => !seen.has(id) && chain.get(id) === chain.get(at)! - 1);
    if (!next) break;
    path.push(next);
    seen.add(next);
    at = next;
  }
  return path;
}
