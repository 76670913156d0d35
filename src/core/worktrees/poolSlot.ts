// What a pooled worktree (a slot, <worktree root>/.pool/slot-<hex>) holds about itself, in its
// own git folder (.git/worktrees/<name>/, which does not move with the worktree):
//   launchpad-ready   JSON {base, includes, preparedAt}: prepared, untouched since; written last
//                     (atomically) by a preparation, removed first by anything that uses the slot.
//   launchpad-claim   "<pid> <process identity>": a process is preparing or taking the slot.
//                     Made with O_EXCL, so two controllers sharing the pool never use one slot
//                     twice; a claim whose process is gone is taken over.
//   launchpad-keep    gitignore patterns of what the last worktree_setup made (kept by the clean).
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

import { replaceFile } from '../atomicFile';
import { isSameProcessAlive, processIdentity } from '../processIdentity';

/** The idle slots' folder, inside the worktree root (not a task id: ids start with a letter or digit). */
export const POOL_DIR = '.pool';
const SLOT_PREFIX = 'slot-';
const READY_FILE = 'launchpad-ready';
const CLAIM_FILE = 'launchpad-claim';
const KEEP_FILE = 'launchpad-keep';
/** The files whose changes change a slot's state (prepared, claimed): what a view watches. */
export const SLOT_STATE_FILES: readonly string[] = [READY_FILE, CLAIM_FILE];

export function poolDir(worktreeRoot: string): string {
  return join(worktreeRoot, POOL_DIR);
}

export function slotName(hex: string): string {
  return SLOT_PREFIX + hex;
}

/** The slots in the pool folder (absolute paths), whatever their state. */
export function listSlots(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((n) => n.startsWith(SLOT_PREFIX))
      .sort()
      .map((n) => join(dir, n));
  } catch {
    return [];
  }
}

/**
 * The branch the slot is checked out to (a task's worktree, an attempt recovered in place: never
 * an idle slot's to prepare or remove); undefined when detached, as every idle slot is.
 */
export function slotBranch(gitDir: string): string | undefined {
  try {
    return /^ref:\s*(?:refs\/heads\/)?(.+)/.exec(readFileSync(join(gitDir, 'HEAD'), 'utf8'))?.[1]!.trim();
  } catch {
    return undefined;
  }
}

/** A rebase or merge is in progress in the worktree whose git folder this is: not ours to reset. */
export function busyWithGit(gitDir: string): boolean {
  return ['rebase-merge', 'rebase-apply', 'MERGE_HEAD'].some((f) => existsSync(join(gitDir, f)));
}

export interface ReadyMark {
  /** The commit its tracked files and index are at. */
  base: string;
  /** The fingerprint of the main checkout's included files it was brought to (none: no .worktreeinclude). */
  includes: string | null;
  /** When (ms since the epoch). */
  preparedAt: number;
}

export function readReady(gitDir: string): ReadyMark | undefined {
  try {
    const m = JSON.parse(readFileSync(join(gitDir, READY_FILE), 'utf8')) as ReadyMark;
    return typeof m.base === 'string' && typeof m.preparedAt === 'number' ? { ...m, includes: m.includes ?? null } : undefined;
  } catch {
    return undefined;
  }
}

export function writeReady(gitDir: string, mark: ReadyMark): void {
  const file = join(gitDir, READY_FILE);
  replaceFile(file, JSON.stringify(mark) + '\n');
}

export function clearReady(gitDir: string): void {
  rmSync(join(gitDir, READY_FILE), { force: true });
}

export interface Claim {
  pid: number;
  /** Its process is still the one that claimed (a pid reused since is not). */
  alive: boolean;
}

/** Who claimed the slot, if anyone. */
export function readClaim(gitDir: string): Claim | undefined {
  let holder: string[];
  try {
    holder = readFileSync(join(gitDir, CLAIM_FILE), 'utf8').trim().split(' ');
  } catch {
    return undefined;
  }
  const pid = Number(holder[0]);
  return { pid, alive: isSameProcessAlive(pid, holder[1] || undefined) };
}

/** Claims the slot for this process: false when a live process holds it (or it is no worktree). */
export function claimSlot(gitDir: string): boolean {
  const file = join(gitDir, CLAIM_FILE);
  for (let tries = 0; tries < 2; tries++) {
    try {
      const fd = openSync(file, 'wx');
      try {
        writeSync(fd, `${process.pid} ${processIdentity(process.pid) ?? ''}\n`);
      } finally {
        closeSync(fd);
      }
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return false;
      const holder = readClaim(gitDir);
      if (!holder) continue; // released meanwhile
      if (holder.alive) return false;
      rmSync(file, { force: true }); // its process is gone (a crash): the claim is void
    }
  }
  return false;
}

export function releaseSlot(gitDir: string): void {
  rmSync(join(gitDir, CLAIM_FILE), { force: true });
}

/** What the last set-up made (gitignore patterns), kept by the clean of the slot's next preparation. */
export function readKept(gitDir: string): string[] {
  try {
    return readFileSync(join(gitDir, KEEP_FILE), 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

export function writeKept(gitDir: string, patterns: string[] | undefined): void {
  if (!patterns) rmSync(join(gitDir, KEEP_FILE), { force: true });
  else replaceFile(join(gitDir, KEEP_FILE), patterns.join('\n') + (patterns.length ? '\n' : ''));
}
