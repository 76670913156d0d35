// The git side of a long run: each milestone's worktree on branch milestone-<slug>-M<N> (made from
// the base branch when the milestone starts planning), throwaway detached worktrees for a review
// or an integration check, the milestone's real diff, and cleaning up after it.
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { Git } from '../git/git';
import type { FileChange } from './checkpointFile';
import { ARTEFACT_DIR, type HarnessPaths, MILESTONE_STATE_DIR } from './paths';

/** The milestone's worktree, made (or re-attached to its existing branch) when missing. */
export async function ensureMilestoneWorktree(paths: HarnessPaths, git: Git, id: string, baseBranch: string): Promise<string> {
  const wt = paths.worktreeOf(id);
  if (existsSync(join(wt, '.git'))) return wt;
  await excludeLongRunFiles(paths, git);
  mkdirSync(dirname(wt), { recursive: true });
  rmSync(wt, { recursive: true, force: true });
  await git.run(['worktree', 'prune'], { allowFail: true });
  const branch = paths.branchOf(id);
  if (await git.branchExists(branch)) await git.addWorktreeForBranch(wt, branch);
  else await git.addWorktree(wt, branch, baseBranch);
  return wt;
}

/**
 * The long run's own artefacts and each milestone's state root never belong in a commit: they
 * are listed in .git/info/exclude (shared by every worktree, never a tracked change).
 */
export async function excludeLongRunFiles(paths: HarnessPaths, git: Git): Promise<void> {
  const exclude = await git.gitPath('info/exclude');
  const wanted = [`/${MILESTONE_STATE_DIR}/`, `/${paths.rel(join(paths.dir, ARTEFACT_DIR))}/`];
  const current = existsSync(exclude) ? readFileSync(exclude, 'utf8') : '';
  const have = new Set(current.split(/\r?\n/).map((l) => l.trim()));
  const missing = wanted.filter((w) => !have.has(w));
  if (!missing.length) return;
  mkdirSync(dirname(exclude), { recursive: true });
  appendFileSync(exclude, `${current && !current.endsWith('\n') ? '\n' : ''}${missing.join('\n')}\n`);
}

/** A detached worktree at `commit` for the length of `fn`, removed afterwards whatever happens. */
export async function withTempWorktree<T>(git: Git, path: string, commit: string, fn: (dir: string) => Promise<T>): Promise<T> {
  await git.removeWorktree(path);
  rmSync(path, { recursive: true, force: true });
  mkdirSync(dirname(path), { recursive: true });
  await git.addDetachedWorktree(path, commit);
  try {
    return await fn(path);
  } finally {
    await git.removeWorktree(path);
    rmSync(path, { recursive: true, force: true });
  }
}

export async function branchHead(git: Git, branch: string): Promise<string | undefined> {
  const r = await git.run(['rev-parse', '--verify', '-q', `refs/heads/${branch}`], { allowFail: true });
  return r.code === 0 ? r.stdout.trim() : undefined;
}

export async function mergeBase(git: Git, a: string, b: string): Promise<string> {
  return (await git.run(['merge-base', a, b])).stdout.trim();
}

/** What the milestone changed: its branch against where it left the base branch. */
export async function milestoneChanges(git: Git, baseBranch: string, head: string): Promise<FileChange[]> {
  const from = await mergeBase(git, baseBranch, head);
  const out = (await git.run(['diff', '--name-status', '-z', '--no-renames', from, head])).stdout;
  const fields = out.split('\0').filter(Boolean);
  const changes: FileChange[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) changes.push({ status: fields[i]!, path: fields[i + 1]! });
  return changes;
}

/** The diff a reviewer reads: the milestone branch against where it left the base branch. */
export async function milestoneDiff(git: Git, baseBranch: string, head: string): Promise<{ patch: string; stat: string }> {
  const from = await mergeBase(git, baseBranch, head);
  const patch = (await git.run(['diff', '--no-color', from, head])).stdout;
  const stat = (await git.run(['diff', '--stat', '--no-color', from, head])).stdout;
  return { patch, stat };
}

/**
 * Removes a milestone's worktrees (its own and its tasks'), the branches of its tasks and, unless
 * kept, its own branch. Missing pieces are fine.
 */
export async function discardMilestoneWork(paths: HarnessPaths, git: Git, id: string, opts: { keepBranch: boolean }): Promise<void> {
  const tasksRoot = paths.taskWorktreesOf(id);
  for (const w of await git.listWorktrees()) {
    if (w.path === paths.worktreeOf(id) || w.path.startsWith(`${tasksRoot}/`) || w.path.startsWith(`${paths.worktreeOf(id)}.`))
      await git.removeWorktree(w.path);
  }
  rmSync(paths.worktreeOf(id), { recursive: true, force: true });
  rmSync(tasksRoot, { recursive: true, force: true });
  await git.run(['worktree', 'prune'], { allowFail: true });
  for (const b of await git.branches(`harness-${id}-`)) await git.deleteBranch(b);
  if (!opts.keepBranch) await git.deleteBranch(paths.branchOf(id));
}
