// The mkdir lock of seed 002: mkdir is atomic, a stale lock is reclaimed by renaming it away
// (so two reclaimers cannot both win), and a live holder makes us fail fast naming it.
// The holder record carries the process identity beside the pid (see processIdentity.ts).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { ExpectedError } from './expectedErrors';
import { logTimestamp } from './log/logLine';
import { isSameProcessAlive, processIdentity } from './processIdentity';

export interface LockHolder {
  pid: number;
  identity?: string;
  host: string;
  /** What holds it, for the message a second caller sees: "launchpad run", "launchpad add". */
  command: string;
  acquired_at: string;
}

export class LockHeldError extends ExpectedError {
  constructor(
    readonly lockDir: string,
    readonly holder: LockHolder | undefined,
  ) {
    super(
      holder
        ? `another session is active: ${holder.command} (pid=${holder.pid} on ${holder.host}, since ${holder.acquired_at}); lock ${lockDir}`
        : `another session is starting (lock ${lockDir} has no holder record yet)`,
    );
    this.name = 'LockHeldError';
  }
}

export interface LockHandle {
  readonly dir: string;
  readonly holder: LockHolder;
  /** Set when acquiring removed a dead holder's lock; the caller logs it. */
  readonly reclaimedFrom?: LockHolder | undefined;
  release(): void;
}

/** A lock directory younger than this without a holder record is being created, not stale. */
const CREATING_GRACE_MS = 5000;

export function readLockHolder(lockDir: string): LockHolder | undefined {
  try {
    const holder = JSON.parse(readFileSync(join(lockDir, 'holder.json'), 'utf8')) as LockHolder;
    return typeof holder.pid === 'number' ? holder : undefined;
  } catch {
    return undefined;
  }
}

/** The live holder of a lock, or undefined when it is free or stale. Read-only. */
export function liveLockHolder(lockDir: string): LockHolder | undefined {
  const holder = readLockHolder(lockDir);
  return holder && isHolderAlive(holder) ? holder : undefined;
}

function isHolderAlive(holder: LockHolder): boolean {
  // Another machine's process cannot be checked from here: assume it is alive.
  if (holder.host !== hostname()) return true;
  return isSameProcessAlive(holder.pid, holder.identity);
}

/** Takes the lock now or throws LockHeldError. */
export function tryAcquireLock(lockDir: string, command: string): LockHandle {
  const holder: LockHolder = {
    pid: process.pid,
    identity: processIdentity(process.pid),
    host: hostname(),
    command,
    acquired_at: logTimestamp(),
  };
  // The lock appears with its holder record already inside (a staged directory renamed into
  // place), so nobody ever sees our lock without knowing whose it is.
  const staged = stageLock(lockDir, holder);
  let reclaimedFrom: LockHolder | undefined;
  try {
    if (!tryPlace(staged, lockDir)) {
      const current = readLockHolder(lockDir);
      if (current ? isHolderAlive(current) : ageMs(lockDir) < CREATING_GRACE_MS) throw new LockHeldError(lockDir, current);
      reclaimedFrom = reclaimStale(lockDir, staged);
    }
  } finally {
    rmSync(staged, { recursive: true, force: true }); // gone already when it was placed
  }

  let released = false;
  return {
    dir: lockDir,
    holder,
    reclaimedFrom,
    release() {
      if (released) return;
      released = true;
      const current = readLockHolder(lockDir);
      // Never remove a lock someone else took over after declaring ours stale.
      if (!current || current.pid !== holder.pid || current.identity !== holder.identity) return;
      rmSync(lockDir, { recursive: true, force: true });
    },
  };
}

function stageLock(lockDir: string, holder: LockHolder): string {
  const staged = `${lockDir}.new.${process.pid}.${randomBytes(4).toString('hex')}`;
  tryMkdir(staged);
  writeFileSync(join(staged, 'holder.json'), JSON.stringify(holder) + '\n');
  // Seed 002's shell snippet reads `$LOCKDIR/pid`; keep it readable by such scripts.
  writeFileSync(join(staged, 'pid'), `${holder.pid}\n`);
  return staged;
}

/**
 * Renames the staged lock into place; false when a lock is already there. (rename(2) would
 * replace an *empty* directory: Launchpad never makes one, and checks for one first.)
 */
function tryPlace(staged: string, lockDir: string): boolean {
  // An empty lock directory is another tool's mkdir lock being created: leave it be.
  if (existsSync(lockDir)) return false;
  try {
    renameSync(staged, lockDir);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOTEMPTY') return false;
    throw err;
  }
}

/** A reclaimer that died inside the guard leaves it behind; after this long it is ignored. */
const RECLAIM_GRACE_MS = 10_000;

/**
 * Replaces a stale lock with ours. Only one process reclaims at a time (the `.reclaim` guard
 * directory), and it checks staleness again inside the guard: without that, a slow reclaimer
 * could move aside the lock a faster one had just taken, and both would hold it.
 */
function reclaimStale(lockDir: string, staged: string): LockHolder | undefined {
  const guard = `${lockDir}.reclaim`;
  if (!tryMkdir(guard)) {
    if (ageMs(guard) < RECLAIM_GRACE_MS) throw new LockHeldError(lockDir, readLockHolder(lockDir));
    const dead = `${guard}.stale.${process.pid}.${Date.now()}`;
    try {
      renameSync(guard, dead);
      rmSync(dead, { recursive: true, force: true });
    } catch {
      // Someone else cleared it first.
    }
    if (!tryMkdir(guard)) throw new LockHeldError(lockDir, readLockHolder(lockDir));
  }
  try {
    const holder = readLockHolder(lockDir);
    if (existsSync(lockDir) && (holder ? isHolderAlive(holder) : ageMs(lockDir) < CREATING_GRACE_MS)) {
      throw new LockHeldError(lockDir, holder);
    }
    const aside = `${lockDir}.stale.${process.pid}.${Date.now()}`;
    try {
      renameSync(lockDir, aside);
      rmSync(aside, { recursive: true, force: true });
    } catch {
      // Already gone (its holder released it): free to take.
    }
    if (!tryPlace(staged, lockDir)) throw new LockHeldError(lockDir, readLockHolder(lockDir));
    return holder;
  } finally {
    rmSync(guard, { recursive: true, force: true });
  }
}

/** Waits up to `timeoutMs` for the lock (short transactions), then throws LockHeldError. */
export async function acquireLock(lockDir: string, command: string, timeoutMs: number): Promise<LockHandle> {
  const deadline = Date.now() + timeoutMs;
  let delay = 5;
  for (;;) {
    try {
      return tryAcquireLock(lockDir, command);
    } catch (err) {
      if (!(err instanceof LockHeldError) || Date.now() >= deadline) throw err;
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 100);
  }
}

function tryMkdir(dir: string): boolean {
  for (let tries = 0; ; tries++) {
    try {
      mkdirSync(dir);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return false;
      // The parent (.launchpad/) can vanish under us: a transaction that created it only for its
      // lock removes it again when it ends. Make it again.
      if (code !== 'ENOENT' || tries >= 20) throw err;
      mkdirSync(dirname(dir), { recursive: true });
    }
  }
}

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return Infinity;
  }
}
