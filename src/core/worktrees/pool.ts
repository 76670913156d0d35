// session_config.worktree_pool: N. Up to N worktrees are kept for reuse in <worktree root>/.pool/,
// prepared ahead of time, so a dispatch costs a few ref updates and a rename instead of a checkout
// and a copy of the included files:
//   - a session's start prepares again those not prepared against the main checkout's current
//     included files; once its first batch is dispatched, the pool is filled up to N with new
//     ones in the background, each made only while no task's own worktree is being made or set up;
//   - a task's worktree, once the task has ended, returns to the pool (when it holds fewer than
//     N, or it can take the place of a new one not begun) and is prepared in the background;
//     a session's end leaves the new ones not begun to the next session;
//   - a dispatch takes a prepared one: moved to the base it needs when the base moved since (git
//     writes only the files that differ), put on the task's new branch, moved to the task's path.
//     With none prepared it waits for one being prepared again, else makes a new worktree.
// Preparing is what makes a slot indistinguishable from a new worktree: every tracked file and
// the index as the base has them (checkout -f), nothing untracked or ignored but what
// .worktreeinclude names and what the last worktree_setup made (clean -ffdx; setup runs again
// for each task), the included files brought to the main checkout's state (copied where they
// differ), no reflog of earlier tasks. The included files are those the main checkout had when
// the slot was prepared: a slot prepared before the latest scan found them changed is prepared
// again before use. Disk: up to N idle worktrees, each a checkout plus its included files; with
// N ≥ 2 × max_parallel_agents a dispatch never waits for a preparation.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, realpathSync, rmdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { type Git, isRemovalLeftover, linkedGitDir } from '../git/git';
import type { Logger } from '../logger';
import { isSameProcessAlive } from '../processIdentity';
import { copyIncluded, readIncludeRules, scanIncluded } from './include';
import {
  busyWithGit,
  claimSlot,
  clearReady,
  listSlots,
  poolDir,
  readKept,
  readReady,
  type ReadyMark,
  releaseSlot,
  slotBranch,
  slotName,
  writeKept,
  writeReady,
} from './poolSlot';

/** What the pool needs of a session. */
export interface PoolHost {
  git: Git;
  logger: Logger;
  /** The main checkout. */
  toplevel: string;
  config: { worktreeRoot: string; worktreePool: number };
  /** The commit new worktrees start from (it moves with every merge). */
  readonly head: string;
  /** Aborted when the session stops: preparations end between two steps. */
  readonly stopSignal: AbortSignal;
}

/** Slots prepared at once, in the background (each mostly git and file copies). */
const PARALLEL_PREPARATIONS = 2;

/** prepare: an idle slot made ready; create: a new slot; advance: a ready slot moved to the new base. */
type Work = { kind: 'prepare' | 'create' | 'advance'; done: Promise<void> };

export class WorktreePool {
  /**
   * The fingerprint of the main checkout's included files at the latest scan (null: nothing to
   * include; undefined: not scanned yet). A slot prepared against another one is stale.
   */
  private includes: string | null | undefined;
  /** Background work of this process, by slot (or a new slot's temporary name). */
  private readonly work = new Map<string, Work>();
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /**
   * Worktrees on their way into the pool (returned, or new ones scheduled), counted against its
   * size before they arrive (a count that errs high for a moment: the pool never exceeds N).
   */
  private arriving = 0;
  /** New worktrees being made for dispatched tasks: the pool's own new ones wait for them. */
  private dispatching = 0;
  private readonly whenNoDispatch: Array<() => void> = [];
  private opened = false;
  private filled = false;
  private closing = false;
  /** New slots scheduled whose `worktree add` has not begun; `replaced` of them a handed-back worktree took the place of. */
  private unbegun = 0;
  private replaced = 0;

  constructor(private readonly host: PoolHost) {}

  private get size(): number {
    return this.host.config.worktreePool;
  }
  private get dir(): string {
    return poolDir(this.host.config.worktreeRoot);
  }

  /**
   * At a session's start: the pool shrinks to the setting (emptied when it is 0), its prepared
   * slots are brought to the base, and those not prepared against the main checkout's included
   * files as they are now are prepared again. fill() adds the new ones.
   */
  async open(): Promise<void> {
    for (const left of unfinishedSlots(this.dir)) await this.deleteSlot(left);
    for (const extra of listSlots(this.dir).slice(Math.max(0, this.size))) await this.deleteIfIdle(extra);
    if (this.size <= 0) {
      rmdirQuiet(this.dir);
      return;
    }
    const rules = readIncludeRules(this.host.toplevel);
    try {
      this.includes = rules ? (await scanIncluded(this.host.git, this.host.toplevel, rules, this.host.stopSignal)).fingerprint : null;
    } catch (err) {
      this.host.logger.warn(`worktree pool: could not list the included files (${firstLine(err)}); every slot is prepared again`);
    }
    const slots = listSlots(this.dir);
    for (const slot of slots) if (!this.readyMark(slot)) this.schedule(slot);
    // The prepared ones are brought to the base now, one at a time: the first batch checks nothing out.
    for (const slot of slots) if (this.readyMark(slot) && !this.host.stopSignal.aborted) await this.advance(slot);
    this.opened = true;
    this.filled = false;
    this.closing = false;
  }

  /**
   * Fills the pool up to N with new worktrees, in the background, once after each open(). The run loop
   * calls it when its first batch is dispatched: those tasks cannot take a slot made now anyway,
   * and each new slot waits while any task's own worktree is being made and set up
   * (startDispatch), so a first run on an empty pool is never slower than one without it.
   */
  fill(): void {
    if (!this.opened || this.filled || this.size <= 0) return;
    this.filled = true;
    for (let i = listSlots(this.dir).length + this.arriving; i < this.size; i++) {
      this.arriving++;
      this.unbegun++;
      this.schedule(undefined);
    }
  }

  /**
   * At a session's end: new slots not begun yet are not made (the next session's fill makes
   * them), so a run does not end minutes late making worktrees it will not use; the
   * preparations under way end as usual (settled()).
   */
  close(): void {
    this.closing = true;
    for (const go of this.whenNoDispatch.splice(0)) go();
  }

  /**
   * Hands a prepared slot out as the task's worktree at `worktree`, on the new branch `branch`
   * from `base`. Undefined when there is none to hand out (the caller makes a new worktree).
   */
  async take(worktree: string, branch: string, base: string): Promise<ReadyMark | undefined> {
    if (this.size <= 0 || existsSync(worktree)) return undefined;
    const waitFor = async (kinds: Array<Work['kind']>) => {
      const work = [...this.work.values()].filter((w) => kinds.includes(w.kind));
      if (!work.length || this.host.stopSignal.aborted) return false;
      await Promise.race(work.map((w) => w.done));
      return true;
    };
    for (;;) {
      const slots = listSlots(this.dir).map((slot) => ({ slot, mark: this.readyMark(slot) }));
      // One at the base needs no checkout; one following the base gets there sooner than a checkout started now.
      const atBase = slots.filter((s) => s.mark?.base === base).map((s) => s.slot);
      const got = (await this.takeOne(atBase, worktree, branch, base)) ?? ((await waitFor(['advance'])) ? 'again' : undefined);
      if (got === 'again') continue;
      if (got) return got === 'refused' ? undefined : got;
      const behind = slots.filter((s) => s.mark && s.mark.base !== base).map((s) => s.slot);
      const late = await this.takeOne(behind, worktree, branch, base);
      if (late) return late === 'refused' ? undefined : late;
      // Stale ones (prepared against included files the main checkout no longer has) are prepared again.
      for (const s of slots) if (!s.mark && this.isStale(s.slot)) this.schedule(s.slot);
      // None prepared: one being prepared is ready long before a new worktree would be.
      if (!(await waitFor(['prepare', 'advance']))) return undefined;
    }
  }

  /** The first of `slots` this process can claim, handed out; 'refused' when git refused it. */
  private async takeOne(slots: string[], worktree: string, branch: string, base: string): Promise<ReadyMark | 'refused' | undefined> {
    for (const slot of slots) {
      const gitDir = linkedGitDir(slot);
      if (!gitDir || !claimSlot(gitDir)) continue;
      try {
        // Claimed: still prepared (not used, or being prepared again, meanwhile)?
        const mark = readReady(gitDir);
        if (!mark || mark.includes !== this.includes) continue;
        clearReady(gitDir);
        return (await this.handOut(slot, gitDir, mark, worktree, branch, base)) ? mark : 'refused';
      } finally {
        releaseSlot(gitDir);
      }
    }
    return undefined;
  }

  /** Prepared, but against included files the main checkout no longer has. */
  private isStale(slot: string): boolean {
    const gitDir = linkedGitDir(slot);
    const mark = gitDir && readReady(gitDir);
    return !!mark && mark.includes !== this.includes;
  }

  /** A claimed, prepared slot → the task's worktree; false (the slot put back or deleted) when git refused. */
  private async handOut(slot: string, gitDir: string, mark: ReadyMark, worktree: string, branch: string, base: string): Promise<boolean> {
    const { git } = this.host;
    try {
      if (mark.base !== base) await git.run(['checkout', '-q', '-f', '--detach', base], { cwd: slot });
    } catch (err) {
      this.host.logger.warn(`worktree pool: ${slot} could not be moved to ${base.slice(0, 12)} (${firstLine(err)}); deleting it`);
      await this.deleteSlot(slot, false);
      return false;
    }
    // The branch must be new (a leftover of the task's, with commits to keep, is the caller's to
    // handle). HEAD may name it before it exists, so both are written at once.
    const [created, named] = await Promise.all([
      git.run(['update-ref', `refs/heads/${branch}`, base, ''], { allowFail: true }),
      git.run(['symbolic-ref', 'HEAD', `refs/heads/${branch}`], { cwd: slot, allowFail: true }),
    ]);
    if (created.code !== 0 && named.code === 0) {
      // Detached again at the base, prepared as it was: the slot goes back.
      if ((await git.run(['update-ref', '--no-deref', 'HEAD', base], { cwd: slot, allowFail: true })).code === 0) {
        writeReady(gitDir, { ...mark, base });
        return false;
      }
    }
    try {
      if (created.code !== 0 || named.code !== 0) throw new Error((created.code !== 0 ? created : named).stderr.trim() || 'git refused');
      await git.moveWorktree(slot, worktree);
      return true;
    } catch (err) {
      this.host.logger.warn(`worktree pool: ${slot} could not be handed out (${firstLine(err)}); deleting it`);
      await this.deleteSlot(slot, false);
      if (created.code === 0) await git.run(['branch', '-D', '--', branch], { allowFail: true });
      return false;
    }
  }

  /**
   * Instead of deleting a task's worktree: detaches it (so its branch can be deleted), moves it
   * into the pool and prepares it in the background, when the pool holds fewer than N. False
   * when it did not (no pool, full, a rebase or merge left in it, git refused): the caller
   * deletes the worktree as before.
   */
  async give(worktree: string): Promise<boolean> {
    if (this.size <= 0) return false;
    if (listSlots(this.dir).length + this.arriving >= this.size) {
      // Full but for new slots not begun yet: this worktree takes one's place (it needs a clean,
      // a new one a whole checkout and a copy of the included files).
      if (this.unbegun <= this.replaced) return false;
      this.replaced++;
    }
    this.arriving++;
    try {
      const gitDir = linkedGitDir(worktree);
      if (!gitDir || busyWithGit(gitDir)) return false;
      await this.host.git.run(['update-ref', '--no-deref', 'HEAD', 'HEAD'], { cwd: worktree });
      mkdirSync(this.dir, { recursive: true });
      const slot = join(this.dir, slotName(randomBytes(4).toString('hex')));
      await this.host.git.moveWorktree(worktree, slot);
      this.schedule(slot);
      return true;
    } catch (err) {
      this.host.logger.warn(`worktree pool: could not keep ${worktree} (${firstLine(err)}); deleting it`);
      return false;
    } finally {
      this.arriving--;
    }
  }

  /**
   * The base branch moved (a merge): the prepared slots follow it in the background, so that a
   * dispatch finds one at its base and checks nothing out.
   */
  baseMoved(): void {
    if (this.size <= 0) return;
    // One: the dispatch that the merge's freed slot makes next. (Each ready slot following every
    // merge would keep the disk and both cores busy for the dispatches themselves.)
    const next = listSlots(this.dir).find((slot) => !this.work.has(slot) && this.readyMark(slot));
    if (next && this.readyMark(next)!.base !== this.host.head) this.schedule(next, 'advance');
  }

  /**
   * A task's worktree is being made and set up (until its agent starts): the pool's own new
   * worktrees wait until none is, so a task never queues behind them for the disk or for git's
   * one-at-a-time worktree commands. Returns the call that ends it (once; later calls do nothing).
   */
  startDispatch(): () => void {
    this.dispatching++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--this.dispatching === 0) for (const go of this.whenNoDispatch.splice(0)) go();
    };
  }

  /** Resolves when the background work started so far has ended (a session's end waits for it). */
  async settled(): Promise<void> {
    while (this.work.size) await Promise.all([...this.work.values()].map((w) => w.done));
  }

  /** The slot's ready mark when it can be handed out now. */
  private readyMark(slot: string): ReadyMark | undefined {
    const gitDir = linkedGitDir(slot);
    const mark = gitDir && readReady(gitDir);
    return mark && mark.includes === this.includes ? mark : undefined;
  }

  /** Background work on `slot` (a new one when undefined), once at a time per slot. */
  private schedule(slot: string | undefined, kind: 'prepare' | 'advance' = 'prepare'): void {
    const key = slot ?? newSlotName();
    if (this.work.has(key)) return;
    const task = slot ? (kind === 'advance' ? () => this.advance(slot) : () => this.prepare(slot)) : () => this.create(key);
    // An advance starts at once: one checkout of what a merge changed, and a dispatch may wait for it.
    const start = !slot ? this.createTurn() : kind === 'advance' ? Promise.resolve() : this.turn();
    const done = start
      .then(task)
      .catch((err: unknown) => this.host.logger.warn(`worktree pool: ${firstLine(err)}`))
      .finally(() => {
        this.work.delete(key);
        if (kind !== 'advance' || !slot) this.endTurn();
      });
    this.work.set(key, { kind: slot ? kind : 'create', done });
  }

  /**
   * A turn for a new slot, taken only while no task's own worktree is being made or set up
   * (startDispatch): a new slot waiting for that does not hold a turn the preparation of a
   * handed-back worktree needs.
   */
  private async createTurn(): Promise<void> {
    for (;;) {
      while (this.dispatching && !this.closing) await new Promise<void>((go) => this.whenNoDispatch.push(go));
      await this.turn();
      if (!this.dispatching || this.closing) return;
      this.endTurn();
    }
  }

  private endTurn(): void {
    this.running--;
    this.waiting.shift()?.();
  }

  private async turn(): Promise<void> {
    if (this.running >= PARALLEL_PREPARATIONS) await new Promise<void>((go) => this.waiting.push(go));
    this.running++;
  }

  /** A prepared slot moved to the current base: git writes only the files that differ. */
  private async advance(slot: string): Promise<void> {
    const gitDir = linkedGitDir(slot);
    if (this.host.stopSignal.aborted || !gitDir || !claimSlot(gitDir)) return;
    try {
      const mark = readReady(gitDir);
      const head = this.host.head;
      if (!mark || mark.base === head || slotBranch(gitDir) !== undefined) return;
      clearReady(gitDir);
      await this.host.git.run(['checkout', '-q', '-f', '--detach', head], { cwd: slot });
      writeReady(gitDir, { ...mark, base: head });
    } catch (err) {
      if (this.host.stopSignal.aborted) return; // left unprepared: the next session prepares it
      this.host.logger.warn(`worktree pool: ${slot} could not follow the base (${firstLine(err)}); deleting it`);
      await this.deleteSlot(slot);
    } finally {
      releaseSlot(gitDir);
    }
  }

  /**
   * A new slot: made under a name the pool does not list, prepared, then put in the pool; counted
   * in `arriving` since it was scheduled (fill()), until it is in the pool folder or failed.
   */
  private async create(name: string): Promise<void> {
    let counted = true;
    const arrived = () => {
      if (counted) this.arriving--;
      counted = false;
    };
    try {
      this.unbegun--;
      // Replaced by a task's worktree handed back meanwhile, or the session is ending: not made.
      if (this.replaced > 0) return void this.replaced--;
      if (!this.host.stopSignal.aborted && !this.closing) await this.createSlot(name, arrived);
    } finally {
      arrived();
    }
  }

  private async createSlot(name: string, arrived: () => void): Promise<void> {
    const { git, head } = this.host;
    const temp = join(this.dir, name);
    mkdirSync(this.dir, { recursive: true });
    await git.addDetachedWorktree(temp, head, { background: true });
    const gitDir = linkedGitDir(temp);
    if (!gitDir || !claimSlot(gitDir)) return;
    try {
      await this.bringIncluded(temp, gitDir, head, false);
      await git.moveWorktree(temp, join(this.dir, slotName(randomBytes(4).toString('hex'))), { background: true });
      arrived();
    } catch (err) {
      if (!this.host.stopSignal.aborted) this.host.logger.warn(`worktree pool: could not make a new slot (${firstLine(err)})`);
      await this.deleteSlot(temp);
    } finally {
      releaseSlot(gitDir);
    }
  }

  /** An idle slot made what a new worktree at the current base is. */
  private async prepare(slot: string): Promise<void> {
    if (this.host.stopSignal.aborted) return;
    const gitDir = linkedGitDir(slot);
    if (!gitDir) {
      await this.deleteSlot(slot); // not a worktree (any more): its folder goes
      return;
    }
    if (!claimSlot(gitDir)) return;
    try {
      // On a branch: a task's worktree (an attempt recovered in place), not an idle slot.
      if (slotBranch(gitDir) !== undefined) return;
      clearReady(gitDir);
      await this.checkOurs(slot);
      if (busyWithGit(gitDir)) throw new Error('a rebase or merge is in progress in it');
      const { git, head } = this.host;
      const rules = readIncludeRules(this.host.toplevel);
      // -f: the index and every tracked file as `head` has them, whatever the last task left
      // staged or changed; then everything untracked or ignored goes but what is kept.
      await git.run(['checkout', '-q', '-f', '--detach', head], { cwd: slot });
      const keep = [...(rules?.patterns ?? []), ...readKept(gitDir)];
      await git.run(['clean', '-ffdxq', ...keep.flatMap((p) => ['-e', p])], { cwd: slot });
      rmSync(join(gitDir, 'logs', 'HEAD'), { force: true }); // earlier tasks' checkouts
      await this.bringIncluded(slot, gitDir, head, true);
    } catch (err) {
      if (this.host.stopSignal.aborted) return; // left unprepared: the next session prepares it
      this.host.logger.warn(`worktree pool: ${slot} could not be prepared (${firstLine(err)}); deleting it`);
      await this.deleteSlot(slot);
    } finally {
      releaseSlot(gitDir);
    }
  }

  /** Copies (or brings up to date) the included files, then marks the slot ready at `base`. */
  private async bringIncluded(slot: string, gitDir: string, base: string, sync: boolean): Promise<void> {
    const rules = readIncludeRules(this.host.toplevel);
    let includes: string | null = null;
    if (rules) {
      const copied = await copyIncluded(this.host.git, this.host.toplevel, slot, rules, { sync, signal: this.host.stopSignal });
      includes = copied.source.fingerprint;
    }
    // A scan that found the main checkout's included files changed makes earlier slots stale.
    this.includes = includes;
    writeReady(gitDir, { base, includes, preparedAt: Date.now() });
  }

  /**
   * git checkout/clean in a folder that is not one of our worktrees would change whatever
   * repository holds it: the slot must be its own top level and share our git folder.
   */
  private async checkOurs(slot: string): Promise<void> {
    const ask = async (cwd?: string) =>
      (await this.host.git.run(['rev-parse', '--show-toplevel', '--path-format=absolute', '--git-common-dir'], { cwd })).stdout
        .trim()
        .split('\n');
    const [top, common] = await ask(slot);
    const [, ours] = await ask();
    if (resolve(top ?? '') !== realpathSync(slot) || !common || common !== ours) throw new Error('it is not a worktree of this repository');
  }

  /** Deletes an idle slot another process is not using (a pool shrunk to its setting). */
  private async deleteIfIdle(slot: string): Promise<void> {
    const gitDir = linkedGitDir(slot);
    if (gitDir && (slotBranch(gitDir) !== undefined || !claimSlot(gitDir))) return;
    await this.deleteSlot(slot);
  }

  /** `background` but in a dispatch's own path: its git commands wait behind a task's (worktreeCommands.ts). */
  private async deleteSlot(slot: string, background = true): Promise<void> {
    await deleteSlot(this.host.git, slot, { background });
  }
}

/** Removes a slot (claimed, or not a worktree): renamed away and pruned as every worktree is. */
export async function deleteSlot(git: Git, slot: string, opts: { background?: boolean } = {}): Promise<void> {
  await git.removeWorktree(slot, opts);
  // Not (or no longer) a worktree git knows: its folder goes all the same.
  rmSync(slot, { recursive: true, force: true });
}

/**
 * After a worktree's set-up: records what is untracked or ignored in it now (the included files
 * and what worktree_setup made), so the slot's next preparation keeps those and removes the rest.
 * Without a set-up (`setUp` false) there is nothing to record beyond what .worktreeinclude names
 * (kept by its patterns): an earlier record goes, and git is not asked.
 */
export async function recordKept(git: Git, worktree: string, setUp: boolean): Promise<void> {
  const gitDir = linkedGitDir(worktree);
  if (!gitDir) return;
  if (!setUp) {
    writeKept(gitDir, undefined);
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
  writeKept(gitDir, kept);
}

/** The gitignore pattern matching exactly this path from the top (a folder's keeps its '/'). */
export function literalPattern(path: string): string {
  return '/' + path.replace(/[\\*?[]/g, (c) => `\\${c}`).replace(/ +$/, (spaces) => spaces.replace(/ /g, '\\ '));
}

/** A new slot is made as new-<pid>-<hex> (a name the pool does not list), then renamed. */
function newSlotName(): string {
  return `new-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** New slots whose making a crash interrupted (their process is gone), and removals it interrupted. */
export function unfinishedSlots(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .map((n) => ({ n, pid: Number(/^new-(\d+)-[0-9a-f]+$/.exec(n)?.[1]) }))
    .filter(({ n, pid }) => (pid > 0 && !isSameProcessAlive(pid, undefined)) || isRemovalLeftover(n))
    .map(({ n }) => join(dir, n));
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
}

export function rmdirQuiet(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // not there, or not empty (a slot being handed out)
  }
}
