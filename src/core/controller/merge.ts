// The merge protocol: `git merge --no-ff` into the base branch; on conflict, abort,
// and either discard (a conflict outside the task's files_hint) or rebase the task's branch,
// validate again and merge once more; still conflicting is MERGE_CONFLICT (retried solo).
import { relative } from 'node:path';
import { normalizeHint } from '../tasks/dag';
import { branchFor } from '../ids';
import type { AttemptPaths } from '../statePaths';
import type { Task } from '../taskFile/schema';
import { discardAttempt } from './discard';
import type { Session } from './session';
import type { TaskTerminal } from './types';
import { validateTask } from './validate';

export type TaskEnd = 'completed' | 'failed' | 'interrupted';

export async function mergeTask(s: Session, task: Task, worktree: string, terminal: TaskTerminal, attempt: AttemptPaths): Promise<TaskEnd> {
  const branch = branchFor(task.id);
  const message = `Merge [${task.id}] ${task.title.replace(/\s*\n\s*/g, ' ')}`;
  const discard = (category: 'MERGE_CONFLICT' | 'TEST_FAIL' | 'TIMEOUT' | 'CONFIG', reason: string, tail?: string) =>
    discardAttempt(s, task, worktree, terminal, { category, reason, tail, discardReason: 'merge failed' });

  let merge = await s.git.mergeNoFf(branch, message);
  if (!merge.ok && merge.blockedBy.length) {
    return discard('MERGE_CONFLICT', `main working tree has local changes that the merge would overwrite: ${merge.blockedBy.join(', ')}`);
  }
  if (!merge.ok) {
    const conflicts = merge.conflicts;
    await s.git.mergeAbort();
    s.log({ type: 'ROLLBACK', taskId: task.id, message: `git merge --abort (conflicts: ${conflicts.join(', ')})` });
    const outside = outOfScope(s, task, conflicts);
    if (outside.length) return discard('MERGE_CONFLICT', `Out-of-scope file conflict: ${outside.join(', ')}`);

    // A rebase rewrites the agent's commits: the originals are kept under our ref first.
    await s.keepAttempt(task.id);
    if (!(await s.git.rebase(worktree, s.baseBranch))) {
      s.log({ type: 'ROLLBACK', taskId: task.id, message: `git rebase --abort (rebase onto ${s.baseBranch} conflicted)` });
      return discard('MERGE_CONFLICT', `conflicts with ${s.baseBranch} in ${conflicts.join(', ')}; rebase failed`);
    }
    s.log({ type: 'WARN', taskId: task.id, message: `merge conflicted in ${conflicts.join(', ')}; rebased ${branch} onto ${s.baseBranch}, validating again` });
    const again = await validateTask(s, task, worktree, terminal, attempt);
    if (again.kind === 'interrupted') return 'interrupted';
    if (again.kind === 'fail') return discard(again.category === 'TIMEOUT' ? 'TIMEOUT' : 'TEST_FAIL', `after rebase onto ${s.baseBranch}: ${again.reason}`, again.tail);
    merge = await s.git.mergeNoFf(branch, message);
    if (!merge.ok) {
      if (merge.conflicts.length) await s.git.mergeAbort();
      return discard('MERGE_CONFLICT', `still conflicting after rebase: ${[...merge.conflicts, ...merge.blockedBy].join(', ')}`);
    }
  }

  const head = await s.git.head();
  s.head = head ?? s.head;
  await s.completeTask(task, head?.slice(0, 7));
  terminal.write(`\r\n[launchpad] ${task.id} merged into ${s.baseBranch} (${head?.slice(0, 7)})\r\n`);
  terminal.close('completed');
  return 'completed';
}

/** Conflicted files (relative to the repository top) outside the task's files_hint. */
function outOfScope(s: Session, task: Task, conflicts: string[]): string[] {
  // No hint means no declared scope: every file is the task's own, so try the rebase.
  if (!task.files_hint.length) return [];
  const sub = relative(s.toplevel, s.paths.root).split('\\').join('/');
  const hints = task.files_hint.map(normalizeHint);
  return conflicts.filter((file) => {
    const rel = sub && file.startsWith(sub + '/') ? file.slice(sub.length + 1) : file;
    return !hints.some((h) => h === '' || rel === h || rel.startsWith(h + '/'));
  });
}
