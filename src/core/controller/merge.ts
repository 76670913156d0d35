// The merge protocol: `git merge --no-ff` into the base branch; on conflict, abort,
// and either discard (a conflict outside the task's files_hint) or rebase the task's branch,
// validate again and merge once more; still conflicting is MERGE_CONFLICT, retried solo by a
// fresh attempt on the new base whose prompt shows the conflicting files and both sides' changes.
// Before merging: files changed outside files_hint are reported (scope "warn") or refused
// (scope "reject"), and a git lock file left in the main repository stops the session instead of
// failing the merge. A merge that fails for the machine's reason is rolled back and not charged.
import { existsSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';

import { branchFor } from '../ids';
import type { AttemptPaths } from '../statePaths';
import type { Task } from '../taskFile/schema';
import { normalizeHint } from '../tasks/dag';
import { recordOutOfScope, requeueAfterIntegration } from '../tasks/transitions';
import { discardAttempt } from './discard';
import { classifyError, type EnvFailure, lockFileFailure } from './envFailure';
import { endUncharged, stopForEnvironment } from './envStop';
import type { Session } from './session';
import type { TaskTerminal } from './types';
import { validateTask, type ValidationResult } from './validate';

/**
 * How an attempt ended; `awaiting-answer`: its agent asked a question, `awaiting-review`: it
 * passed under review "manual"; both keep its worktree.
 */
export type TaskEnd = 'completed' | 'failed' | 'interrupted' | 'awaiting-answer' | 'awaiting-review';

export async function mergeTask(s: Session, task: Task, worktree: string, terminal: TaskTerminal, attempt: AttemptPaths): Promise<TaskEnd> {
  const branch = branchFor(task.id);
  const message = `Merge [${task.id}] ${task.title.replace(/\s*\n\s*/g, ' ')}`;
  const discard = (category: 'MERGE_CONFLICT' | 'TEST_FAIL' | 'TIMEOUT' | 'CONFIG' | 'AGENT_FAIL', reason: string, tail?: string) =>
    discardAttempt(s, task, worktree, terminal, { category, reason, tail, discardReason: 'merge failed' });

  // The base failed its integration check and could not be put right: nothing more lands.
  const refusal = s.gate?.refusalOf(s);
  if (refusal) return stopForEnvironment(s, task, refusal, terminal);
  const reverted = dependenciesNotCompleted(s, task);
  if (reverted.length) return giveBackForDependencies(s, task, terminal, reverted);
  // Every way to a merge comes here: a change under review waits for a person's approval first.
  const held = await reviewHold(s, task, terminal);
  if (held) return held;

  const indexLock = await indexLockPath(s);
  if (existsSync(indexLock)) return stopForEnvironment(s, task, lockFileFailure(indexLock), terminal);

  const outside = await changedOutsideScope(s, task, branch);
  if (outside.length && s.config.scope === 'reject') {
    return discard('AGENT_FAIL', `changed files outside files_hint (session_config.scope is "reject"): ${outside.join(', ')}`);
  }

  const tryMerge = async () => {
    try {
      return await s.git.mergeNoFf(branch, message);
    } catch (err) {
      const failure = classifyError(err) ?? (existsSync(indexLock) ? lockFileFailure(indexLock) : undefined);
      if (!failure) throw err;
      return { machine: await rolledBack(s, task.id, branch, failure) };
    }
  };

  let merge = await tryMerge();
  if ('machine' in merge) return stopForEnvironment(s, task, merge.machine, terminal);
  if (!merge.ok && merge.blockedBy.length) {
    return discard('MERGE_CONFLICT', `main working tree has local changes that the merge would overwrite: ${merge.blockedBy.join(', ')}`);
  }
  if (!merge.ok) {
    const conflicts = merge.conflicts;
    await s.git.mergeAbort();
    s.log({ type: 'ROLLBACK', taskId: task.id, message: `git merge --abort (conflicts: ${conflicts.join(', ')})` });
    const outsideConflicts = outOfScope(s, task, conflicts);
    if (outsideConflicts.length) {
      return discard(
        'MERGE_CONFLICT',
        `Out-of-scope file conflict: ${outsideConflicts.join(', ')}`,
        await conflictReport(s, branch, conflicts),
      );
    }

    // A rebase rewrites the agent's commits: the originals are kept under our ref first.
    await s.keepAttempt(task.id);
    if (!(await s.git.rebase(worktree, s.baseBranch))) {
      s.log({ type: 'ROLLBACK', taskId: task.id, message: `git rebase --abort (rebase onto ${s.baseBranch} conflicted)` });
      return discard(
        'MERGE_CONFLICT',
        `conflicts with ${s.baseBranch} in ${conflicts.join(', ')}; rebase failed`,
        await conflictReport(s, branch, conflicts),
      );
    }
    s.log({
      type: 'WARN',
      taskId: task.id,
      message: `merge conflicted in ${conflicts.join(', ')}; rebased ${branch} onto ${s.baseBranch}, validating again`,
    });
    let again: ValidationResult;
    try {
      again = await validateTask(s, task, worktree, terminal, attempt, s.baseBranch);
    } catch (err) {
      const end = endUncharged(s, task, err, terminal);
      if (end) return end;
      throw err;
    }
    if (again.kind === 'interrupted') return 'interrupted';
    if (again.kind === 'fail')
      return discard(
        again.category === 'TIMEOUT' ? 'TIMEOUT' : 'TEST_FAIL',
        `after rebase onto ${s.baseBranch}: ${again.reason}`,
        again.tail,
      );
    merge = await tryMerge();
    if ('machine' in merge) return stopForEnvironment(s, task, merge.machine, terminal);
    if (!merge.ok) {
      if (merge.conflicts.length) await s.git.mergeAbort();
      const report = merge.conflicts.length ? await conflictReport(s, branch, merge.conflicts) : undefined;
      return discard('MERGE_CONFLICT', `still conflicting after rebase: ${[...merge.conflicts, ...merge.blockedBy].join(', ')}`, report);
    }
  }

  const head = await s.git.head();
  s.state.head = head ?? s.state.head;
  s.pool.baseMoved();
  if (outside.length || task.out_of_scope?.length) await s.transact((file) => void recordOutOfScope(file, task.id, outside));
  const warn = outside.length
    ? [{ type: 'WARN' as const, taskId: task.id, message: `out-of-scope files merged: ${outside.join(', ')}` }]
    : [];
  await s.completeTask(task, head?.slice(0, 7), warn);
  terminal.write(`\r\n[launchpad] ${task.id} merged into ${s.baseBranch} (${head?.slice(0, 7)})\r\n`);
  terminal.close('completed');
  // Still the merge queue's job: no other merge lands while the base is checked.
  await s.gate?.afterMerge(s);
  return 'completed';
}

/**
 * Under review "manual" a task merges only the commit a person approved; anything else (its
 * first pass, a round after requested changes, a branch that moved since the approval) is held
 * for review, its commits kept and its worktree left. Undefined when it may merge.
 */
async function reviewHold(s: Session, task: Task, terminal: TaskTerminal): Promise<TaskEnd | undefined> {
  if ((task.review ?? s.config.review) !== 'manual') return undefined;
  const branch = branchFor(task.id);
  const commit = await s.git.resolve(`refs/heads/${branch}`);
  if (!commit) throw new Error(`${task.id}: its branch ${branch} is gone before its review`);
  const round = task.review_round;
  if (round?.verdict === 'approved') {
    if (round.commit === commit) return undefined;
    s.log({
      type: 'WARN',
      taskId: task.id,
      message: `${branch} moved since its approval (${round.commit.slice(0, 7)} → ${commit.slice(0, 7)}): reviewed again`,
    });
  }
  const base = task.started_at_commit ?? (await s.git.run(['merge-base', commit, `refs/heads/${s.baseBranch}`])).stdout.trim();
  const kept = await s.keepAttempt(task.id);
  await s.awaitReview(task, { commit, base }, kept);
  terminal.write(
    `\r\n[launchpad] ${task.id} passed its validation and awaits review (${commit.slice(0, 7)})\r\n[launchpad] launchpad review ${task.id}, then approve or request-changes\r\n`,
  );
  terminal.close('interrupted');
  return 'awaiting-review';
}

/**
 * A task merges only while each of its dependencies is completed: one that is not any more was
 * reverted by the integration gate after this attempt started from it.
 */
function dependenciesNotCompleted(s: Session, task: Task): string[] {
  if (!task.depends_on.length) return [];
  const { file } = s.store.load();
  return task.depends_on.filter((id) => file.tasks.find((t) => t.id === id)?.status !== 'completed');
}

/** Its work built on a task that was reverted: kept under our ref, the attempt given back uncharged. */
async function giveBackForDependencies(s: Session, task: Task, terminal: TaskTerminal, deps: string[]): Promise<TaskEnd> {
  const kept = await s.discardWorktree(task.id, undefined, s.fenceOf(task.id));
  await s.transactFenced(task.id, (file) => void requeueAfterIntegration(file, task.id, { charged: false }));
  s.release(task.id);
  s.log({
    type: 'WARN',
    taskId: task.id,
    message: `not merged: ${deps.join(', ')}, which it depends on, was reverted after this attempt started; requeued, not charged${kept ? ` kept=${kept}` : ''}`,
  });
  s.taskEvents.fire({ taskId: task.id, kind: 'interrupted' });
  terminal.write(`\r\n[launchpad] not merged: ${deps.join(', ')} was reverted; ${task.id} runs again after it\r\n`);
  terminal.close('interrupted');
  return 'interrupted';
}

/** The main repository's index lock (its path asked of git once per session). */
const indexLocks = new WeakMap<Session, string>();
async function indexLockPath(s: Session): Promise<string> {
  let path = indexLocks.get(s);
  if (path === undefined) indexLocks.set(s, (path = await s.git.gitPath('index.lock')));
  return path;
}

/** Whether `file` (relative to the repository top) is inside the task's files_hint. */
function inScope(s: Session, task: Task, file: string): boolean {
  const sub = relative(s.toplevel, s.paths.root).split('\\').join('/');
  const hints = task.files_hint.map(normalizeHint);
  const rel = sub && file.startsWith(sub + '/') ? file.slice(sub.length + 1) : file;
  return hints.some((h) => h === '' || rel === h || rel.startsWith(h + '/'));
}

/** Conflicted files (relative to the repository top) outside the task's files_hint. */
function outOfScope(s: Session, task: Task, conflicts: string[]): string[] {
  // No hint means no declared scope: every file is the task's own, so try the rebase.
  if (!task.files_hint.length) return [];
  return conflicts.filter((file) => !inScope(s, task, file));
}

/** Files the task's branch changes (since it left the base branch) outside its files_hint. */
async function changedOutsideScope(s: Session, task: Task, branch: string): Promise<string[]> {
  if (!task.files_hint.length) return [];
  const r = await s.git.run(['diff', '--name-only', '-z', `${s.baseBranch}...${branch}`], { cwd: s.toplevel });
  return r.stdout.split('\0').filter((f) => f && !inScope(s, task, f));
}

/** A path relative to the repository top as a pathspec that means exactly that path. */
const pathspec = (file: string) => `:(top,literal)${file}`;

/** Each side's change of a conflict, bounded so the whole report fits in an error_tail. */
const REPORT_DIFF_CHARS = 1600;

/**
 * What the next attempt needs to avoid the conflict: the files, what the base branch changed in
 * them since this attempt started, and what this attempt changed. Kept as the failure's tail,
 * which the next prompt shows.
 */
async function conflictReport(s: Session, branch: string, files: string[]): Promise<string | undefined> {
  const mb = await s.git.run(['merge-base', 'HEAD', branch], { allowFail: true, cwd: s.toplevel });
  if (mb.code !== 0) return undefined;
  const base = mb.stdout.trim();
  const diff = async (to: string) => {
    const r = await s.git.run(['diff', base, to, '--', ...files.map(pathspec)], { allowFail: true, cwd: s.toplevel });
    const text = r.stdout.trimEnd();
    return text.length > REPORT_DIFF_CHARS
      ? `${text.slice(0, REPORT_DIFF_CHARS)}\n… (${text.length - REPORT_DIFF_CHARS} more characters)`
      : text || '(no change)';
  };
  return [
    `Merge conflict in: ${files.join(', ')}`,
    `${s.baseBranch} changed them since this attempt started (git diff ${base.slice(0, 7)} ${s.baseBranch}):`,
    await diff('HEAD'),
    `This attempt changed them (git diff ${base.slice(0, 7)} ${branch}):`,
    await diff(branch),
    `The next attempt starts from ${s.baseBranch} as it is now, with its change in it: keep both.`,
  ].join('\n');
}

/**
 * A merge that failed for the machine's reason (a full disk mid-way) may have left MERGE_HEAD
 * and files in the main working tree; git refuses to merge over local changes and untracked
 * files before it writes any, so whatever differs from HEAD among the files the merge touches
 * was written by it. Puts them back as HEAD has them; what cannot be is named in the advice.
 */
async function rolledBack(s: Session, taskId: string, branch: string, failure: EnvFailure): Promise<EnvFailure> {
  const top = { allowFail: true, cwd: s.toplevel };
  if (existsSync(await s.git.gitPath('MERGE_HEAD'))) await s.git.mergeAbort();
  const touched = (await s.git.run(['diff', '--name-only', '-z', 'HEAD', branch], top)).stdout.split('\0').filter(Boolean);
  if (touched.length) {
    const spec = touched.map(pathspec);
    await s.git.run(['reset', '-q', 'HEAD', '--', ...spec], top);
    const inHead = new Set(
      (await s.git.run(['ls-tree', '-r', '-z', '--name-only', 'HEAD', '--', ...touched], top)).stdout.split('\0').filter(Boolean),
    );
    for (const f of touched) if (!inHead.has(f)) rmSync(join(s.toplevel, f), { force: true });
    const changed = (await s.git.run(['diff', '--name-only', '-z', 'HEAD', '--', ...spec], top)).stdout.split('\0').filter(Boolean);
    if (changed.length) await s.git.run(['checkout', '-q', 'HEAD', '--', ...changed.map(pathspec)], top);
  }
  const left = touched.length
    ? (await s.git.run(['status', '--porcelain=v1', '-z', '--', ...touched.map(pathspec)], top)).stdout
        .split('\0')
        .filter((l) => l.length > 3)
        .map((l) => l.slice(3))
    : [];
  const mergeLeft = existsSync(await s.git.gitPath('MERGE_HEAD'));
  s.log({
    type: 'ROLLBACK',
    taskId,
    message: `merge of ${branch} failed (${failure.cause}); main working tree ${left.length || mergeLeft ? 'not fully restored' : 'restored'}`,
  });
  if (!left.length && !mergeLeft) return failure;
  const what = [...(mergeLeft ? ['an unfinished merge (git merge --abort)'] : []), ...left].join(', ');
  return { ...failure, advice: `${failure.advice}; then restore ${s.toplevel} (the failed merge left: ${what})` };
}
