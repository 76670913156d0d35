// The git operations Launchpad performs, each one `git` process with an argument array (no
// shell: a valid ref name is not shell-safe). A thin wrapper over runProcess rather than a git
// library: the controller runs about ten git commands per task and the overhead budget is
// measured against the same commands typed by hand.
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';

import { type ProcessResult, runProcess } from '../process/runProcess';
import { commitOfEmptyBranchLock } from './interruptedCommit';
import { lockWorktrees, oneAtATime, readsWorktrees } from './worktreeCommands';
import { parseWorktreeList, type WorktreeInfo } from './worktreeParser';

export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly result: ProcessResult,
  ) {
    const detail = (result.stderr || result.stdout || result.spawnError || '').trim().split('\n').slice(-3).join(' | ');
    super(`git ${args.join(' ')} failed${result.timedOut ? ' (timed out)' : ` (exit ${result.code})`}: ${detail}`);
    this.name = 'GitError';
  }
}

export interface RefInfo {
  ref: string;
  commit: string;
  /** The commit's committer date, ISO 8601. */
  committedAt: string;
  tree: string;
  /** Its parents, space-separated. */
  parents: string;
}

export interface MergeOutcome {
  ok: boolean;
  /** Files left in conflict, when the merge stopped on conflicts. */
  conflicts: string[];
  /** Local changes in the main working tree that the merge would overwrite. */
  blockedBy: string[];
  output: string;
}

const GIT_TIMEOUT_MS = 5 * 60_000;

/** Never prompt, never open an editor, and print messages we can recognise. */
const gitEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  GIT_TERMINAL_PROMPT: '0',
  GIT_EDITOR: 'true',
  GIT_SEQUENCE_EDITOR: 'true',
  GIT_MERGE_AUTOEDIT: 'no',
  LC_ALL: 'C',
});

export class Git {
  constructor(readonly cwd: string) {}

  async run(
    args: string[],
    opts: {
      cwd?: string;
      allowFail?: boolean;
      timeoutMs?: number;
      env?: NodeJS.ProcessEnv;
      stdin?: string;
      /** The worktree pool's own work: a worktree command waits behind any task's. */
      background?: boolean;
      /** A worktree command's follow-up, done before any other worktree command may run (an owner mark). */
      whileLocked?: () => void;
    } = {},
  ): Promise<ProcessResult> {
    if (!readsWorktrees(args)) return this.spawn(args, opts);
    return this.worktreeSection(
      args,
      async () => {
        const result = await this.spawn(args, opts);
        if (result.code === 0) opts.whileLocked?.();
        return result;
      },
      opts.cwd,
      opts.background,
    );
  }

  /** `work` with git's worktree commands held off, in this process and across processes (worktreeCommands.ts). */
  private worktreeSection<T>(args: readonly string[], work: () => Promise<T>, cwd?: string, background?: boolean): Promise<T> {
    return oneAtATime(async () => {
      const common = await this.commonDirOf(cwd ?? this.cwd);
      const lock = common ? await lockWorktrees(common, args, GIT_TIMEOUT_MS) : undefined;
      try {
        return await work();
      } finally {
        lock?.release();
      }
    }, background);
  }

  private commonDirs = new Map<string, string>();

  /** The git common dir (where .git/worktrees/ is) of the repository holding `cwd`, absolute. */
  private async commonDirOf(cwd: string): Promise<string | undefined> {
    let dir = this.commonDirs.get(cwd);
    if (!dir) {
      const r = await this.spawn(['rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd, allowFail: true });
      dir = r.code === 0 ? r.stdout.trim() : undefined;
      if (dir) this.commonDirs.set(cwd, dir);
    }
    return dir;
  }

  private async spawn(
    args: string[],
    opts: { cwd?: string; allowFail?: boolean; timeoutMs?: number; env?: NodeJS.ProcessEnv; stdin?: string },
  ): Promise<ProcessResult> {
    const result = await runProcess({
      command: { file: 'git', args },
      cwd: opts.cwd ?? this.cwd,
      env: { ...gitEnv(), ...opts.env },
      timeoutMs: opts.timeoutMs ?? GIT_TIMEOUT_MS,
      ...(opts.stdin === undefined ? {} : { stdin: opts.stdin }),
    });
    if (!opts.allowFail && result.code !== 0) throw new GitError(args, result);
    return result;
  }

  private async text(args: string[], cwd?: string): Promise<string> {
    return (await this.run(args, cwd ? { cwd } : {})).stdout.trim();
  }

  /** The top of the working tree holding `cwd`, or undefined outside a repository. */
  async toplevel(): Promise<string | undefined> {
    const r = await this.run(['rev-parse', '--show-toplevel'], { allowFail: true });
    return r.code === 0 ? r.stdout.trim() : undefined;
  }

  async head(cwd?: string): Promise<string | undefined> {
    const r = await this.run(['rev-parse', '--verify', '-q', 'HEAD'], { allowFail: true, ...(cwd ? { cwd } : {}) });
    return r.code === 0 ? r.stdout.trim() : undefined;
  }

  /** The checked-out branch's short name, or undefined when HEAD is detached. */
  async currentBranch(): Promise<string | undefined> {
    const r = await this.run(['symbolic-ref', '--short', '-q', 'HEAD'], { allowFail: true });
    return r.code === 0 ? r.stdout.trim() : undefined;
  }

  /** Tracked files with uncommitted changes (staged or not), relative to the top level. */
  async trackedChanges(cwd?: string): Promise<string[]> {
    const out = (await this.run(['status', '--porcelain=v1', '-z', '--untracked-files=no'], cwd ? { cwd } : {})).stdout;
    return parsePorcelainPaths(out);
  }

  /** Any change at all, untracked files included (an agent's leftovers in its worktree). */
  async anyChanges(cwd: string): Promise<string[]> {
    const out = (await this.run(['status', '--porcelain=v1', '-z', '--untracked-files=all'], { cwd })).stdout;
    return parsePorcelainPaths(out);
  }

  /** A path inside the git directory (`MERGE_HEAD`, `rebase-merge`), absolute. */
  async gitPath(name: string, cwd?: string): Promise<string> {
    const p = await this.text(['rev-parse', '--path-format=absolute', '--git-path', name], cwd);
    return p;
  }

  async listWorktrees(): Promise<WorktreeInfo[]> {
    return parseWorktreeList((await this.run(['worktree', 'list', '--porcelain', '-z'])).stdout);
  }

  /** A worktree on a new branch; `whileLocked` (its owner mark) is done before another worktree command runs. */
  async addWorktree(path: string, branch: string, base: string, opts: { whileLocked?: () => void } = {}): Promise<void> {
    await this.run(['worktree', 'add', '-b', branch, '--', path, base], opts);
  }

  /** A worktree for an existing branch (recovery validates a branch whose worktree is gone). */
  async addWorktreeForBranch(path: string, branch: string, opts: { whileLocked?: () => void } = {}): Promise<void> {
    await this.run(['worktree', 'add', '--', path, branch], opts);
  }

  /** A worktree at `commit` with a detached HEAD (the pool's: `background`, see run). */
  async addDetachedWorktree(path: string, commit: string, opts: { background?: boolean } = {}): Promise<void> {
    await this.run(['worktree', 'add', '--detach', '--', path, commit], opts);
  }

  /** `path` holds a linked worktree of this repository (its admin folder is in our .git/worktrees/). */
  private async isOurWorktree(path: string): Promise<boolean> {
    const admin = linkedGitDir(path);
    if (!admin) return false;
    const common = await this.commonDirOf(this.cwd);
    return !!common && resolve(admin, '..', '..') === resolve(common);
  }

  async moveWorktree(from: string, to: string, opts: { background?: boolean } = {}): Promise<void> {
    await this.run(['worktree', 'move', '--', from, to], opts);
  }

  /**
   * Removes the worktree at `path`. With `mayRemove`, only if it says yes at the moment of the
   * removal (no worktree command can make another worktree there in between); false when it
   * said no.
   */
  async removeWorktree(path: string, opts: { background?: boolean; mayRemove?: () => boolean } = {}): Promise<boolean> {
    // A linked worktree of ours: renamed away (instant), forgotten by git, then deleted outside the rule.
    const aside = removingName(path);
    const moved = await this.worktreeSection(
      ['worktree', 'remove'],
      async () => {
        if (opts.mayRemove && !opts.mayRemove()) return 'refused';
        if (!(await this.isOurWorktree(path))) return 'not ours';
        return rename(path, aside).then(
          () => 'moved',
          () => 'not ours',
        );
      },
      undefined,
      opts.background,
    );
    if (moved === 'refused') return false;
    if (moved === 'moved') {
      await this.run(['worktree', 'prune'], { ...opts, allowFail: true });
      await rm(aside, { recursive: true, force: true });
      return true;
    }
    const r = await this.run(['worktree', 'remove', '--force', '--force', '--', path], { ...opts, allowFail: true });
    // Already gone from disk: drop git's record of it.
    if (r.code !== 0) await this.run(['worktree', 'prune'], { ...opts, allowFail: true });
    return true;
  }

  async branchExists(branch: string): Promise<boolean> {
    const r = await this.run(['rev-parse', '--verify', '-q', `refs/heads/${branch}`], { allowFail: true });
    return r.code === 0;
  }

  /** Deletes a local branch; true when it is gone (deleted now, or there was none). */
  async deleteBranch(branch: string): Promise<boolean> {
    const r = await this.run(['branch', '-D', '--', branch], { allowFail: true });
    return r.code === 0 || !(await this.branchExists(branch));
  }

  /** Local branches whose names start with `prefix`. */
  async branches(prefix: string): Promise<string[]> {
    const out = await this.text(['for-each-ref', '--format=%(refname:short)', `refs/heads/${prefix}*`]);
    return out ? out.split('\n') : [];
  }

  async countCommits(range: string): Promise<number> {
    return Number(await this.text(['rev-list', '--count', range]));
  }

  /** `abc1234 subject` of each commit in `range`, oldest first. */
  async commitSubjects(range: string): Promise<string[]> {
    const out = await this.text(['log', '--reverse', '--format=%h %s', range]);
    return out ? out.split('\n') : [];
  }

  async isAncestor(commit: string, of: string): Promise<boolean> {
    return (await this.run(['merge-base', '--is-ancestor', commit, of], { allowFail: true })).code === 0;
  }

  async commitExists(commit: string): Promise<boolean> {
    return (await this.run(['cat-file', '-e', `${commit}^{commit}`], { allowFail: true })).code === 0;
  }

  /** Files changed between two commits. */
  async changedFiles(from: string, to: string, cwd?: string): Promise<string[]> {
    const out = await this.text(['diff', '--name-only', '-z', from, to], cwd);
    return out.split('\0').filter(Boolean);
  }

  /** Commits everything left uncommitted in a worktree. */
  async commitAll(cwd: string, message: string): Promise<void> {
    await this.run(['add', '-A'], { cwd });
    await this.run(['commit', '-q', '--no-verify', '-m', message], { cwd });
  }

  /** `git merge --no-ff` into the current branch; conflicts are reported, not thrown. */
  async mergeNoFf(branch: string, message: string): Promise<MergeOutcome> {
    const r = await this.run(['merge', '--no-ff', '--no-edit', '-m', message, branch], { allowFail: true });
    const output = `${r.stdout}\n${r.stderr}`.trim();
    if (r.code === 0) return { ok: true, conflicts: [], blockedBy: [], output };
    const blockedBy = overwrittenFiles(r.stderr);
    if (blockedBy.length) return { ok: false, conflicts: [], blockedBy, output };
    const conflicts = (await this.text(['diff', '--name-only', '-z', '--diff-filter=U'])).split('\0').filter(Boolean);
    if (!conflicts.length) throw new GitError(['merge', '--no-ff', branch], r);
    return { ok: false, conflicts, blockedBy: [], output };
  }

  async mergeAbort(): Promise<void> {
    await this.run(['merge', '--abort'], { allowFail: true });
  }

  /** The commit a ref (or any revision) names, or undefined. */
  async resolve(rev: string): Promise<string | undefined> {
    const r = await this.run(['rev-parse', '--verify', '-q', `${rev}^{commit}`], { allowFail: true });
    return r.code === 0 ? r.stdout.trim() : undefined;
  }

  /** Creates `ref` at `commit`; false (and nothing changed) when the ref exists already. */
  async createRef(ref: string, commit: string): Promise<boolean> {
    return (await this.run(['update-ref', '--no-deref', ref, commit, ''], { allowFail: true })).code === 0;
  }

  /** Deletes `ref` if it still names `expected`; true when it was deleted. */
  async deleteRef(ref: string, expected: string): Promise<boolean> {
    return (await this.run(['update-ref', '--no-deref', '-d', ref, expected], { allowFail: true })).code === 0;
  }

  /** Refs under `prefix` (e.g. `refs/launchpad/`): the commit each names, its date, tree and parents. */
  async refsUnder(prefix: string, opts: { containing?: string } = {}): Promise<RefInfo[]> {
    const args = ['for-each-ref', '--format=%(refname)%09%(objectname)%09%(committerdate:iso-strict)%09%(tree)%09%(parent)'];
    if (opts.containing) args.push(`--contains=${opts.containing}`);
    const out = await this.text([...args, prefix]);
    return out
      ? out.split('\n').map((l) => {
          const [ref, commit, committedAt, tree, parents] = l.split('\t');
          return { ref: ref!, commit: commit!, committedAt: committedAt ?? '', tree: tree ?? '', parents: parents ?? '' };
        })
      : [];
  }

  /** A commit's tree and parents (space-separated), as refsUnder reports them. */
  async treeAndParents(commit: string): Promise<{ tree: string; parents: string }> {
    const [tree = '', parents = ''] = (await this.text(['show', '-s', '--format=%T%x09%P', commit])).split('\t');
    return { tree, parents };
  }

  /**
   * Everything uncommitted in a worktree (untracked files too) as a commit on top of its HEAD,
   * made through a private index: the worktree, its index and its branch are left as they are.
   * Undefined when there is nothing uncommitted.
   */
  async snapshotChanges(worktree: string, message: string): Promise<string | undefined> {
    const dir = mkdtempSync(join(tmpdir(), 'launchpad-snapshot-'));
    try {
      const index = join(dir, 'index');
      const own = await this.gitPath('index', worktree);
      // The worktree's own index as the start: the add then only hashes what changed.
      if (existsSync(own)) copyFileSync(own, index);
      const env = { GIT_INDEX_FILE: index };
      await this.run(['add', '-A'], { cwd: worktree, env });
      const tree = (await this.run(['write-tree'], { cwd: worktree, env })).stdout.trim();
      const head = await this.head(worktree);
      if (head && (await this.text(['rev-parse', `${head}^{tree}`], worktree)) === tree) return undefined;
      const parent = head ? ['-p', head] : [];
      return (await this.run(['commit-tree', tree, ...parent, '-m', message], { cwd: worktree })).stdout.trim();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /**
   * Lock files a git command killed half-way leaves in a worktree (`index.lock`, `HEAD.lock`)
   * and on its branch; each would make every later git command there fail. Only for a worktree
   * whose processes are known to be gone. Returns the names removed.
   */
  async removeStaleLocks(worktree: string, branch: string): Promise<string[]> {
    const removed: string[] = [];
    const ref = `refs/heads/${branch}`;
    // The branch's lock holds the value git was about to give it: a `git commit` killed after
    // writing its commit but before moving the branch. The commit is finished, so it is not lost.
    // Killed before it wrote that value (an empty lock), the commit is looked for among the objects.
    let pending: string | undefined;
    const branchLock = await this.gitPath(`${ref}.lock`, worktree);
    if (existsSync(branchLock)) {
      const oid = readFileSync(branchLock, 'utf8').trim();
      const current = await this.resolve(ref);
      if (/^[0-9a-f]{40,64}$/.test(oid)) {
        if (oid !== current && (await this.commitExists(oid)) && (!current || (await this.isAncestor(current, oid)))) pending = oid;
      } else if (current) {
        const partial = /^[0-9a-f]*$/.test(oid) ? oid : '';
        pending = await commitOfEmptyBranchLock(this, worktree, branch, current, statSync(branchLock).mtimeMs, partial);
      }
    }
    for (const name of ['index.lock', 'HEAD.lock', `${ref}.lock`]) {
      const path = await this.gitPath(name, worktree);
      if (existsSync(path)) {
        rmSync(path, { force: true });
        removed.push(name);
      }
    }
    if (pending) {
      await this.run(['update-ref', '-m', 'launchpad: finish a commit interrupted before it moved the branch', ref, pending], {
        cwd: worktree,
      });
      // The index as that commit has it (the killed commit never wrote its own); the files stay.
      await this.run(['reset', '-q', '--mixed', pending], { cwd: worktree });
      removed[removed.length - 1] += ` (its commit ${pending.slice(0, 7)} completed)`;
    }
    return removed;
  }

  /** Rebases the branch checked out in `cwd` onto `onto`; aborts and returns false on conflict. */
  async rebase(cwd: string, onto: string): Promise<boolean> {
    const r = await this.run(['rebase', onto], { cwd, allowFail: true });
    if (r.code === 0) return true;
    await this.run(['rebase', '--abort'], { cwd, allowFail: true });
    return false;
  }
}

/** Paths from `git status --porcelain=v1 -z` (renames carry their source path after a NUL). */
export function parsePorcelainPaths(out: string): string[] {
  const fields = out.split('\0');
  const paths: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!;
    if (f.length < 4) continue;
    paths.push(f.slice(3));
    if (f[0] === 'R' || f[0] === 'C') i++;
  }
  return paths;
}

/** "Your local changes to the following files would be overwritten by merge:" and its list. */
function overwrittenFiles(stderr: string): string[] {
  const m = /would be overwritten by merge:\n((?:\t.*\n?)+)/.exec(stderr);
  return m
    ? m[1]!
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
    : [];
}

/** The admin folder of the linked worktree at `path` (its `.git` file: "gitdir: …"), absolute. */
export function linkedGitDir(path: string): string | undefined {
  try {
    const m = /^gitdir: (.+)$/m.exec(readFileSync(join(path, '.git'), 'utf8'));
    return m ? resolve(path, m[1]!.trim()) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where a worktree being removed is renamed to: beside it, under a name no task id or pool slot
 * has (a leading dot), so nothing takes it for a worktree while its files are deleted. A crash
 * in between leaves it for the next session's clean-up (isRemovalLeftover).
 */
function removingName(path: string): string {
  return join(dirname(path), `${REMOVING_PREFIX}${basename(path)}-${randomBytes(4).toString('hex')}`);
}
const REMOVING_PREFIX = '.removing-';

/** A folder left by a removal that a crash interrupted (removingName). */
export function isRemovalLeftover(name: string): boolean {
  return name.startsWith(REMOVING_PREFIX);
}
