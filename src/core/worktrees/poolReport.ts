// The worktree pool as a person sees it (`launchpad pool`, a line of `status`, the Worktrees
// view): each slot's state from its own files (poolSlot.ts), and, when asked, the disk it holds.
// Read-only: no claim, no lock.
import { basename } from 'node:path';

import type { RunSettings } from '../controller/runConfig';
import { Git, linkedGitDir } from '../git/git';
import type { StatePaths } from '../statePaths';
import type { TaskFile } from '../taskFile/schema';
import { diskUse } from './diskUse';
import { busyWithGit, listSlots, poolDir, readClaim, readReady, slotBranch } from './poolSlot';
import { resolveWorktreeRoot } from './worktreeRoot';

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
  settings?: Pick<RunSettings, 'worktreeDir' | 'env'>;
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

/** One slot's state in words: `prepared at the base (a1b2c3d, 2025-07-01 10:00:00 UTC)`. */
export function describeSlot(s: PoolSlot): string {
  const prepared = s.base
    ? `${s.at_base ? 'at the base' : 'behind the base'} (${s.base.slice(0, 7)}, ${s.prepared_at!.slice(0, 19).replace('T', ' ')} UTC)`
    : '';
  switch (s.state) {
    case 'prepared':
      return `prepared ${prepared}`;
    case 'claimed':
      return `claimed by pid ${s.claimed_by} (being prepared or taken)`;
    case 'stale_claim':
      return `stale claim of pid ${s.claimed_by} (gone)${s.base ? `, prepared ${prepared}` : ''}`;
    case 'not_prepared':
      return s.git_busy ? 'not prepared, a rebase or merge in progress' : 'not prepared';
    case 'on_branch':
      return `on branch ${s.branch} (an attempt recovered there: never touched)`;
    case 'not_worktree':
      return 'not a worktree (the pool deletes it at its next start)';
  }
}

/** `6 slots (5 prepared at the base, 1 claimed)`: what `status` says of the pool, no disk walked. */
export function describePool(r: PoolReport): string {
  const count = (test: (s: PoolSlot) => boolean) => r.slots.filter(test).length;
  const parts: Array<[number, string]> = [
    [count((s) => s.state === 'prepared' && s.at_base === true), 'prepared at the base'],
    [count((s) => s.state === 'prepared' && s.at_base !== true), 'prepared behind the base'],
    [count((s) => s.state === 'claimed'), 'claimed'],
    [count((s) => s.state === 'stale_claim'), 'with a stale claim'],
    [count((s) => s.state === 'not_prepared'), 'not prepared'],
    [count((s) => s.state === 'on_branch'), 'on a branch'],
    [count((s) => s.state === 'not_worktree'), 'not a worktree'],
  ];
  const shown = parts.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`);
  const n = r.slots.length;
  return `${n} slot${n === 1 ? '' : 's'}${shown.length ? ` (${shown.join(', ')})` : ''}`;
}
