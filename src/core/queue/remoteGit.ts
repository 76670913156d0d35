// The git a queue worker and the queue's controller do with the shared remote: a worker's own
// clone, fetching the base and an attempt's partial work, pushing an attempt's commits to a
// Launchpad ref. Every command is an argument array (Git.run), never a shell; every message that
// can carry the remote's address goes through redact().
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

import { Git, GitError } from '../git/git';
import { REF_PREFIX } from './job';
import { redact, withoutCredentials } from './redact';

/** Where the controller publishes the commit attempts start from. */
export function baseRef(baseBranch: string): string {
  return `${REF_PREFIX}/base/${baseBranch}`;
}

/** How long listing or deleting refs on the remote may take (a run's end must not wait on a dead remote). */
const SWEEP_TIMEOUT_MS = 30_000;

/** Where a worker's clone keeps the bases the run published. */
const REMOTE_BASES = 'refs/launchpad/remote-base';

/** A git failure with the remote's credentials removed from its message. */
export class RemoteGitError extends Error {
  constructor(what: string, err: unknown) {
    const detail = err instanceof GitError ? `${err.message}` : err instanceof Error ? err.message : String(err);
    super(redact(`${what}: ${detail.split('\n').slice(0, 4).join(' ')}`));
    this.name = 'RemoteGitError';
  }
}

async function step<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw new RemoteGitError(what, err);
  }
}

/**
 * A worker's clone of `remote` at `dir` (made when missing). Its origin holds the remote's
 * address without credentials: the agents work in worktrees of this clone and could read its
 * config. Every fetch and push names the remote (with its credentials) on the command line.
 */
export async function ensureClone(dir: string, remote: string): Promise<Git> {
  const git = new Git(dir);
  if (!existsSync(dir)) {
    mkdirSync(dirname(dir), { recursive: true });
    await step(`cloning ${remote}`, () => new Git(dirname(dir)).run(['clone', '--quiet', '--no-checkout', remote, dir]));
  }
  const shown = withoutCredentials(remote);
  const url = (await git.run(['remote', 'get-url', 'origin'], { allowFail: true })).stdout.trim();
  if (url && url !== shown) await git.run(['remote', 'set-url', 'origin', shown]);
  if (!url) await step(`adding the remote ${remote}`, () => git.run(['remote', 'add', 'origin', shown]));
  // Merges never happen here, but agents commit, without the worker's GIT_* variables: what
  // identifies them is configuration, the clone's own when no file gives one (the worker's
  // GIT_AUTHOR_* when set).
  const env = process.env;
  const identity: Array<[string, string]> = [
    ['user.name', env.GIT_AUTHOR_NAME || env.GIT_COMMITTER_NAME || 'Launchpad worker'],
    ['user.email', env.GIT_AUTHOR_EMAIL || env.GIT_COMMITTER_EMAIL || 'launchpad-worker@localhost'],
  ];
  for (const [key, value] of identity) {
    const scopes = (await git.run(['config', '--show-scope', '--get-all', key], { allowFail: true })).stdout;
    if (!/^(system|global|local|worktree)\t/m.test(scopes)) await git.run(['config', key, value]);
  }
  return git;
}

/** Fetches the published bases and, when it exists, `ref` (an attempt's partial work). Returns its commit. */
export async function fetchForAttempt(git: Git, remote: string, ref: string): Promise<string | undefined> {
  await step('fetching the base from the remote', () =>
    git.run(['fetch', '--quiet', '--no-tags', '--prune', remote, `+${REF_PREFIX}/base/*:${REMOTE_BASES}/*`]),
  );
  const local = `refs/launchpad/remote-partial/${ref.slice(REF_PREFIX.length + 1)}`;
  const r = await git.run(['fetch', '--quiet', '--no-tags', remote, `+${ref}:${local}`], { allowFail: true });
  if (r.code !== 0) {
    if (/couldn't find remote ref|not our ref|no such remote ref/i.test(r.stderr)) return undefined;
    throw new RemoteGitError(`fetching ${ref}`, new Error(r.stderr));
  }
  return (await git.resolve(local)) ?? undefined;
}

/** Whether `commit` is in the history of a base the run published (as fetchForAttempt fetched them). */
export async function publishedBaseHolds(git: Git, commit: string): Promise<boolean> {
  if (!(await git.commitExists(commit))) return false;
  const bases = (await git.run(['for-each-ref', '--format=%(objectname)', REMOTE_BASES])).stdout.split('\n').filter(Boolean);
  for (const base of bases) if (await git.isAncestor(commit, base)) return true;
  return false;
}

/** Pushes `commit` to `ref` on `remote` (forced: the ref belongs to this attempt alone). */
export async function pushRef(git: Git, remote: string, commit: string, ref: string, cwd?: string): Promise<void> {
  await step(`pushing ${ref}`, () =>
    git.run(['push', '--quiet', '--force', '--no-verify', remote, `${commit}:${ref}`], cwd ? { cwd } : {}),
  );
}

/** The controller's side: fetches `ref` from `remote` and checks it points at `commit`. */
export async function fetchResult(git: Git, remote: string, ref: string, commit: string, into: string): Promise<void> {
  await step(`fetching ${ref}`, () => git.run(['fetch', '--quiet', '--no-tags', remote, `+${ref}:${into}`]));
  const got = await git.resolve(into);
  if (got !== commit)
    throw new RemoteGitError(`fetching ${ref}`, new Error(`the remote has ${got ?? 'nothing'} there, the result says ${commit}`));
}

/**
 * The controller publishes its base branch's head for workers (a Launchpad ref, not the remote's
 * branch). The ref only moves forward: an older base (a resumed or republished attempt's) is
 * reachable from it already, and moving it back would hide later bases from the workers. Only a
 * base branch rewritten by hand moves it elsewhere.
 */
export async function publishBase(git: Git, remote: string, baseBranch: string, head: string): Promise<void> {
  const ref = baseRef(baseBranch);
  const r = await git.run(['push', '--quiet', '--no-verify', remote, `${head}:${ref}`], { allowFail: true });
  if (r.code === 0) return;
  if (!/\[rejected\]|non-fast-forward|fetch first/.test(r.stderr))
    throw new RemoteGitError('publishing the base to the remote', new GitError(['push'], r));
  const published = 'refs/launchpad/published-base';
  await step('reading the published base', () => git.run(['fetch', '--quiet', '--no-tags', remote, `+${ref}:${published}`]));
  if (await git.isAncestor(head, published)) return;
  await step('publishing the base to the remote', () => git.run(['push', '--quiet', '--force', '--no-verify', remote, `${head}:${ref}`]));
}

/** The refs of attempts on the remote (`refs/launchpad/queue/<id>/<agent>/<what>`), with their task and agent. */
export async function attemptRefsOnRemote(git: Git, remote: string): Promise<Array<{ ref: string; taskId: string; agentId: string }>> {
  const out = await step('listing the queue refs on the remote', () =>
    git.run(['ls-remote', '--refs', remote, `${REF_PREFIX}/*`], { timeoutMs: SWEEP_TIMEOUT_MS }),
  );
  const found: Array<{ ref: string; taskId: string; agentId: string }> = [];
  for (const line of out.stdout.split('\n')) {
    const ref = line.split('\t')[1]?.trim();
    const m = ref ? /^refs\/launchpad\/queue\/([^/]+)\/([^/]+)\/[^/]+$/.exec(ref) : null;
    if (m && m[1] !== 'base') found.push({ ref: ref!, taskId: m[1]!, agentId: m[2]! });
  }
  return found;
}

/** Deletes refs on the remote (best effort, bounded in time: what is left goes at a later run's end). */
export async function deleteRemoteRefs(git: Git, remote: string, refs: readonly string[]): Promise<void> {
  if (!refs.length) return;
  await git.run(['push', '--quiet', '--no-verify', remote, ...refs.map((r) => `:${r}`)], { allowFail: true, timeoutMs: SWEEP_TIMEOUT_MS });
}
