// In-place mode: one task at a time in the main working tree, no worktree and no merge commit.
// The cycle: claim with started_at_commit = HEAD (`Starting` line), the agent works and commits
// on the base branch, validate; success completes the task at the agent's last commit, failure
// keeps the attempt's commits and uncommitted work under refs/launchpad/attempts/<id>/<n>,
// rolls the tree back to the base (reset and clean, sparing Launchpad's own files), runs
// on_failure.cleanup and logs ROLLBACK and ERROR. The files changed in the tree and not
// committed by the agent (a person's edits during the attempt look the same) are named, with
// where they went. A base commit that is gone (the branch rewritten) stops the session
// uncharged, the tree left as it is. The agent ends with the controller: it works in the
// person's checkout.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';

import { shellQuote } from '../agents/shellWords';
import { recoveryRow } from '../attempt/lifecycle';
import type { Git } from '../git/git';
import { keepAttempt as keptAttempt } from '../git/keptAttempts';
import { excludeStateFiles } from '../init';
import type { Category } from '../log/logLine';
import type { ProcessResult } from '../process/runProcess';
import type { AttemptVerdict } from '../statePaths';
import { OWN_PATHS, ownPathsAt } from '../statePaths';
import type { Task } from '../taskFile/schema';
import { formatErrorEntry } from '../tasks/errorEntry';
import { awaitsResume, completeTask, dispatchTask, failTask, forgetVanishedBase, resumeTask } from '../tasks/transitions';
import { type AgentVerdict, noVerdictReason } from './agentOutput';
import { runAgent } from './agentRun';
import { chargedOverloadMessage, limitThatEnded, stopForLimit } from './budget';
import { runCleanup } from './discard';
import type { EnvFailure } from './envFailure';
import type { TaskEnd } from './merge';
import { buildPrompt } from './prompt';
import { protectedPathsOf } from './protectedPaths';
import type { Session } from './session';
import { inspectWork } from './taskRun';
import { STOPPED_BY_PERSON } from './taskStops';
import type { TaskTerminal } from './types';
import { validateTask } from './validate';

/** An in-progress task that was running in place (no branch of its own, a recorded base). */
export function runsInPlace(task: Task): boolean {
  return task.status === 'in_progress' && !task.worktree_branch && !!task.started_at_commit;
}

/**
 * A task whose agent asked a question in place, awaiting its answer or answered and not resumed:
 * its work is on the checked-out branch, so it goes before any other task and nothing else starts
 * in place until it has gone on.
 */
export function holdsTreeForAnswer(task: Task): boolean {
  return (task.status === 'awaiting_answer' || awaitsResume(task)) && !task.worktree_branch && !!task.started_at_commit;
}

/**
 * What a session does about an in-place attempt a dead (or stopped) session left, by the
 * recovery table (attempt/lifecycle.ts): the agent's recorded failure is rolled back and
 * recorded; a verdict of success is validated and completed without an agent; a base that is
 * gone stops the session uncharged; an attempt that left nothing starts afresh (given back);
 * anything else resumes in place as the same attempt.
 */
export async function recoverInPlace(s: Session, task: Task): Promise<TaskEnd> {
  const base = task.started_at_commit!;
  s.drive({ taskId: task.id, agentId: task.agent_id ?? null });
  const recorded = s.verdictOf(task.id, task.agent_id);
  const baseExists = await commitExists(s.git, base);
  const checkpoints = (task.checkpoints ?? []).filter((c) => c.agent_id && c.agent_id === task.agent_id);
  const progress = baseExists && ((await s.git.head()) !== base || (await changesOutsideOurs(s)) || checkpoints.length > 0);
  const row = recoveryRow({
    verdict: recorded?.verdict.kind ?? 'none',
    workCommitted: s.workCommitted(task.id, task.agent_id),
    merged: false,
    where: 'worktree',
    baseExists,
    progress,
  });
  const recovery = (action: string, reason: string) =>
    s.log({ type: 'RECOVERY', taskId: task.id, message: `action="${action}" reason="${reason}" base=${base.slice(0, 7)}` });
  switch (row.action) {
    case 'stop-base-gone':
      // Rewritten away while the run was down: no agent runs, the tree stays as it is.
      return stopForVanishedBase(s, task, base, 'while the run was down');
    case 'record-failure': {
      const v = recorded!.verdict as Extract<AttemptVerdict, { kind: 'fail' }>;
      recovery('recorded failure', 'the agent ended with a failure; the controller stopped before recording it');
      const terminal = s.terminals.open(task, s.toplevel);
      return rollBack(s, task, base, task.attempts, terminal, { category: v.category, reason: v.reason }, undefined);
    }
    case 'start-afresh':
      recovery('started afresh', 'interrupted before any progress');
      await s.restartTask(task.id);
      return 'interrupted';
    case 'await-answer': {
      // Stopped between the agent's question and the task's record of it: recorded now.
      recovery('recorded question', 'the agent asked a question; the controller stopped before recording it');
      const v = recorded!.verdict as Extract<AttemptVerdict, { kind: 'question' }>;
      return holdForAnswer(s, task, base, task.attempts, s.terminals.open(task, s.toplevel), v.text);
    }
    case 'validate-and-merge':
      recovery('validated in place', 'the agent reported success; the controller stopped before the validation ended');
      return runInPlace(s, task, { mode: 'validate' });
    default:
      recovery('resumed in place', 'interrupted without a verdict');
      return runInPlace(s, task, { mode: 'resume' });
  }
}

/**
 * One attempt in the main working tree. `mode`: a new dispatch; `resume`, an interrupted attempt
 * the next session found (the task is claimed already): the agent runs again on the work left in
 * the tree, with the recorded base, as the same attempt; `validate`, one whose agent had reported
 * success: its work is validated and completed without an agent.
 */
export async function runInPlace(s: Session, task: Task, opts: { mode?: 'dispatch' | 'resume' | 'validate' } = {}): Promise<TaskEnd> {
  const mode = opts.mode ?? 'dispatch';
  let agentId = `agent_${randomBytes(4).toString('hex')}`;
  const root = s.toplevel;
  await excludeStateFiles(s.paths, OWN_PATHS);
  let before: Task;
  let attempt: number;
  let base: string;
  if (mode !== 'dispatch') {
    before = task;
    attempt = task.attempts;
    base = task.started_at_commit!;
    if (mode === 'resume') {
      // The new agent continues the attempt: every effect from here on is fenced by it.
      await s.transactFenced(task.id, (file) => void resumeTask(file, task.id, agentId));
    } else agentId = task.agent_id!;
  } else {
    // After an answer the agent goes on from the work its question left: the base stays the one it started from.
    base = awaitsResume(task) && task.started_at_commit ? task.started_at_commit : (await s.git.head())!;
    ({ before, attempt } = await s.transact((file) => dispatchTask(file, task.id, { agentId, branch: null, baseCommit: base })));
    s.log({ type: 'Starting', taskId: task.id, message: `${task.title.replace(/\s*\n\s*/g, ' ')} (base=${base.slice(0, 7)})` });
  }
  s.drive({ taskId: task.id, agentId });
  s.taskEvents.fire({ taskId: task.id, kind: 'dispatched' });

  const terminal = s.terminals.open(task, root);
  // Where the agent's own commits end, once Launchpad committed what it left in the tree.
  let agentEnd: string | undefined;
  const fail = (category: Category, reason: string, tail?: string) =>
    rollBack(s, before, base, attempt, terminal, { category, reason, tail }, agentEnd);
  const files =
    mode === 'validate' ? (s.attemptOf(task.id, agentId) ?? s.createAttempt(task.id, attempt)) : s.createAttempt(task.id, attempt, agentId);
  if (mode !== 'validate') {
    const prompt = buildPrompt(before, {
      worktree: root,
      branch: s.baseBranch,
      baseBranch: s.baseBranch,
      inPlace: true,
      protectedPaths: protectedPathsOf(before, s.config.protectedPaths),
    });
    writeFileSync(files.prompt, prompt);
    terminal.write(`[launchpad] ${task.id} attempt ${attempt} (in place): ${s.config.agentCommand}\r\n`);

    const { agent, verdict, report } = await runAgent(s, task, terminal, files, {
      cwd: s.paths.root,
      env: {
        ...process.env,
        LAUNCHPAD_TASK_ID: task.id,
        LAUNCHPAD_TASK_TITLE: task.title,
        LAUNCHPAD_PROMPT_FILE: files.prompt,
        LAUNCHPAD_WORKTREE: root,
        LAUNCHPAD_BRANCH: s.baseBranch,
        LAUNCHPAD_ATTEMPT: String(attempt),
      },
      prompt,
      endWithController: true,
    });
    if (agent.aborted && s.stopping) return interrupted(terminal);
    // A tool out of quota is not the task's failure: no verdict is recorded, and what the agent
    // left in the tree stays there for the same attempt to resume (the third overload in a row excepted).
    const limit = limitThatEnded(report, verdict.kind);
    if (limit && !s.spending.chargesLimit(task.id, limit)) {
      const keepWork = (await s.git.head()) !== base || (await changesOutsideOurs(s));
      return stopForLimit(s, before, report!.preset, limit, terminal, { keepWork });
    }
    if (limit) s.log({ type: 'WARN', taskId: task.id, message: chargedOverloadMessage(report!.preset, limit) });
    else s.spending.noLimit(task.id);

    const clean = !agent.timedOut && !agent.spawnError && !agent.aborted;
    const success = verdict.kind === 'success' && clean;
    const question = verdict.kind === 'question' && clean ? verdict.text : undefined;
    // The verdict is recorded before anything else: a recovery validates only what it says succeeded.
    files.recordVerdict(
      agentId,
      success
        ? { kind: 'success' }
        : question !== undefined
          ? { kind: 'question', text: question }
          : { kind: 'fail', category: agent.timedOut ? 'TIMEOUT' : 'AGENT_FAIL', reason: verdictReason(s, agent, verdict) },
    );
    const result = success ? 'success' : question !== undefined ? 'question' : 'error';
    s.log({ type: 'AGENT_DONE', taskId: task.id, message: `agent=${agentId} result=${result}` });
    s.taskEvents.fire({ taskId: task.id, kind: 'agent-done' });
    if (question !== undefined) return holdForAnswer(s, before, base, attempt, terminal, question);
    if (!success) return fail(agent.timedOut ? 'TIMEOUT' : 'AGENT_FAIL', verdictReason(s, agent, verdict), agent.tail || undefined);
  }

  if (!(await commitExists(s.git, base))) return stopForVanishedBase(s, before, base, 'during the attempt', terminal);
  // The agent's leftovers become the task's commit (Launchpad's own files never do).
  let leftovers: { commit: string; files: string[] } | undefined;
  if (await changesOutsideOurs(s)) {
    agentEnd = (await s.git.head())!;
    await commitOutsideOurs(s, `[${task.id}] ${task.title} (changes left uncommitted by the agent)`);
    const commit = (await s.git.head())!;
    leftovers = { commit, files: await filesBetween(s.git, agentEnd, commit) };
  }
  const problem = await inspectWork(s, before, root, base, { commitLeftovers: false, warnIfEmpty: mode !== 'validate' });
  if (problem) return fail('AGENT_FAIL', problem);
  files.markWorkCommitted(agentId);

  const validation = await validateTask(s, before, root, terminal, files, base);
  if (validation.kind === 'interrupted') return interrupted(terminal);
  if (validation.kind === 'fail') return fail(validation.category, validation.reason, validation.tail);

  const commit = (await s.git.head())!;
  if (leftovers)
    reportUncommitted(s, task.id, attempt, leftovers.files, `committed with the task's work in ${leftovers.commit.slice(0, 7)}`);
  await s.transactFenced(task.id, (file) => void completeTask(file, task.id));
  s.release(task.id);
  s.log({ type: 'Completed', taskId: task.id, message: `(commit ${commit})` });
  s.taskEvents.fire({ taskId: task.id, kind: 'completed' });
  terminal.write(`\r\n[launchpad] ${task.id} completed at ${commit.slice(0, 7)}\r\n`);
  terminal.close('completed');
  return 'completed';
}

/**
 * The agent asked a question in place: what it left is committed on the branch, its commits kept
 * under a ref of ours, and the task awaits an answer with the attempt given back
 * (Session.awaitAnswer). Its work stays in the tree, so nothing else starts in place until the
 * answered task has gone on (holdsTreeForAnswer).
 */
async function holdForAnswer(
  s: Session,
  task: Task,
  base: string,
  attempt: number,
  terminal: TaskTerminal,
  text: string,
): Promise<TaskEnd> {
  if (!(await commitExists(s.git, base))) return stopForVanishedBase(s, task, base, 'during the attempt', terminal);
  if (await changesOutsideOurs(s)) await commitOutsideOurs(s, `[${task.id}] ${task.title} (changes left uncommitted by the agent)`);
  const problem = await inspectWork(s, task, s.toplevel, base, { commitLeftovers: false, warnIfEmpty: false });
  if (problem) return rollBack(s, task, base, attempt, terminal, { category: 'AGENT_FAIL', reason: problem }, undefined);
  const head = (await s.git.head())!;
  const kept = head === base ? undefined : await keptAttempt(s.git, task.id, attempt, head, base);
  await s.awaitAnswer(task, text, kept);
  terminal.write(
    `\r\n[launchpad] ${task.id} asks: ${text}\r\n[launchpad] its work stays in the tree and nothing else starts in place; answer with: launchpad answer ${task.id} "…"\r\n`,
  );
  terminal.close('interrupted');
  return 'awaiting-answer';
}

/** Why the agent's attempt failed, in words: its time limit, its start, its own reason, or no verdict. */
function verdictReason(s: Session, agent: ProcessResult, verdict: AgentVerdict): string {
  // Aborted while the session goes on: a person stopped this agent.
  if (agent.aborted) return STOPPED_BY_PERSON;
  if (agent.timedOut) return `Agent timed out after ${s.config.agentTimeoutMs / 1000}s`;
  if (agent.spawnError) return `could not start the agent: ${agent.spawnError}`;
  if (verdict.kind === 'fail') return verdict.reason;
  return noVerdictReason(agent, agent.tail);
}

function interrupted(terminal: TaskTerminal): TaskEnd {
  terminal.write('\r\n[launchpad] stopped: the task stays in progress; the next run resumes it in place\r\n');
  terminal.close('interrupted');
  return 'interrupted';
}

/**
 * A failed in-place attempt: its commits and uncommitted work kept under a Launchpad ref, the
 * tree back at the base, on_failure.cleanup, then the failure recorded (ROLLBACK, ERROR).
 * A base that no longer exists cannot be rolled back to: the session stops, nothing charged.
 */
async function rollBack(
  s: Session,
  task: Task,
  base: string,
  attempt: number,
  terminal: TaskTerminal,
  failure: { category: Category; reason: string; tail?: string | undefined },
  agentEnd: string | undefined,
): Promise<TaskEnd> {
  const git = s.git;
  if (!(await commitExists(git, base))) return stopForVanishedBase(s, task, base, 'during the attempt', terminal);
  const kept = await keepInPlaceAttempt(s, task, base, attempt, agentEnd);
  if (kept) {
    s.log({ type: 'WARN', taskId: task.id, message: `attempt ${attempt}'s work kept as ${kept.ref}` });
    if (kept.uncommitted.length) {
      const restore = restoreCommand(kept.ref, kept.agentEnd, kept.uncommitted);
      reportUncommitted(s, task.id, attempt, kept.uncommitted, `the rollback moved them to ${kept.ref}; restore them: ${restore}`);
    }
  }
  // `git reset --hard <base>` and `git clean -fd`, sparing Launchpad's own files (the state
  // files may be tracked, and are always written in the main working tree).
  const spare = ourPathspecs(s);
  await git.run(['reset', '-q', base]);
  await git.run(['checkout', '-q', base, '--', ':/', ...spare]);
  await git.run(['clean', '-fdq', '--', ':/', ...spare]);
  await runCleanup(s, task, s.toplevel, terminal);
  const entry = await s.transactFenced(task.id, (file) => failTask(file, task.id, failure));
  s.release(task.id);
  s.log(
    { type: 'ROLLBACK', taskId: task.id, message: `git reset --hard ${base}` },
    { type: 'ERROR', taskId: task.id, category: failure.category, message: entry.reason },
  );
  s.taskEvents.fire({ taskId: task.id, kind: 'failed' });
  terminal.write(`\r\n[launchpad] ${task.id} failed: ${formatErrorEntry(failure.category, entry.reason)}\r\n`);
  terminal.close('failed');
  return 'failed';
}

/** Whether `commit` is still in the repository (a rewritten branch can take its base with it). */
async function commitExists(git: Git, commit: string): Promise<boolean> {
  const r = await git.run(['cat-file', '-t', commit], { allowFail: true });
  return r.code === 0 && r.stdout.trim() === 'commit';
}

/**
 * The task's base commit is gone: not the task's fault, and nothing can be resumed on it or
 * rolled back to it. Nothing is charged and nothing in the tree is touched: the task goes back
 * to pending without a base, and the session stops (ENV_SETUP) for the person to keep the work.
 */
async function stopForVanishedBase(s: Session, before: Task, base: string, when: string, terminal?: TaskTerminal): Promise<TaskEnd> {
  const failure: EnvFailure = {
    category: 'ENV_SETUP',
    cause: `the base commit ${base} of ${before.id} is gone (${s.baseBranch} was rewritten ${when})`,
    advice: `the main working tree is as the attempt left it: commit or stash its changes (git stash -u), then run again (${before.id} starts afresh from HEAD)`,
  };
  s.stopForEnvironment(failure);
  await s.transactFenced(before.id, (file) => void forgetVanishedBase(file, before.id));
  s.release(before.id);
  s.log({ type: 'ERROR', taskId: before.id, category: 'ENV_SETUP', message: `${failure.cause} (not charged)` });
  s.taskEvents.fire({ taskId: before.id, kind: 'interrupted' });
  terminal?.write(`\r\n[launchpad] stopped: ${failure.cause}\r\n[launchpad] to fix: ${failure.advice}\r\n`);
  terminal?.close('interrupted');
  return 'interrupted';
}

/** Files named in a line, at most. */
const SHOWN = 10;

/**
 * The files of an attempt changed in the tree and not committed by its agent, named in a WARN
 * line and the run's end summary: a person's edits during the attempt are among them.
 */
function reportUncommitted(s: Session, taskId: string, attempt: number, files: string[], where: string): void {
  const shown = files.slice(0, SHOWN).join(', ') + (files.length > SHOWN ? ', …' : '');
  const message = `${files.length} file${files.length === 1 ? '' : 's'} changed and not committed during attempt ${attempt} (by its agent, or by a person meanwhile): ${shown}; ${where}`;
  s.log({ type: 'WARN', taskId, message });
  s.note(`${taskId}: ${message}`);
}

/**
 * The command that puts `files` (those changed from `agentEnd` to `ref`) back in the working
 * tree as they were at the attempt's end.
 */
function restoreCommand(ref: string, agentEnd: string, files: string[]): string {
  if (files.length <= SHOWN) return `git restore --source=${ref} -- ${files.map(shellQuote).join(' ')}`;
  return `git diff --no-renames --name-only -z ${agentEnd} ${ref} | git restore --source=${ref} --pathspec-from-file=- --pathspec-file-nul`;
}

/** The files changed from `from` to `to` (a rename as both its paths). */
async function filesBetween(git: Git, from: string, to: string): Promise<string[]> {
  const r = await git.run(['diff', '--no-renames', '--name-only', '-z', from, to]);
  return r.stdout.split('\0').filter(Boolean);
}

/**
 * refs/launchpad/attempts/<id>/<n> at the attempt's last state: its commits, plus a commit of
 * what it left uncommitted. Undefined when the attempt left nothing (HEAD at the base, clean).
 * `uncommitted`: the files Launchpad committed there, from where the agent's own commits end
 * (`agentEnd`, when its leftovers were committed before the validation) to the ref.
 */
async function keepInPlaceAttempt(
  s: Session,
  task: Task,
  base: string,
  attempt: number,
  agentEnd: string | undefined,
): Promise<{ ref: string; agentEnd: string; uncommitted: string[] } | undefined> {
  const end = agentEnd ?? (await s.git.head())!;
  if (await changesOutsideOurs(s)) await commitOutsideOurs(s, `[${task.id}] attempt ${attempt}: uncommitted work (kept by the rollback)`);
  const head = (await s.git.head())!;
  if (head === base) return undefined;
  const ref = await keptAttempt(s.git, task.id, attempt, head, base);
  if (!ref) return undefined;
  return { ref, agentEnd: end, uncommitted: end === head ? [] : await filesBetween(s.git, end, head) };
}

/** Pathspecs that exclude Launchpad's own files from an add, a checkout or a clean. */
function ourPathspecs(s: Session): string[] {
  return pathspecsSparing(s.toplevel, s.paths.root);
}

function pathspecsSparing(toplevel: string, root: string): string[] {
  return ownPathsAt(relative(toplevel, root)).map((p) =>
    p.endsWith('*') ? `:(top,exclude,glob)${p}` : `:(top,exclude)${p.replace(/\/$/, '')}`,
  );
}

/**
 * Untracked files that are not ignored and not Launchpad's own. An in-place run refuses to start
 * with any: a success commits what is left in the tree, and a rollback cleans it away.
 */
export async function untrackedOutsideOurs(git: Git, toplevel: string, root: string): Promise<string[]> {
  const r = await git.run(['status', '--porcelain', '-z', '--untracked-files=all', '--', ':/', ...pathspecsSparing(toplevel, root)]);
  return r.stdout
    .split('\0')
    .filter((e) => e.startsWith('?? '))
    .map((e) => e.slice(3));
}

async function changesOutsideOurs(s: Session): Promise<boolean> {
  const r = await s.git.run(['status', '--porcelain', '-z', '--untracked-files=all', '--', ':/', ...ourPathspecs(s)]);
  return r.stdout.length > 0;
}

async function commitOutsideOurs(s: Session, message: string): Promise<void> {
  // (`add` with exclude pathspecs refuses when one names an ignored file: unstage ours instead.)
  await s.git.run(['add', '-A', '--', ':/']);
  await s.git.run(['reset', '-q', '--', ...ourPathspecs(s).map((p) => p.replace(':(top,exclude', ':(top'))], { allowFail: true });
  await s.git.run(['commit', '-q', '--no-verify', '-m', message]);
}
