// Attempts kept under Launchpad's own refs, so no agent commit ever becomes unreachable: before
// a task's branch is deleted (a failure, a rollback, an orphan's clean-up) or rewritten (a
// rebase), its commits beyond the base, or a snapshot of the worktree's uncommitted work, are
// kept at `refs/launchpad/attempts/<task-id>/<attempt>` (`<attempt>.2`, … when that name is
// taken). `status` lists them; `launchpad prune-attempts` deletes them.
import { InputError } from '../inputError';
import type { Task } from '../taskFile/schema';
import { Git } from './git';

export const KEPT_ATTEMPTS_PREFIX = 'refs/launchpad/attempts/';

export interface KeptAttempt {
  ref: string;
  taskId: string;
  /** The attempt's number as in the ref's name: `2`, or `2.3` for the third ref of attempt 2. */
  attempt: string;
  commit: string;
  /** The kept commit's committer date (ISO 8601): when the work was made or snapshotted. */
  committedAt: string;
}

const REF_RE = /^refs\/launchpad\/attempts\/([^/]+)\/(\d+(?:\.\d+)?)$/;

export function keptAttemptRef(taskId: string, attempt: number, n = 1): string {
  return `${KEPT_ATTEMPTS_PREFIX}${taskId}/${attempt}${n > 1 ? `.${n}` : ''}`;
}

/** Every kept attempt of the repository (of one task when `taskId` is given), in ref order. */
export async function listKeptAttempts(git: Git, taskId?: string): Promise<KeptAttempt[]> {
  const refs = await git.refsUnder(taskId ? `${KEPT_ATTEMPTS_PREFIX}${taskId}/` : KEPT_ATTEMPTS_PREFIX);
  return refs.flatMap(({ ref, commit, committedAt }) => {
    const m = REF_RE.exec(ref);
    return m ? [{ ref, taskId: m[1]!, attempt: m[2]!, commit, committedAt }] : [];
  });
}

/** Every kept attempt of the repository holding `root`; none outside git. */
export async function keptAttemptsIn(root: string): Promise<KeptAttempt[]> {
  const git = new Git(root);
  if (!(await git.toplevel())) return [];
  return listKeptAttempts(git);
}

/** Kept attempts grouped by task id. */
export function keptByTask(kept: readonly KeptAttempt[]): Map<string, KeptAttempt[]> {
  const byTask = new Map<string, KeptAttempt[]>();
  for (const k of kept) byTask.set(k.taskId, [...(byTask.get(k.taskId) ?? []), k]);
  return byTask;
}

/**
 * Keeps `commit` (a task branch's tip, or a snapshot of uncommitted work on top of it) as attempt
 * `attempt` of the task, unless nothing needs keeping: it is already in `base` (no commits of its
 * own, or merged), or a kept ref of the task already contains it — or, for a snapshot (our own
 * commit, never an agent's), an equal one (same tree, same parents: a recovery that ran twice).
 * Returns the ref that holds it, or undefined.
 */
export async function keepAttempt(
  git: Git,
  taskId: string,
  attempt: number,
  commit: string,
  base: string,
  opts: { snapshot?: boolean; merged?: boolean } = {},
): Promise<string | undefined> {
  // A merged attempt that is about to be reverted (`merged`) stays reachable, but is kept by name.
  if (!opts.merged && (await git.isAncestor(commit, base))) return undefined;
  const prefix = `${KEPT_ATTEMPTS_PREFIX}${taskId}/`;
  const holder = (await git.refsUnder(prefix, { containing: commit }))[0];
  if (holder) return holder.ref;
  const kept = opts.snapshot ? await git.refsUnder(prefix) : [];
  if (kept.length) {
    const { tree, parents } = await git.treeAndParents(commit);
    const same = kept.find((k) => k.tree === tree && k.parents === parents);
    if (same) return same.ref;
  }
  for (let n = 1; ; n++) {
    const ref = keptAttemptRef(taskId, attempt, n);
    if (await git.createRef(ref, commit)) return ref;
    // Taken, by another attempt of that number (after a retry) or a racing keep of this one.
    if ((await git.resolve(ref)) === commit) return ref;
    if (n > 1000) throw new Error(`cannot keep ${commit} of ${taskId}: ${keptAttemptRef(taskId, attempt)}.2 … .1000 all exist`);
  }
}

export interface PruneOptions {
  /** Prune these tasks' kept attempts, whatever their state; default: every completed task's. */
  ids?: readonly string[];
  /** Only attempts whose kept commit is older than this many days. */
  olderThanDays?: number | undefined;
  /** Say what would be deleted, delete nothing. */
  dryRun?: boolean;
  now?: Date;
}

/**
 * Deletes kept attempts: those of completed tasks, or of the tasks named (an unknown id with
 * nothing kept is an InputError, and then nothing is deleted). Returns what it deleted (or
 * would delete, on a dry run), in ref order.
 */
export async function pruneKeptAttempts(
  git: Git,
  tasks: ReadonlyArray<Pick<Task, 'id' | 'status'>>,
  opts: PruneOptions = {},
): Promise<KeptAttempt[]> {
  const kept = await listKeptAttempts(git);
  const status = new Map(tasks.map((t) => [t.id, t.status]));
  const ids = opts.ids?.length ? new Set(opts.ids) : undefined;
  for (const id of ids ?? []) {
    if (!status.has(id) && !kept.some((k) => k.taskId === id))
      throw new InputError(`no task "${id}" in harness-tasks.json and no kept attempts of it`);
  }
  const cutoff = opts.olderThanDays === undefined ? undefined : (opts.now ?? new Date()).getTime() - opts.olderThanDays * 86_400_000;
  const chosen = kept.filter(
    (k) => (ids ? ids.has(k.taskId) : status.get(k.taskId) === 'completed') && (cutoff === undefined || Date.parse(k.committedAt) < cutoff),
  );
  if (opts.dryRun) return chosen;
  const deleted: KeptAttempt[] = [];
  // Each only if it still names what was listed (a run may have moved nothing, but be sure).
  for (const k of chosen) if (await git.deleteRef(k.ref, k.commit)) deleted.push(k);
  return deleted;
}
