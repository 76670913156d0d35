// git's worktree commands (and `branch -d/-D`, which asks whether a branch is checked out in one)
// read every worktree's admin folder (.git/worktrees/<name>/), and `worktree add` writes a new one
// file by file: a command that reads it half-written dies ("failed to read
// .git/worktrees/<name>/commondir"). So they run one at a time: queued in this process, and across
// processes on one repository (concurrent workers, the extension beside the CLI) under a lock in
// the git common dir (lock.ts's: a dead holder's is taken over). A lock, not a retry of what died:
// `worktree add -b` has made its branch by the time that read kills it, so it cannot simply run
// again; and not every collision is that read: a `worktree prune` deletes the admin folder of a
// worktree another process is moving (its gitdir names the old path until the move rewrites it),
// and a removal deletes an emptied .git/worktrees/ while an add creates its folder there. git
// commands Launchpad does not run (an agent's) do not take the lock.
// In this process's queue a task's waiting command goes before the worktree pool's background
// work that is waiting (a new slot's checkout of a large repository takes seconds): a dispatch
// waits for at most the one command already running, never for a queue of the pool's.
// (git.ts: an add stays one git command, checkout included; a removal renames the folder away and
// lets `worktree prune` forget it, then deletes the files outside this rule.)
import { join } from 'node:path';

import { acquireLock, type LockHandle } from '../lock';

const WORKTREES_LOCK = 'launchpad-worktrees.lock';

/** Whether a git command falls under the rule. */
export function readsWorktrees(args: readonly string[]): boolean {
  return args[0] === 'worktree' || (args[0] === 'branch' && args.some((a) => a === '-d' || a === '-D' || a === '--delete'));
}

/**
 * The cross-process half of the rule, for the repository whose git common dir is `commonDir`.
 * After waiting `timeoutMs` (its holder stuck, or on another host: never taken over), undefined:
 * the command runs without it.
 */
export function lockWorktrees(commonDir: string, args: readonly string[], timeoutMs: number): Promise<LockHandle | undefined> {
  return acquireLock(join(commonDir, WORKTREES_LOCK), `git ${args.slice(0, 2).join(' ')}`, timeoutMs).catch(() => undefined);
}

type Start = () => void;

const waiting: { task: Start[]; background: Start[] } = { task: [], background: [] };
let busy = false;

/** Runs `work` when no other worktree command of this process is running; `background` ones last. */
export function oneAtATime<T>(work: () => Promise<T>, background = false): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    (background ? waiting.background : waiting.task).push(() => {
      Promise.resolve().then(work).then(resolve, reject).finally(next);
    });
    if (!busy) next();
  });
}

function next(): void {
  const start = waiting.task.shift() ?? waiting.background.shift();
  busy = start !== undefined;
  start?.();
}
