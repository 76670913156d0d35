// `.worktreeinclude` at the repository's root: gitignore-style patterns naming ignored files of the
// main checkout (`.env`, a local config, `node_modules/`) that each new task worktree gets a copy
// of, at the same path. A file is copied only when a pattern names it AND git ignores it, so a
// tracked file is never duplicated and an untracked one that is not ignored (work in progress) is
// never handed to an agent. git decides both (ls-files with the patterns, and with its own rules), so
// the patterns mean exactly what they mean in a .gitignore. A directory a pattern names is copied
// with everything in it; symbolic links stay links; mtimes are kept, so a worktree reused from
// the pool is brought up to date by copying only what changed.
import { createHash } from 'node:crypto';
import { constants, existsSync, readFileSync, type Stats } from 'node:fs';
import { copyFile, lstat, lutimes, mkdir, readlink, realpath, rmdir, symlink, unlink, utimes } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';

import type { Git } from '../git/git';

export const WORKTREE_INCLUDE_FILE = '.worktreeinclude';

export interface IncludeRules {
  /** The .worktreeinclude file (absolute). */
  file: string;
  /** Its patterns: the lines that are neither blank nor comments, as written. */
  patterns: string[];
}

/** The rules of `<top>/.worktreeinclude`; undefined when there is no such file or it names nothing. */
export function readIncludeRules(top: string): IncludeRules | undefined {
  const file = join(top, WORKTREE_INCLUDE_FILE);
  if (!existsSync(file)) return undefined;
  const patterns = readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '' && !l.startsWith('#'));
  return patterns.length ? { file, patterns } : undefined;
}

/**
 * The untracked files of the checkout at `dir` that the rules name and git ignores, relative to
 * `dir` with '/' separators, sorted. `dir` is a repository's top level (the main checkout or a
 * worktree).
 */
export async function includedFiles(git: Git, dir: string, rules: IncludeRules): Promise<string[]> {
  // Two listings of the untracked files, intersected: those the patterns name, those git's own
  // rules ignore. (`check-ignore --stdin` answers the second one path at a time, flushing each:
  // seconds for a node_modules.)
  const list = async (exclude: string) =>
    (await git.run(['ls-files', '--others', '--ignored', exclude, '-z'], { cwd: dir })).stdout.split('\0').filter(Boolean);
  const named = await list(`--exclude-from=${rules.file}`);
  if (!named.length) return [];
  const ignored = new Set(await list('--exclude-standard'));
  return named.filter((p) => ignored.has(p)).sort();
}

export interface CopyReport {
  /** Files (and links) copied. */
  copied: number;
  bytes: number;
  /** Already up to date in the worktree (a pooled one). */
  unchanged: number;
  /** Removed from the worktree: gone from the main checkout (a pooled one). */
  removed: number;
  /** Not copied because the worktree has something else at that path (a tracked file). */
  skipped: number;
}

/** Copies at once; enough to keep the disk busy without holding thousands of open files. */
const PARALLEL_COPIES = 32;
/** lstat() calls at once: from the page cache, they are bound by the thread pool, not the disk. */
const PARALLEL_STATS = 64;

/** The included files of a checkout as found by one scan: each one's lstat, and a fingerprint of them all. */
export interface IncludedScan {
  /** Relative path → lstat, for the files and links (a socket or FIFO is left out). */
  entries: Map<string, Stats>;
  /**
   * The rules, then every entry's path, kind, size and modification time, hashed: two scans with
   * the same fingerprint found the same files unchanged (rsync's quick check, for all at once).
   */
  fingerprint: string;
}

/** Lists and lstat()s the included files of the checkout `dir` (see includedFiles). */
export async function scanIncluded(git: Git, dir: string, rules: IncludeRules, signal?: AbortSignal): Promise<IncludedScan> {
  const paths = await includedFiles(git, dir, rules);
  const stats = new Array<Stats | undefined>(paths.length);
  await eachLimited(paths.keys(), PARALLEL_STATS, async (i) => {
    signal?.throwIfAborted();
    stats[i] = await lstat(join(dir, paths[i]!)).catch(() => undefined);
  });
  const entries = new Map<string, Stats>();
  const hash = createHash('sha256').update(rules.patterns.join('\n')).update('\0');
  paths.forEach((rel, i) => {
    const st = stats[i];
    if (!st || !(st.isFile() || st.isSymbolicLink())) return; // gone meanwhile, or a socket / FIFO
    entries.set(rel, st);
    hash.update(`${rel}\0${st.isSymbolicLink() ? 'l' : 'f'}${st.size}:${Math.round(st.mtimeMs)}\n`);
  });
  return { entries, fingerprint: hash.digest('hex') };
}

/**
 * Copies the included files of the main checkout `top` into `worktree`. A fresh worktree gets
 * each one unless it already has something at that path. With `sync` (a worktree used before,
 * from the pool), the worktree's own included files are brought to what `top` holds now: the
 * changed ones copied again (size or mtime differ), the ones `top` no longer has removed.
 * Returns what it did, and the scan of `top` it copied from.
 */
export async function copyIncluded(
  git: Git,
  top: string,
  worktree: string,
  rules: IncludeRules,
  opts: { sync: boolean; signal?: AbortSignal },
): Promise<CopyReport & { source: IncludedScan }> {
  const [source, inWorktree] = await Promise.all([
    scanIncluded(git, top, rules, opts.signal),
    opts.sync ? includedFiles(git, worktree, rules) : [],
  ]);
  const present = new Set(inWorktree);
  const report: CopyReport = { copied: 0, bytes: 0, unchanged: 0, removed: 0, skipped: 0 };
  const inside = await insideCheck(worktree);

  for (const extra of present) {
    if (source.entries.has(extra)) continue;
    await unlink(join(worktree, extra)).catch(ignoreMissing);
    await pruneEmptyParents(worktree, extra);
    report.removed++;
  }

  await eachLimited(source.entries.keys(), PARALLEL_COPIES, async (rel) => {
    opts.signal?.throwIfAborted();
    const src = join(top, rel);
    const dst = join(worktree, rel);
    const from = source.entries.get(rel)!;
    const to = await lstat(dst).catch(() => undefined);
    if (to) {
      if (!present.has(rel)) {
        report.skipped++;
        return;
      }
      if (await sameEntry(src, from, dst, to)) {
        report.unchanged++;
        return;
      }
      await unlink(dst);
    }
    const parent = dirname(dst);
    if (!(await inside(parent))) {
      report.skipped++;
      return;
    }
    await mkdir(parent, { recursive: true });
    if (from.isSymbolicLink()) {
      await symlink(await readlink(src), dst);
      await lutimes(dst, from.atime, from.mtime).catch(() => undefined);
    } else {
      // A copy-on-write clone where the file system can (btrfs, XFS), a plain copy elsewhere.
      await copyFile(src, dst, constants.COPYFILE_FICLONE | constants.COPYFILE_EXCL).catch(ignoreMissing);
      await utimes(dst, from.atime, from.mtime).catch(ignoreMissing);
      report.bytes += from.size;
    }
    report.copied++;
  });
  return { ...report, source };
}

type Stat = Stats;

/** rsync's quick check: the same kind, size and modification time (within a millisecond); a link's target. */
async function sameEntry(src: string, from: Stat, dst: string, to: Stat): Promise<boolean> {
  if (from.isSymbolicLink() !== to.isSymbolicLink() || from.isFile() !== to.isFile()) return false;
  if (from.isSymbolicLink()) return (await readlink(src)) === (await readlink(dst).catch(() => undefined));
  // A copy's mtime is set through a double of seconds: it may land a few nanoseconds off.
  return from.size === to.size && Math.abs(from.mtimeMs - to.mtimeMs) < 1;
}

/**
 * Whether a folder a copy goes into is inside the worktree, asked before it is made: a tracked
 * symbolic link on the way (`config -> /etc`) must not carry a copy outside it. The nearest
 * folder that exists decides (what is made below it is made inside it). Cached per folder.
 */
async function insideCheck(worktree: string): Promise<(dir: string) => Promise<boolean>> {
  const root = await realpath(worktree);
  const known = new Map<string, Promise<boolean>>();
  const check = (dir: string): Promise<boolean> => {
    let answer = known.get(dir);
    if (!answer) {
      answer = realpath(dir).then(
        (real) => real === root || real.startsWith(root + sep),
        (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' && dirname(dir) !== dir ? check(dirname(dir)) : false),
      );
      known.set(dir, answer);
    }
    return answer;
  };
  return check;
}

/** Removes the folders above a removed file that are now empty, up to the worktree. */
async function pruneEmptyParents(worktree: string, rel: string): Promise<void> {
  for (let dir = dirname(join(worktree, rel)); dir.length > worktree.length && dir.startsWith(worktree + sep); dir = dirname(dir)) {
    try {
      await rmdir(dir);
    } catch {
      return;
    }
  }
}

function ignoreMissing(err: NodeJS.ErrnoException): void {
  if (err.code !== 'ENOENT') throw err;
}

async function eachLimited<T>(items: Iterable<T>, limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const it = items[Symbol.iterator]();
  const worker = async () => {
    for (let next = it.next(); !next.done; next = it.next()) await work(next.value);
  };
  await Promise.all(Array.from({ length: limit }, worker));
}
