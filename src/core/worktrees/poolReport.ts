// The worktree pool as a person sees it (`launchpad pool`, a line of `status`, the Worktrees
// view): each slot's state from its own files (poolSlot.ts), and, when asked, the disk it holds.
// Read-only: no claim, no lock. In words: poolText.ts.
import { basename } from 'node:path';

import { Git, linkedGitDir } from '../git/git';
import type { StatePaths } from '../statePaths';
import type { TaskFile } from '../taskFile/schema';
import { diskUse } from './diskUse';
import { busyWithGit, listSlots, poolDir, readClaim, readReady, slotBranch } from './poolSlot';
import { resolveWorktreeRoot, type WorktreeSettings } from './worktreeRoot';

/**
 * prepared: ready to be handed out. claimed: a live process is preparing or taking it.
 * stale_claim: claimed by a process that is gone (the next claim takes it over).
 * not_prepared: no ready mark (being prepared, or left unprepared by a stop).
 * on_branch: checked out to a branch, an attempt recovered there: never touched.
 * not_worktree: a folder git does not know as a worktree (the pool deletes it at its next start).
 */
export type SlotState = 'prepared' | 'claimed' | 'stale_claim' | 'not_prepared' | 'on_branch' | 'not_worktree';

export interface PoolSlot {
  name: string;
  path: string;
  state: SlotState;
  /** The commit its ready mark says it is at (null without a mark). */
  base: string | null;
  /** Its base is the base branch's head now (null without a mark). */
  at_base: boolean | null;
  /** When it was prepared (UTC, ISO 8601; null without a mark). */
  prepared_at: string | null;
  /** The pid of its claim, live or stale. */
  claimed_by: number | null;
  branch: string | null;
  /** A rebase or merge is in progress in it. */
  git_busy: boolean;
  /** Disk it holds, its git folder included (null when not measured). */
  bytes: number | null;
}

export interface PoolReport {
  worktree_root: string;
  dir: string;
  /** session_config.worktree_pool. */
  size: number;
  /** The main checkout's branch and its head: where prepared slots should be. */
  base_branch: string | null;
  base_head: string | null;
  slots: PoolSlot[];
  /** All slots' disk (null when not measured). */
  bytes: number | null;
}

export interface PoolOptions {
  /** --worktree-dir or the editor's setting, and the environment (LAUNCHPAD_WORKTREE_DIR). */
  settings?: WorktreeSettings;
  /** Measure each slot's disk: a walk of every file (about 100 ms per 20,000 files). */
  disk?: boolean;
}

/** The pool of the repository holding the state root; undefined outside git. */
export async function readPool(paths: StatePaths, file: TaskFile, opts: PoolOptions = {}): Promise<PoolReport | undefined> {
  const git = new Git(paths.root);
  const toplevel = await git.toplevel();
  if (!toplevel) return undefined;
  const worktreeRoot = resolveWorktreeRoot(opts.settings ?? {}, file, paths, toplevel);
  const [branch, head] = await Promise.all([git.currentBranch(), git.head()]);
  const slots = listSlots(poolDir(worktreeRoot)).map((path) => readSlot(path, head, opts.disk === true));
  return {
    worktree_root: worktreeRoot,
    dir: poolDir(worktreeRoot),
    size: file.session_config.worktree_pool ?? 0,
    base_branch: branch ?? null,
    base_head: head ?? null,
    slots,
    bytes: opts.disk ? slots.reduce((n, s) => n + (s.bytes ?? 0), 0) : null,
  };
}

function readSlot(path: string, head: string | undefined, disk: boolean): PoolSlot {
  const gitDir = linkedGitDir(path);
  const slot: PoolSlot = {
    name: basename(path),
    path,
    state: 'not_worktree',
    base: null,
    at_base: null,
    prepared_at: null,
    claimed_by: null,
    branch: null,
    git_busy: false,
    bytes: disk ? diskUse(gitDir ? [path, gitDir] : [path]) : null,
  };
  if (!gitDir) return slot;
  const mark = readReady(gitDir);
  const claim = readClaim(gitDir);
  slot.branch = slotBranch(gitDir) ?? null;
  slot.git_busy = busyWithGit(gitDir);
  slot.claimed_by = claim?.pid ?? null;
  if (mark) {
    slot.base = mark.base;
    slot.at_base = mark.base === head;
    slot.prepared_at = new Date(mark.preparedAt).toISOString();
  }
  slot.state = slot.branch ? 'on_branch' : claim?.alive ? 'claimed' : claim ? 'stale_claim' : mark ? 'prepared' : 'not_prepared';
  return slot;
}
