// A `git commit` killed after it created its branch's lock (empty, O_EXCL) but before it wrote
// the new id into it leaves its commit written and nothing pointing at it. Found here among the
// loose objects, the commit can be finished like one whose lock names it.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

import type { Git } from './git';

/** git writes the commit object just before it takes the ref's lock: how far apart they may be. */
const BEFORE_LOCK_MS = 10 * 60_000;
const AFTER_LOCK_MS = 2_000;

/**
 * The commit a `git commit` killed while holding `refs/heads/<branch>.lock` (with no valid id in
 * it yet) had made: a loose commit written shortly before the lock, whose first parent is the
 * branch's tip, that was never the branch's value (its reflog) and that no ref contains (a
 * snapshot under refs/launchpad/ has the same parent). The newest if several; undefined if none.
 */
export async function commitOfEmptyBranchLock(
  git: Git,
  worktree: string,
  branch: string,
  tip: string,
  lockMtimeMs: number,
  /** What the lock holds, a partial id at most: a candidate must start with it. */
  partial = '',
): Promise<string | undefined> {
  const objects = await git.gitPath('objects', worktree);
  const from = lockMtimeMs - BEFORE_LOCK_MS;
  const to = lockMtimeMs + AFTER_LOCK_MS;
  const loose: { oid: string; mtime: number }[] = [];
  for (const dir of entries(objects).filter((d) => /^[0-9a-f]{2}$/.test(d))) {
    // A file added to a folder moves its mtime: an older folder holds no object from the window.
    if (mtimeMs(join(objects, dir)) < from) continue;
    for (const name of entries(join(objects, dir))) {
      const mtime = mtimeMs(join(objects, dir, name));
      const oid = dir + name;
      if (/^[0-9a-f]{40,64}$/.test(oid) && oid.startsWith(partial) && mtime >= from && mtime <= to) loose.push({ oid, mtime });
    }
  }
  if (!loose.length) return undefined;
  const lines = (oids: string[]) => oids.join('\n') + '\n';
  const types = await git.run(['cat-file', '--batch-check=%(objectname) %(objecttype)'], {
    cwd: worktree,
    stdin: lines(loose.map((o) => o.oid)),
  });
  const commits = types.stdout.split('\n').flatMap((l) => (l.endsWith(' commit') ? [l.split(' ')[0]!] : []));
  if (!commits.length) return undefined;
  const parents = await git.run(['rev-list', '--no-walk=unsorted', '--parents', '--stdin'], { cwd: worktree, stdin: lines(commits) });
  const children = new Set(parents.stdout.split('\n').flatMap((l) => (l.split(' ')[1] === tip ? [l.split(' ')[0]!] : [])));
  // A commit the branch once had (one a `git reset` dropped) was not interrupted.
  const reflog = await git.run(['log', '-g', '--format=%H', `refs/heads/${branch}`, '--'], { cwd: worktree, allowFail: true });
  for (const old of reflog.stdout.split('\n')) children.delete(old);
  for (const { oid } of loose.filter((o) => children.has(o.oid)).sort((a, b) => b.mtime - a.mtime)) {
    const refs = await git.run(['for-each-ref', '--count=1', '--format=%(refname)', `--contains=${oid}`], { cwd: worktree });
    if (!refs.stdout.trim()) return oid;
  }
  return undefined;
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function mtimeMs(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -Infinity;
  }
}
