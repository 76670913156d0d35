// session_config.worktree_pool: N. A task's worktree, once the task has ended, is kept (up to N
// of them, idle, in <worktree root>/.pool/) instead of deleted, and the next task starts from one
// of them instead of a new checkout: git then writes only the files that differ between the two
// bases, and the ignored files the worktree holds (a node_modules) are brought up to date rather
// than copied again or reinstalled. What cannot be told apart from a new worktree is the rule:
// before a slot is handed out, it is reset to the new base and everything untracked or ignored
// is removed (git clean -ffdx) except what .worktreeinclude names (brought to the main
// checkout's state afterwards) and what the last worktree_setup created (setup runs again).
// Disk cost: up to N idle worktrees beside the running ones, each a full checkout plus its
// ignored files. A slot that cannot be reset or moved is deleted and a new worktree made instead.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

import type { Git } from '../git/git';
import type { Logger } from '../logger';
import type { IncludeRules } from './include';

/** What the pool needs of a session. */
export interface PoolContext {
  git: Git;
  logger: Logger;
  config: { worktreeRoot: string; worktreePool: number };
}

/** The idle slots' folder, inside the worktree root (not a task id: ids start with a letter or digit). */
export const POOL_DIR = '.pool';
/** In a slot's own git folder (.git/worktrees/<name>/): what its last set-up created, kept on reuse. */
const KEEP_FILE = 'launchpad-keep';

export function poolDir(worktreeRoot: string): string {
  return join(worktreeRoot, POOL_DIR);
}

/** Slots an acquire is resetting right now (in this process): never handed out twice. */
const claimed = new Set<string>();
/** Worktrees on their way into the pool, counted against its size before they arrive. */
let arriving = 0;

function idleSlots(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((n) => n.startsWith('slot-'))
      .map((n) => join(dir, n))
      .filter((p) => !claimed.has(p));
  } catch {
    return [];
  }
}

/**
 * Puts a prepared slot at `worktree` on a new branch `branch` from `base`, ready for the task:
 * true when it did, false when there is no pool, no idle slot, or the slot could not be used
 * (then it is deleted, and the caller makes a new worktree).
 */
export async function takeFromPool(
  ctx: PoolContext,
  worktree: string,
  branch: string,
  base: string,
  rules: IncludeRules | undefined,
): Promise<boolean> {
  if (ctx.config.worktreePool <= 0 || existsSync(worktree)) return false;
  const slot = idleSlots(poolDir(ctx.config.worktreeRoot))[0];
  if (!slot) return false;
  claimed.add(slot);
  try {
    await resetSlot(ctx.git, slot, base, [...(rules?.patterns ?? []), ...readKept(slot)]);
    await ctx.git.run(['checkout', '-q', '-B', branch], { cwd: slot });
    await ctx.git.run(['worktree', 'move', '--', slot, worktree]);
    return true;
  } catch (err) {
    ctx.logger.warn(`worktree pool: ${slot} could not be reused (${(err as Error).message.split('\n')[0]}); deleting it`);
    await deleteSlot(ctx.git, slot);
    return false;
  } finally {
    claimed.delete(slot);
  }
}

/**
 * The slot as a new worktree at `base` would be: tracked files as `base` has them, the index
 * matching, nothing untracked or ignored but what `keep` (gitignore patterns) names.
 */
async function resetSlot(git: Git, slot: string, base: string, keep: string[]): Promise<void> {
  await checkOurs(git, slot);
  const gitDir = gitDirOf(slot);
  if (!gitDir || ['rebase-merge', 'rebase-apply', 'MERGE_HEAD'].some((f) => existsSync(join(gitDir, f)))) {
    throw new Error('a rebase or merge is in progress in it');
  }
  // -f: the index and every tracked file as `base` has them, whatever the last task left staged
  // or changed (what a `reset --hard` after it would do again).
  await git.run(['checkout', '-q', '-f', '--detach', base], { cwd: slot });
  await git.run(['clean', '-ffdxq', ...keep.flatMap((p) => ['-e', p])], { cwd: slot });
}

/**
 * git clean in a folder that is not one of our worktrees would clean whatever repository holds
 * it: the slot must be its own top level and share our repository's git folder.
 */
async function checkOurs(git: Git, slot: string): Promise<void> {
  const [top, common] = (
    await git.run(['rev-parse', '--show-toplevel', '--path-format=absolute', '--git-common-dir'], { cwd: slot })
  ).stdout
    .trim()
    .split('\n');
  const [, ours] = (await git.run(['rev-parse', '--show-toplevel', '--path-format=absolute', '--git-common-dir'])).stdout
    .trim()
    .split('\n');
  if (resolve(top ?? '') !== realpathSync(slot) || !common || common !== ours) throw new Error('it is not a worktree of this repository');
}

/**
 * Instead of deleting a task's worktree: detaches it (so its branch can be deleted) and moves it
 * into the pool, when the pool has room. False when it did not (no pool, full, a rebase or merge
 * left in it, git refused): the caller deletes the worktree as before.
 */
export async function returnToPool(ctx: PoolContext, worktree: string): Promise<boolean> {
  const dir = poolDir(ctx.config.worktreeRoot);
  const size = ctx.config.worktreePool;
  // A pool made under a larger worktree_pool (or before it was switched off) shrinks to the setting.
  for (const extra of idleSlots(dir).slice(size)) await deleteSlot(ctx.git, extra);
  if (size <= 0) {
    rmdirQuiet(dir);
    return false;
  }
  if (idleSlots(dir).length + arriving >= size) return false;
  arriving++;
  try {
    const gitDir = gitDirOf(worktree);
    if (!gitDir || ['rebase-merge', 'rebase-apply', 'MERGE_HEAD'].some((f) => existsSync(join(gitDir, f)))) return false;
    await ctx.git.run(['checkout', '-q', '--detach'], { cwd: worktree });
    mkdirSync(dir, { recursive: true });
    await ctx.git.run(['worktree', 'move', '--', worktree, join(dir, `slot-${randomBytes(4).toString('hex')}`)]);
    return true;
  } catch (err) {
    ctx.logger.warn(`worktree pool: could not keep ${worktree} (${(err as Error).message.split('\n')[0]}); deleting it`);
    return false;
  } finally {
    arriving--;
  }
}

/**
 * After a worktree's set-up: records what is untracked or ignored in it now (the included files
 * and what worktree_setup made), so the next reuse of it keeps those and removes the rest.
 * Without a set-up (`setUp` false) there is nothing to record beyond what .worktreeinclude names
 * (kept by its patterns): an earlier record goes, and git is not asked.
 */
export async function recordKept(git: Git, worktree: string, setUp: boolean): Promise<void> {
  const gitDir = gitDirOf(worktree);
  if (!gitDir) return;
  if (!setUp) {
    rmSync(join(gitDir, KEEP_FILE), { force: true });
    return;
  }
  const out = (await git.run(['status', '--porcelain=v1', '-z', '--ignored', '--untracked-files=normal'], { cwd: worktree })).stdout;
  const kept = out
    .split('\0')
    .filter((e) => e.startsWith('?? ') || e.startsWith('!! '))
    .map((e) => e.slice(3))
    // A gitignore pattern cannot name a path with a line break: such a file is cleaned and made again.
    .filter((p) => p && !/[\r\n]/.test(p))
    .map(literalPattern);
  writeFileSync(join(gitDir, KEEP_FILE), kept.join('\n') + (kept.length ? '\n' : ''));
}

function readKept(slot: string): string[] {
  const gitDir = gitDirOf(slot);
  if (!gitDir) return [];
  try {
    return readFileSync(join(gitDir, KEEP_FILE), 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/** A gitignore pattern matching exactly this path from the top (a folder's keeps its '/'). */
export function literalPattern(path: string): string {
  return '/' + path.replace(/[\\*?[]/g, (c) => `\\${c}`).replace(/ +$/, (spaces) => spaces.replace(/ /g, '\\ '));
}

/** A linked worktree's own git folder, from its `.git` file ("gitdir: …"). */
function gitDirOf(worktree: string): string | undefined {
  try {
    const m = /^gitdir: (.+)$/m.exec(readFileSync(join(worktree, '.git'), 'utf8'));
    if (!m) return undefined;
    const dir = m[1]!.trim();
    return isAbsolute(dir) ? dir : resolve(worktree, dir);
  } catch {
    return undefined;
  }
}

async function deleteSlot(git: Git, slot: string): Promise<void> {
  await git.removeWorktree(slot);
  // Not (or no longer) a worktree git knows: its folder goes all the same.
  rmSync(slot, { recursive: true, force: true });
}

function rmdirQuiet(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // not there, or not empty (a slot being handed out)
  }
}
