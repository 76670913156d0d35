// Launchpad's own writes to a spec's files, committed when git tracks them. A run refuses to
// start on a main working tree with uncommitted changes to tracked files, so ticks and synced
// metadata left uncommitted would stop the next run; only the files Launchpad wrote are
// committed (`git commit --only`), whatever else is staged stays staged.
import { relative } from 'node:path';

import { Git } from '../git/git';
import type { Logger } from '../logger';

/** Commits those of `files` that are tracked and changed; returns the committed paths (relative to the root). */
export async function commitOwnWrites(root: string, files: string[], message: string, logger?: Logger): Promise<string[]> {
  const git = new Git(root);
  const rel = [...new Set(files.map((f) => relative(root, f)))];
  if (!rel.length) return [];
  try {
    const listed = await git.run(['ls-files', '-z', '--', ...rel], { allowFail: true });
    if (listed.code !== 0) return []; // not a repository
    const tracked = listed.stdout.split('\0').filter(Boolean);
    if (!tracked.length) return [];
    const status = await git.run(['status', '--porcelain=v1', '-z', '--untracked-files=no', '--', ...tracked]);
    if (!status.stdout) return [];
    await git.run(['commit', '-q', '--no-verify', '-m', message, '--only', '--', ...tracked]);
    return tracked;
  } catch (err) {
    logger?.warn(`could not commit ${rel.join(', ')}: ${(err as Error).message.split('\n')[0]}; commit them before the next run`);
    return [];
  }
}
