// What a session does about the last one before it starts new work: ends the processes a dead
// controller left running, aborts its interrupted merge, writes the log lines a crash kept from
// the log, recovers every in_progress task (the recovery table of attempt/lifecycle.ts: resumed,
// merged only with a verdict of success, failed on the agent's own failure, or started afresh),
// and removes orphaned worktrees and branches, keeping their commits.
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readFileSync, readSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { type AttemptFence, markWorktreeOwner, recoveryRow, StaleAttemptError } from '../attempt/lifecycle';
import { type Git, isRemovalLeftover } from '../git/git';
import { branchFor, compareIds, taskIdOfBranch } from '../ids';
import { type LogType, parseLogLine } from '../log/logLine';
import { readLogLines } from '../log/logReader';
import type { AttemptPaths, AttemptVerdict } from '../statePaths';
import type { Task } from '../taskFile/schema';
import { awaitsPerson } from '../tasks/dag';
import { awaitsResume, ERROR_TAIL_CHARS, reviewDecision } from '../tasks/transitions';
import { discardAttempt } from './discard';
import { baseGone } from './envFailure';
import { endUncharged, refuseStale, stopForEnvironment } from './envStop';
import { mergeTask, type TaskEnd } from './merge';
import type { MergeQueue } from './mergeQueue';
import { prepareWorktree } from './prepare';
import type { Session } from './session';
import { awaitAnswer, inspectWork, type Resume } from './taskRun';
import { validateTask } from './validate';

/** Ends agents and validations that a killed controller left behind. Returns their labels. */
export function endOrphanedProcesses(s: Session): void {
  for (const { label, escaped } of s.records.endAll()) {
    s.log({
      type: 'RECOVERY',
      message: `action="ended orphaned process" reason="${label} outlived its controller"${escaped ? ` escaped=${escaped}` : ''}`,
    });
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

/** An in_progress task the recovery decided to resume: the session's loop starts it first. */
export interface Resumption {
  task: Task;
  resume: Resume;
}

/**
 * The recovery of every in_progress task a dead (or stopped) session left, by the recovery table
 * (attempt/lifecycle.ts, shown in ARCHITECTURE.md): an attempt is merged only when its agent's
 * recorded verdict says success; a recorded failure is recorded; an attempt without a verdict is
 * resumed (the same attempt, nothing more counted) when it left any progress, and started afresh
 * (the attempt given back) when it left none. Returns the attempts to resume (their RECOVERY
 * lines written, their uncommitted work kept at a ref). `only`: the tasks a concurrent worker
 * took over (all in-progress tasks when absent).
 */
export async function recoverInProgress(
  s: Session,
  merges: MergeQueue,
  workerId: string,
  only?: ReadonlySet<string>,
): Promise<Resumption[]> {
  const { file } = s.store.load();
  const tasks = file.tasks.filter((t) => t.status === 'in_progress' && (!only || only.has(t.id)));
  if (!tasks.length) return [];
  const worktrees = await s.git.listWorktrees();
  const work: Array<Promise<unknown>> = [];
  const resumptions: Resumption[] = [];
  for (const task of tasks) {
    if (heldByAnotherWorker(task, file.session_config.concurrency_mode, workerId)) {
      s.log({ type: 'WARN', taskId: task.id, message: `left alone: claimed by ${task.claimed_by} until ${task.lease_expires_at}` });
      continue;
    }
    const recovery = (action: string, reason: string, kept?: string) =>
      s.log({ type: 'RECOVERY', taskId: task.id, message: `action="${action}" reason="${reason}"${kept ? ` kept=${kept}` : ''}` });
    const branch = branchFor(task.id);
    const wt =
      worktrees.find((w) => w.branch === `refs/heads/${branch}`) ??
      // In the middle of a rebase (a crash inside the merge protocol) it shows as detached.
      worktrees.find((w) => w.detached && w.path === s.worktreePath(task.id));
    const recorded = s.verdictOf(task.id, task.agent_id);
    // This session now drives the dead attempt: its effects are fenced by it.
    const fence: AttemptFence = {
      taskId: task.id,
      agentId: task.agent_id ?? null,
      generation: s.worker ? (task.claim_generation ?? 0) : undefined,
    };
    s.drive(fence);

    const recover = async (): Promise<TaskEnd | 'restarted' | Resume> => {
      const worktree = wt?.path ?? s.worktreePath(task.id);
      const where = wt ? 'worktree' : (await s.git.branchExists(branch)) ? 'branch' : 'none';
      if (wt) {
        await abortInterruptedRebase(s.git, worktree);
        // Its processes are gone (endOrphanedProcesses): a lock a killed git left is stale.
        const locks = await s.git.removeStaleLocks(worktree, branch);
        if (locks.length) recovery('removed stale git lock', `${locks.join(', ')} left by a git command killed half-way`);
      }
      const base = where === 'none' ? undefined : await baseOf(s, task, branch);
      // Merged already (the controller died between `git merge` and recording the task)? Asked
      // before committing leftovers: what the worktree holds now (a validation's caches, build
      // output) was never part of that merge, and committing it would make the merged branch
      // look unmerged, so it would be validated and merged a second time.
      const merged = !!base && (await s.git.countCommits(`${base}..${branch}`)) > 0 && (await s.git.isAncestor(branch, 'HEAD'));
      const folder = s.attemptOf(task.id, task.agent_id);
      const commits = base ? await s.git.commitSubjects(`${base}..${branch}`) : [];
      const uncommitted = wt ? await s.git.anyChanges(worktree) : [];
      const checkpoints = (task.checkpoints ?? []).filter((c) => c.agent_id && c.agent_id === task.agent_id);
      const row = recoveryRow({
        verdict: recorded?.verdict.kind ?? 'none',
        workCommitted: s.workCommitted(task.id, task.agent_id),
        merged,
        where,
        baseExists: true,
        progress: commits.length + uncommitted.length + checkpoints.length > 0,
      });

      switch (row.action) {
        case 'record-failure': {
          const v = recorded!.verdict as Extract<AttemptVerdict, { kind: 'fail' }>;
          recovery('recorded failure', 'the agent ended with a failure; the controller stopped before recording it');
          await s.failTask(task, v.category, v.reason, readTail(recorded!.attempt.transcript, ERROR_TAIL_CHARS), 'agent reported failure');
          return 'failed';
        }
        case 'complete': {
          const merge = (await mergedBy(s.git, branch))?.merge.slice(0, 7);
          recovery('marked completed', `its branch was already merged${merge ? ` (merge ${merge})` : ''}`);
          await s.completeTask(task, merge);
          return 'completed';
        }
        case 'start-afresh': {
          recovery('started afresh', where === 'none' ? 'no worktree or branch found' : 'interrupted before any progress');
          // The worktree goes first, then the task: once it is pending, another worker may
          // claim it and make a worktree at the same path.
          if (where !== 'none') await s.discardWorktree(task.id, task.attempts, fence);
          await s.restartTask(task.id);
          return 'restarted';
        }
        case 'stop-base-gone':
          return stopForEnvironment(s, task, baseGone(task.id, task.started_at_commit ?? ''));
        case 'validate-and-merge':
          if (where === 'branch')
            await s.git.addWorktreeForBranch(worktree, branch, { whileLocked: () => markWorktreeOwner(worktree, fence) });
          markWorktreeOwner(worktree, fence);
          return validateAndMerge(s, task, merges, worktree, base!, where === 'branch' ? 'branch' : 'worktree', recorded?.attempt);
        case 'resume': {
          if (where === 'branch')
            await s.git.addWorktreeForBranch(worktree, branch, { whileLocked: () => markWorktreeOwner(worktree, fence) });
          // Its number: the task's count (a resumed attempt is the same attempt).
          const interruptedAttempt = folder?.number || task.attempts;
          let kept: string | undefined;
          if (uncommitted.length) {
            const snapshot = await s.git.snapshotChanges(
              worktree,
              `[launchpad] uncommitted work of ${task.id} attempt ${interruptedAttempt}, kept by a recovery`,
            );
            if (snapshot) kept = await s.keepAttempt(task.id, interruptedAttempt, snapshot);
          }
          const left = `${commits.length} commit(s), ${uncommitted.length} uncommitted change(s), ${checkpoints.length} checkpoint(s)`;
          recovery('resumed agent', `interrupted without a verdict: ${left}`, kept);
          const outputTail = folder && readTail(folder.transcript, RESUME_TAIL_CHARS);
          return { worktree, base: base!, interruptedAttempt, commits, uncommitted, snapshotRef: kept, outputTail };
        }
        case 'await-answer': {
          // Stopped between the agent's question and the task's record of it: recorded now.
          if (where === 'branch')
            await s.git.addWorktreeForBranch(worktree, branch, { whileLocked: () => markWorktreeOwner(worktree, fence) });
          const v = recorded!.verdict as Extract<AttemptVerdict, { kind: 'question' }>;
          recovery('recorded question', 'the agent asked a question; the controller stopped before recording it');
          const attempt = recorded!.attempt.number || task.attempts;
          return awaitAnswer(s, task, worktree, s.terminals.open(task, worktree), attempt, base!, v.text);
        }
      }
    };
    work.push(
      recover()
        .then((r) => {
          if (typeof r === 'string') return r;
          resumptions.push({ task, resume: r });
          return 'resumed';
        })
        .catch(async (err: unknown): Promise<TaskEnd | 'resumed'> => {
          // Not the task's failure (the machine's, or its configuration): nothing is charged.
          const uncharged = endUncharged(s, task, err);
          if (uncharged) return uncharged;
          if (err instanceof StaleAttemptError) return refuseStale(s, task.id, err);
          // One task's recovery failing must not stop the others, nor the session; nor is it
          // the task's failure: it stays in progress, uncharged, for the next run.
          s.release(task.id);
          const reason = `recovery failed: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`;
          s.log({
            type: 'ERROR',
            taskId: task.id,
            category: 'TASK_EXEC',
            message: `${reason}; left in progress for the next run (not charged)`,
          });
          s.note(`${task.id}: ${reason}. It stays in progress; look at its worktree, then run again.`);
          return 'interrupted';
        }),
    );
  }
  await Promise.all(work);
  return resumptions.sort((a, b) => compareIds(a.task.id, b.task.id));
}

/** An attempt whose agent reported success: its work validated in the worktree, then merged or discarded. */
async function validateAndMerge(
  s: Session,
  task: Task,
  merges: MergeQueue,
  worktree: string,
  base: string,
  kind: 'worktree' | 'branch',
  attempt: AttemptPaths | undefined,
): Promise<TaskEnd> {
  // Uncommitted files are the agent's unfinished work, unless its work was already committed
  // (then they are what the validation left behind, and must not reach the base branch).
  const commitLeftovers = !s.workCommitted(task.id, task.agent_id);
  const problem = await inspectWork(s, task, worktree, base, { commitLeftovers, warnIfEmpty: false });
  s.log({
    type: 'RECOVERY',
    taskId: task.id,
    message: `action="validated orphaned ${kind}" reason="the agent reported success; the controller stopped before the merge"`,
  });
  const terminal = s.terminals.open(task, worktree);
  if (problem)
    return discardAttempt(s, task, worktree, terminal, {
      category: 'AGENT_FAIL',
      reason: problem,
      discardReason: 'agent reported failure',
    });
  const files = attempt ?? s.createAttempt(task.id, task.attempts);
  if (kind === 'branch') {
    // Made again from its branch: it gets what a new worktree gets (the included files,
    // worktree_setup) before the validation judges it.
    const ready = await prepareWorktree(s, task, worktree, terminal, files, { kind: 'new' });
    s.ports.releaseTask(task.id);
    if (ready.kind === 'interrupted') return 'interrupted';
    if (ready.kind === 'failed') {
      // The machine's failure: the work stays on its branch, the task in progress, for the next run.
      s.stopForEnvironment({
        category: 'ENV_SETUP',
        cause: `the worktree of ${task.id} could not be set up again: ${ready.failure.cause}`,
        advice: ready.failure.advice,
      });
      return 'interrupted';
    }
  }
  const v = await validateTask(s, task, worktree, terminal, files, base);
  if (v.kind === 'interrupted') return 'interrupted';
  if (v.kind === 'fail') return discardAttempt(s, task, worktree, terminal, { ...v, discardReason: 'validation failed' });
  return merges.enqueue(task.id, () => mergeTask(s, task, worktree, terminal, files));
}

/**
 * Where the task's branch started: recorded at dispatch, else where it meets the base branch —
 * as it was before the branch's own merge, if it was merged already (else the merge base is the
 * branch's tip and the merged work would look like no work at all).
 */
async function baseOf(s: Session, task: Task, branch: string): Promise<string> {
  if (task.started_at_commit && (await s.git.commitExists(task.started_at_commit))) return task.started_at_commit;
  const r = await s.git.run(['merge-base', (await mergedBy(s.git, branch))?.firstParent ?? 'HEAD', branch], { allowFail: true });
  return r.code === 0 ? r.stdout.trim() : 'HEAD';
}

/** The merge commit on HEAD's first-parent line that merged `branch`'s tip, and its first parent. */
async function mergedBy(git: Git, branch: string): Promise<{ merge: string; firstParent: string } | undefined> {
  if (!(await git.isAncestor(branch, 'HEAD'))) return undefined;
  const tip = (await git.run(['rev-parse', '--verify', '-q', `refs/heads/${branch}`])).stdout.trim();
  const merges = (await git.run(['rev-list', '--first-parent', '--merges', '--parents', 'HEAD'])).stdout;
  for (const line of merges.split('\n')) {
    const [merge, first, second] = line.split(' ');
    if (second === tip) return { merge: merge!, firstParent: first! };
  }
  return undefined;
}

/**
 * A crash between a task's completion in the task file and its log lines leaves a completed task
 * whose last DISPATCH has no Completed after it: write the missing lines (a RECOVERY line saying
 * so, the MERGE line when that is missing too and the merge is found on the base branch's
 * first-parent line, and the Completed line), so the log and the task file agree again.
 */
export async function logMissingCompletions(s: Session): Promise<void> {
  const { file } = s.store.load();
  const completed = new Set(file.tasks.filter((t) => t.status === 'completed').map((t) => t.id));
  if (!completed.size) return;
  const lastDispatch = lastLineOf(s, 'DISPATCH', completed);
  const lastMerge = lastLineOf(s, 'MERGE', completed);
  const lastCompleted = lastLineOf(s, 'Completed', completed);
  const after = (a: LogPosition | undefined, b: LogPosition) => a !== undefined && compareLogPositions(a, b) >= 0;
  const missing = [...lastDispatch].filter(([id, dispatch]) => !after(lastCompleted.get(id), dispatch)).map(([id]) => id);
  if (!missing.length) return;
  const merges = await mergesOnBase(s);
  for (const id of missing.sort(compareIds)) {
    const merge = merges.get(id)?.slice(0, 7);
    s.log({
      type: 'RECOVERY',
      taskId: id,
      message: `action="logged completion" reason="task file says completed${merge ? ` (merge ${merge})` : ''} but the log had no Completed line"`,
    });
    if (merge && !after(lastMerge.get(id), lastDispatch.get(id)!)) {
      s.log({ type: 'MERGE', taskId: id, message: `branch=${branchFor(id)} into=${s.baseBranch} (commit ${merge})` });
    }
    s.log({ type: 'Completed', taskId: id, message: merge ? `(commit ${merge})` : '' });
  }
}

/** Where a line is in the log: its session, then its time (both only grow as the log is appended). */
type LogPosition = [session: number, timestamp: string];

function compareLogPositions(a: LogPosition, b: LogPosition): number {
  return a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
}

/** The position of the last line of `type` for each of `ids`. */
function lastLineOf(s: Session, type: LogType, ids: ReadonlySet<string>): Map<string, LogPosition> {
  const last = new Map<string, LogPosition>();
  readLogLines(s.paths.progress, { type }, (lines) => {
    for (const line of lines) {
      const e = parseLogLine(line);
      if (e?.taskId && ids.has(e.taskId)) last.set(e.taskId, [e.session, e.timestamp]);
    }
  });
  return last;
}

/** The newest `Merge [id] …` commit on the base branch's first-parent line, by task id. */
async function mergesOnBase(s: Session): Promise<Map<string, string>> {
  const out = (await s.git.run(['log', '--first-parent', '--merges', '--format=%H%x09%s', `refs/heads/${s.baseBranch}`])).stdout;
  const found = new Map<string, string>();
  for (const line of out.split('\n')) {
    const [hash, subject] = line.split('\t');
    const id = /^Merge \[([^\]]+)\] /.exec(subject ?? '')?.[1];
    if (id && hash && !found.has(id)) found.set(id, hash);
  }
  return found;
}

function heldByAnotherWorker(task: Task, mode: string | undefined, workerId: string): boolean {
  if (mode !== 'concurrent' || !task.claimed_by || task.claimed_by === workerId || !task.lease_expires_at) return false;
  return Date.parse(task.lease_expires_at) > Date.now();
}

/**
 * Worktrees and branches named harness-<id> for a task that is not in progress (or that the
 * task file no longer holds) are leftovers of a crash between a task's end and its clean-up, or
 * of a removed task: remove them, keeping their commits under refs/launchpad/attempts/ first.
 * Other branches are not ours.
 */
export async function removeOrphanedWorktrees(s: Session): Promise<void> {
  const { file } = s.store.load();
  const status = new Map(file.tasks.map((t) => [t.id, t.status]));
  const attempts = new Map(file.tasks.map((t) => [t.id, t.attempts]));
  // A task awaiting a person (an answer, a review), or answered or reviewed and not yet resumed,
  // keeps its worktree for the attempt after.
  const keeps = new Set(file.tasks.filter((t) => awaitsPerson(t) || awaitsResume(t) || reviewDecision(t)).map((t) => t.id));
  const orphan = (id: string | undefined): id is string =>
    id !== undefined && status.has(id) && status.get(id) !== 'in_progress' && !keeps.has(id);
  const removed = new Set<string>();

  for (const w of await s.git.listWorktrees()) {
    const id = w.branch ? taskIdOfBranch(w.branch) : undefined;
    // A worktree of ours (in the worktree folder) of a task the file no longer holds (a person
    // removed the task) is an orphan too; a bare branch of that name may be a person's.
    const ours = id !== undefined && !status.has(id) && w.path === s.worktreePath(id);
    if (orphan(id) || ours) removed.add(id!);
  }
  for (const branch of await s.git.branches('harness-')) {
    const id = taskIdOfBranch(branch);
    if (orphan(id)) removed.add(id);
  }
  for (const id of removed) {
    let kept: string | undefined;
    try {
      kept = await s.keepAttempt(id, attempts.get(id) ?? 0);
    } catch (err) {
      s.log({
        type: 'WARN',
        taskId: id,
        message: `orphaned worktree left in place: could not keep its commits (${(err as Error).message.split('\n')[0]})`,
      });
      continue;
    }
    await s.removeWorktree(id);
    s.log({
      type: 'RECOVERY',
      taskId: id,
      message: `action="removed orphaned worktree" reason="${status.has(id) ? `task is ${status.get(id)}` : 'no such task in harness-tasks.json'}"${kept ? ` kept=${kept}` : ''}`,
    });
  }
  // Directories left in our worktree folder without git knowing them (a crash inside `worktree add`).
  await s.git.run(['worktree', 'prune'], { allowFail: true });
  const registered = new Set((await s.git.listWorktrees()).map((w) => w.path));
  for (const name of listDir(s.config.worktreeRoot)) {
    const path = join(s.config.worktreeRoot, name);
    if ((orphan(name) || removed.has(name) || isRemovalLeftover(name)) && !registered.has(path))
      rmSync(path, { recursive: true, force: true });
  }
}

/** What a resumed agent is shown of the interrupted one's output (characters). */
const RESUME_TAIL_CHARS = 2000;

/** The last `chars` characters of a transcript, reading only its end; undefined when empty or missing. */
function readTail(path: string, chars: number): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, chars * 4);
    const buf = Buffer.alloc(length);
    readSync(fd, buf, 0, length, size - length);
    return buf.toString('utf8').slice(-chars) || undefined;
  } finally {
    closeSync(fd);
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
