// Commands get a task as a tree element (menus), an id (links, clicks, other extensions) or
// nothing (the palette); worktree commands get a worktree element or a task with a worktree.
import type { TaskWorktree } from '../../core/git/taskWorktrees';
import type { StateSnapshot } from '../model/stateModel';

/** The task id a command argument names, if any. */
export function taskIdOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg;
  if (arg && typeof arg === 'object' && 'taskId' in arg && typeof arg.taskId === 'string') return arg.taskId;
  return undefined;
}

/** A task worktree as commands take it: the task as `taskId`, like every argument naming a task. */
export interface Worktree extends Pick<TaskWorktree, 'path' | 'branch'> {
  taskId: TaskWorktree['task'];
}

export function toWorktree({ path, branch, task }: TaskWorktree): Worktree {
  return { path, branch, taskId: task };
}

/** The worktree a command argument names: a Worktrees view element, or a task that has one. */
export function worktreeOf(arg: unknown, s: StateSnapshot | undefined): Worktree | undefined {
  if (!s) return undefined;
  if (arg && typeof arg === 'object' && 'kind' in arg && arg.kind === 'worktree' && 'path' in arg && typeof arg.path === 'string') {
    const found = s.worktrees.find((w) => w.path === arg.path);
    if (found) return toWorktree(found);
  }
  const id = taskIdOf(arg);
  const found = id ? s.worktrees.find((w) => w.task === id) : undefined;
  return found && toWorktree(found);
}
