// Commands get a task as a tree element (menus), an id (links, clicks, other extensions) or
// nothing (the palette); worktree commands get a worktree element or a task with a worktree.
import type { HarnessSnapshot } from '../model/harnessModel';

/** The task id a command argument names, if any. */
export function taskIdOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg;
  if (arg && typeof arg === 'object' && 'taskId' in arg && typeof arg.taskId === 'string') return arg.taskId;
  return undefined;
}

/** The worktree a command argument names: a Worktrees view element, or a task that has one. */
export function worktreeOf(arg: unknown, s: HarnessSnapshot | undefined): { path: string; branch: string | null; taskId: string } | undefined {
  if (!s) return undefined;
  if (arg && typeof arg === 'object' && 'kind' in arg && arg.kind === 'worktree' && 'path' in arg && typeof arg.path === 'string') {
    const found = s.worktrees.find((w) => w.path === arg.path);
    if (found) return { path: found.path, branch: found.branch, taskId: found.task! };
  }
  const id = taskIdOf(arg);
  const found = id ? s.worktrees.find((w) => w.task === id) : undefined;
  return found ? { path: found.path, branch: found.branch, taskId: found.task! } : undefined;
}
