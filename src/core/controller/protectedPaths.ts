// Protected paths: files and folders (typically the tests a task's validation runs) that an
// attempt may not change. An attempt whose commits change one fails, charged: its validation
// would judge it against tests it rewrote. Otherwise the validation runs on the base's copies,
// whatever else touched them in the checkout. Every way of running calls `guardProtectedPaths`
// before its validation: a local attempt, in place, a queue worker, the controller's own check.
import type { Git } from '../git/git';
import type { Task } from '../taskFile/schema';

/** A task's protected paths: the session's and its own, relative to the state root. */
export function protectedPathsOf(task: Task, sessionPaths: readonly string[]): string[] {
  return [...new Set([...sessionPaths, ...(task.protected_paths ?? [])])];
}

/**
 * Before a validation in the checkout at `cwd` (the state root's folder in it): the protected
 * files the commits since `base` changed (added, modified, deleted or renamed) fail the attempt,
 * named in the returned reason. Otherwise the protected paths are put back as `base` has them:
 * changed tracked files restored, untracked files under them removed (ignored ones are left,
 * like the included files a worktree is given).
 */
export async function guardProtectedPaths(git: Git, cwd: string, base: string, paths: readonly string[]): Promise<string | undefined> {
  if (!paths.length) return undefined;
  // Literal: a name with glob characters means that name; relative to `cwd`, as written.
  const specs = paths.map((p) => `:(literal)${p}`);
  const names = async (args: string[]) => (await git.run([...args, '--', ...specs], { cwd })).stdout.split('\0').filter(Boolean);
  const committed = await names(['diff', '--no-renames', '--name-only', '-z', `${base}...HEAD`]);
  if (committed.length) return `changed protected files: ${committed.join(', ')} (protected_paths)`;
  const touched = await names(['diff', '--no-renames', '--name-only', '-z', base]);
  if (touched.length)
    await git.run(['restore', `--source=${base}`, '--staged', '--worktree', '--', ...touched.map((f) => `:(top,literal)${f}`)], { cwd });
  await git.run(['clean', '-fdq', '--', ...specs], { cwd });
  return undefined;
}
