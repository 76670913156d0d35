// What a session does about the last one before it starts new work: ends the processes a dead
// controller left running, aborts its interrupted merge, applies seed 000's Context Window
// Recovery Protocol to every in_progress task, and removes orphaned worktrees and branches.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Git } from '../git/git';
import { branchFor, taskIdOfBranch } from '../ids';
import type { Task } from '../taskFile/schema';
import { mergeTask, type TaskEnd } from './merge';
import type { MergeQueue } from './mergeQueue';
import type { Session } from './session';
import { inspectWork } from './taskRun';
import { validateTask } from './validate';
import { discardAttempt } from './discard';

/** Ends agents and validations that a killed controller left behind. Returns their labels. */
export function endOrphanedProcesses(s: Session): void {
  for (const { label, escaped } of s.records.endAll()) {
    s.log({ type: 'RECOVERY', message: `action="ended orphaned process" reason="${label} outlived its controller"${escaped ? ` escaped=${escaped}` : ''}` });
  }
}

/** A merge of ours left half-done by a crash (MERGE_HEAD present): abort it. */
export async function abortInterruptedMerge(git: Git): Promise<string | undefined> {
  const mergeHead = await git.gitPath('MERGE_HEAD');
  if (!existsSync(mergeHead)) return undefined;
  const msg = readText(await git.gitPath('MERGE_MSG'));
  if (!/^Merge \[[^\]]+\] /.test(msg)) return undefined;
  await git.mergeAbort();
  return msg.split('\n')[0];
}

async function abortInterruptedRebase(git: Git, worktree: string): Promise<void> {
  for (const name of ['rebase-merge', 'rebase-apply']) {
    if (existsSync(await git.gitPath(name, worktree))) {
      await git.run(['rebase', '--abort'], { cwd: worktree, allowFail: true });
      return;
    }
  }
}

/** `only`: the tasks a concurrent worker took over (all in-progress tasks when absent). */
export async function recoverInProgress(s: Session, merges: MergeQueue, workerId: string, only?: ReadonlySet<string>): Promise<void> {
  const { file } = s.store.load();
  const tasks = file.tasks.filter((t) => t.status === 'in_progress' && (!only || only.has(t.id)));
  if (!tasks.length) return;
  const worktrees = await s.git.listWorktrees();
  const work: Array<Promise<TaskEnd>> = [];
  for (const task of tasks) {
    if (heldByAnotherWorker(task, file.session_config.concurrency_mode, workerId)) {
      s.log({ type: 'WARN', taskId: task.id, message: `left alone: claimed by ${task.claimed_by} until ${task.lease_expires_at}` });
      continue;
    }
    const branch = branchFor(task.id);
    const wt =
      worktrees.find((w) => w.branch === `refs/heads/${branch}`) ??
      // In the middle of a rebase (a crash inside the merge protocol) it shows as detached.
      worktrees.find((w) => w.detached && w.path === s.worktreePath(task.id));
    const recover = async (): Promise<TaskEnd> => {
      if (!wt && !(await s.git.branchExists(branch))) {
        s.log({ type: 'RECOVERY', taskId: task.id, message: 'action="marked failed" reason="no worktree or branch found"' });
        await s.failTask(task, 'SESSION_TIMEOUT', 'No worktree or branch found', undefined, 'no worktree or branch found');
        return 'failed';
      }
      const worktree = wt?.path ?? s.worktreePath(task.id);
      if (wt) await abortInterruptedRebase(s.git, worktree);
      else await s.git.addWorktreeForBranch(worktree, branch);

      const base = await baseOf(s, task, branch);
      // Merged already (the controller died between `git merge` and recording the task): done.
      // Asked before committing leftovers: what the worktree holds now (a validation's caches,
      // build output) was never part of that merge, and committing it would make the merged
      // branch look unmerged, so it would be validated and merged a second time.
      if ((await s.git.countCommits(`${base}..${branch}`)) > 0 && (await s.git.isAncestor(branch, 'HEAD'))) {
        s.log({ type: 'RECOVERY', taskId: task.id, message: 'action="marked completed" reason="its branch was already merged"' });
        await s.completeTask(task, undefined);
        return 'completed';
      }
      // Uncommitted files are the agent's unfinished work, unless its work was already committed
      // (then they are what the validation left behind, and must not reach the base branch).
      const commitLeftovers = !s.workCommitted(task.id, task.agent_id);
      const problem = await inspectWork(s, task, worktree, base, { commitLeftovers, warnIfEmpty: false });
      const ahead = await s.git.countCommits(`${base}..${branch}`);
      if (ahead === 0) {
        s.log({ type: 'RECOVERY', taskId: task.id, message: `action="removed empty ${wt ? 'worktree' : 'branch'}" reason="no sub-agent progress"` });
        await s.failTask(task, 'SESSION_TIMEOUT', 'Sub-agent work incomplete', undefined, 'no sub-agent progress');
        return 'failed';
      }
      s.log({ type: 'RECOVERY', taskId: task.id, message: `action="validated orphaned ${wt ? 'worktree' : 'branch'}" reason="controller session timeout"` });
      const terminal = s.terminals.open(task, worktree);
      if (problem) return discardAttempt(s, task, worktree, terminal, { category: 'AGENT_FAIL', reason: problem, discardReason: 'agent reported failure' });
      const attempt = s.createAttempt(task.id, task.attempts);
      const v = await validateTask(s, task, worktree, terminal, attempt);
      if (v.kind === 'interrupted') return 'interrupted';
      if (v.kind === 'fail') return discardAttempt(s, task, worktree, terminal, { ...v, discardReason: 'validation failed' });
      return merges.enqueue(task.id, () => mergeTask(s, task, worktree, terminal, attempt));
    };
    work.push(
      recover().catch(async (err: unknown): Promise<TaskEnd> => {
        // One task's recovery failing must not stop the others, nor the session.
        const reason = `recovery failed: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`;
        try {
          await s.failTask(task, 'TASK_EXEC', reason, undefined, 'recovery failed');
          return 'failed';
        } catch {
          s.log({ type: 'ERROR', taskId: task.id, category: 'TASK_EXEC', message: `${reason}; left in progress for the next run` });
          return 'interrupted';
        }
      }),
    );
  }
  await Promise.all(work);
}

/**
 * Where the task's branch started: recorded at dispatch, else where it meets the base branch —
 * as it was before the branch's own merge, if it was merged already (else the merge base is the
 * branch's tip and the merged work would look like no work at all).
 */
async function baseOf(s: Session, task: Task, branch: string): Promise<string> {
  if (task.started_at_commit && (await s.git.commitExists(task.started_at_commit))) return task.started_at_commit;
  const r = await s.git.run(['merge-base', (await mergedBy(s.git, branch)) ?? 'HEAD', branch], { allowFail: true });
  return r.code === 0 ? r.stdout.trim() : 'HEAD';
}

/** The first parent of the merge commit on HEAD's first-parent line that merged `branch`'s tip. */
async function mergedBy(git: Git, branch: string): Promise<string | undefined> {
  if (!(await git.isAncestor(branch, 'HEAD'))) return undefined;
  const tip = (await git.run(['rev-parse', '--verify', '-q', `refs/heads/${branch}`])).stdout.trim();
  const merges = (await git.run(['rev-list', '--first-parent', '--merges', '--parents', 'HEAD'])).stdout;
  for (const line of merges.split('\n')) {
    const [, first, second] = line.split(' ');
    if (second === tip) return first;
  }
  return undefined;
}

function heldByAnotherWorker(task: Task, mode: string | undefined, workerId: string): boolean {
  if (mode !== 'concurrent' || !task.claimed_by || task.claimed_by === workerId || !task.lease_expires_at) return false;
  return Date.parse(task.lease_expires_at) > Date.now();
}

/**
 * Worktrees and branches named harness-<id> for a task that is not in progress are leftovers
 * of a crash between a task's end and its clean-up: remove them. Other branches are not ours.
 */
export async function removeOrphanedWorktrees(s: Session): Promise<void> {
  const { file } = s.store.load();
  const status = new Map(file.tasks.map((t) => [t.id, t.status]));
  const orphan = (id: string | undefined): id is string => id !== undefined && status.has(id) && status.get(id) !== 'in_progress';
  const removed = new Set<string>();

  for (const w of await s.git.listWorktrees()) {
    const id = w.branch ? taskIdOfBranch(w.branch) : undefined;
    if (orphan(id)) removed.add(id);
  }
  for (const branch of await s.git.branches('harness-')) {
    const id = taskIdOfBranch(branch);
    if (orphan(id)) removed.add(id);
  }
  for (const id of removed) {
    await s.removeWorktree(id);
    s.log({ type: 'RECOVERY', taskId: id, message: `action="removed orphaned worktree" reason="task is ${status.get(id)}"` });
  }
  // Directories left in our worktree folder without git knowing them (a crash inside `worktree add`).
  await s.git.run(['worktree', 'prune'], { allowFail: true });
  const registered = new Set((await s.git.listWorktrees()).map((w) => w.path));
  for (const name of listDir(s.config.worktreeRoot)) {
    const path = join(s.config.worktreeRoot, name);
    if (orphan(name) && !registered.has(path)) rmSync(path, { recursive: true, force: true });
  }
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
