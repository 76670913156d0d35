// The repository's worktrees that serve a task (branch harness-<id>): what `status` reports and
// what the editor's Worktrees view lists, in one shape.
import { taskIdOfBranch } from '../ids';
import { Git } from './git';
import type { WorktreeInfo } from './worktreeParser';

export interface TaskWorktree extends Pick<WorktreeInfo, 'path'> {
  /** The branch's short name (`harness-task-001`); a task worktree always has one. */
  branch: string;
  /** The id of the task the branch serves. */
  task: string;
}

/** The task worktrees among `git worktree list`'s records, in git's order. */
export function taskWorktreesOf(all: readonly WorktreeInfo[]): TaskWorktree[] {
  return all.flatMap(({ path, branch }) => {
    const task = branch ? taskIdOfBranch(branch) : undefined;
    return branch && task ? [{ path, branch: branch.replace(/^refs\/heads\//, ''), task }] : [];
  });
}

/** The repository's task worktrees; none outside git. */
export async function listTaskWorktrees(root: string): Promise<TaskWorktree[]> {
  const git = new Git(root);
  if (!(await git.toplevel())) return [];
  return taskWorktreesOf(await git.listWorktrees());
}
