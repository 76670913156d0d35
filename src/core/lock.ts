// The mkdir lock: mkdir is atomic, a stale lock is reclaimed by renaming it away
// (so two reclaimers cannot both win), and a live holder makes us fail fast naming it.
// The holder record carries the process identity beside the pid (see processIdentity.ts).
// A lock in a state root's .launchpad/ also yields to the harness protocol's own lock on that
// state root (harnessProtocolLock.ts), which a shell agent may hold.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';

import { ExpectedError } from './expectedErrors';
import { rmdirIfEmpty } from './fsQuiet';
import { liveHarnessProtocolHolder } from './harnessProtocolLock';
import { logTimestamp } from './log/logLine';
import { isSameProcessAlive, processIdentity } from './processIdentity';
import { ARTEFACT_DIR } from './statePaths';

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
    /** Whose lock it is: Launchpad's own, or the harness protocol's (a shell agent's). */
    readonly kind: 'launchpad' | 'harness-protocol' = 'launchpad',
  ) {
    super(heldMessage(lockDir, holder, kind));
    this.name = 'LockHeldError';
  }
}

function heldMessage(lockDir: string, holder: LockHolder | undefined, kind: LockHeldError['kind']): string {
  if (kind === 'harness-protocol') {
    return holder
      ? `another agent is working this state root: the harness protocol's lock ${lockDir} is held by pid=${holder.pid} (since ${holder.acquired_at}); wait for that agent to finish`
      : `another agent is starting on this state root: the harness protocol's lock ${lockDir} has no pid yet`;
  }
  if (!holder) return `another session is starting (lock ${lockDir} has no holder record yet)`;
  const held = `another session is active: ${holder.command} (pid=${holder.pid} on ${holder.host}, since ${holder.acquired_at}); lock ${lockDir}`;
  if (holder.host === hostname())
    return basename(lockDir) === 'session.lock'
      ? `${held}; wait for it to end, see where it is with "launchpad status", or stop it with "launchpad stop"`
      : held;
  // Whether a process on another machine still runs cannot be told from here, so the lock is
  // never taken over automatically; a person who knows can free it.
  return `${held}; a process on another host cannot be checked from here: if no launchpad runs on ${holder.host}, remove ${lockDir}`;
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
  const parentExisted = existsSync(dirname(lockDir));
  sweepLeftovers(lockDir);
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
  const handle: LockHandle = {
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
  // Checked once ours is held, so a shell agent that takes its lock after this check has to
  // get past ours in Launchpad's own commands too; it does not know our lock, so this is the
  // most that can be done from this side.
  const root = guardedStateRoot(lockDir);
  const foreign = root === undefined ? undefined : liveHarnessProtocolHolder(root);
  if (foreign) {
    handle.release();
    // A refused command leaves no trace: the folder goes again if our lock made it.
    if (!parentExisted) rmdirIfEmpty(dirname(lockDir));
    throw new LockHeldError(foreign.lockDir, foreign.holder, 'harness-protocol');
  }
  return handle;
}

/** The state root a lock in `<state root>/.launchpad/` guards. */
function guardedStateRoot(lockDir: string): string | undefined {
  const parent = dirname(lockDir);
  return basename(parent) === ARTEFACT_DIR ? dirname(parent) : undefined;
}

/** After this long a leftover staging or aside folder is removed even if its pid lives (reused). */
const LEFTOVER_MAX_AGE_MS = 60_000;

/**
 * A kill between staging a lock and renaming it into place leaves `<lock>.new.<pid>.<hex>`, and
 * one while reclaiming leaves `<lock>.stale.<pid>.<time>` (or the guard's own): remove those
 * whose creator is dead or that are older than a minute. A live creator is at most a few
 * milliseconds into its own.
 */
function sweepLeftovers(lockDir: string): void {
  const parent = dirname(lockDir);
  const prefix = `${basename(lockDir)}.`;
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const m = /^(?:reclaim\.)?(?:new|stale)\.(\d+)\./.exec(name.slice(prefix.length));
    if (!m) continue;
    const path = join(parent, name);
    if (isSameProcessAlive(Number(m[1]), undefined) && ageMs(path) < LEFTOVER_MAX_AGE_MS) continue;
    rmSync(path, { recursive: true, force: true });
  }
}

function stageLock(lockDir: string, holder: LockHolder): string {
  const staged = `${lockDir}.new.${process.pid}.${randomBytes(4).toString('hex')}`;
  tryMkdir(staged);
  writeFileSync(join(staged, 'holder.json'), JSON.stringify(holder) + '\n');
  // Shell agents following the harness protocol read `$LOCKDIR/pid`; keep it readable by such scripts.
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
