// Frees the disk the worktree pool holds (`launchpad pool clear`, the extension's Clear Worktree
// Pool): every idle slot is removed the way the pool removes one. Safe while a run is going: each
// slot is claimed first with the pool's O_EXCL claim, so a controller can neither take nor prepare
// it meanwhile, and one a live process claimed, or checked out to a branch, is kept. A running
// session refills the pool as its tasks end; the next session's start fills it to worktree_pool.
import { basename } from 'node:path';

import { Git, linkedGitDir } from '../git/git';
import type { StatePaths } from '../statePaths';
import type { TaskFile } from '../taskFile/schema';
import { diskUse } from './diskUse';
import { deleteSlot, rmdirQuiet, unfinishedSlots } from './pool';
import { type PoolOptions, type PoolReport, readPool } from './poolReport';
import { busyWithGit, claimSlot, readClaim, releaseSlot, slotBranch } from './poolSlot';

export interface RemovedSlot {
  name: string;
  path: string;
  /** Disk it held, its git folder included. */
  bytes: number;
}

export interface KeptSlot {
  name: string;
  path: string;
  reason: string;
}

export interface PoolClearing {
  /** The pool as it was before (undefined outside git). */
  before: PoolReport | undefined;
  removed: RemovedSlot[];
  kept: KeptSlot[];
  bytes_freed: number;
}

export async function clearPool(paths: StatePaths, file: TaskFile, opts: Omit<PoolOptions, 'disk'> = {}): Promise<PoolClearing> {
  const before = await readPool(paths, file, opts);
  const result: PoolClearing = { before, removed: [], kept: [], bytes_freed: 0 };
  if (!before) return result;
  const git = new Git(paths.root);
  const remove = async (path: string, gitDir: string | undefined) => {
    const bytes = diskUse(gitDir ? [path, gitDir] : [path]);
    await deleteSlot(git, path);
    result.removed.push({ name: basename(path), path, bytes });
    result.bytes_freed += bytes;
  };
  // What a crash left while a slot was made or removed: the pool's start deletes these too.
  for (const left of unfinishedSlots(before.dir)) await remove(left, linkedGitDir(left));
  for (const { name, path } of before.slots) {
    const keep = (reason: string) => result.kept.push({ name, path, reason });
    const gitDir = linkedGitDir(path);
    if (!gitDir) {
      await remove(path, undefined); // not a worktree: nothing of git's to protect in it
      continue;
    }
    const branch = slotBranch(gitDir);
    if (branch) {
      keep(`on branch ${branch}: an attempt recovered there, left for its task`);
      continue;
    }
    if (!claimSlot(gitDir)) {
      const claim = readClaim(gitDir);
      keep(claim ? `claimed by pid ${claim.pid}, a live process preparing or taking it` : 'could not be claimed');
      continue;
    }
    let removed = false;
    try {
      // Claimed: checked again, a controller may have handed it out or started a rebase before.
      const now = slotBranch(gitDir);
      if (now) keep(`on branch ${now}: an attempt recovered there, left for its task`);
      else if (busyWithGit(gitDir)) keep('a rebase or merge is in progress in it');
      else {
        await remove(path, gitDir);
        removed = true;
      }
    } catch (err) {
      keep(`could not be removed: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`);
    } finally {
      // A removed slot's git folder went with it (and its name may be a new worktree's by now).
      if (!removed) releaseSlot(gitDir);
    }
  }
  rmdirQuiet(before.dir);
  return result;
}
