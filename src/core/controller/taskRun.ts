// One task from dispatch to its end: claim it, give it a worktree on harness-<id> from the base
// branch's head, run the agent with the prompt, record its verdict, validate in the worktree, and
// merge (through the merge queue) or discard. A resumed attempt (recovery.ts decides) skips the
// worktree: the agent continues in the one the interrupted attempt left; so does the attempt
// after a person answered an agent's question, in the worktree the asking attempt left. An agent
// that asks a question leaves its task awaiting an answer, its work kept, the attempt given back.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';

import { assertFence, type AttemptFence, markWorktreeOwner } from '../attempt/lifecycle';
import { escapeControlChars } from '../controlChars';
import { branchFor } from '../ids';
import type { Category } from '../log/logLine';
import type { ProcessResult } from '../process/runProcess';
import { isOwnPath } from '../statePaths';
import type { Task, TaskFile } from '../taskFile/schema';
import { taskWithId } from '../tasks/taskIndex';
import { awaitsResume, type ClaimToken, dispatchTask, resumeTask, reviewDecision } from '../tasks/transitions';
import { type AgentVerdict, noVerdictReason } from './agentOutput';
import { runAgent } from './agentRun';
import { chargedOverloadMessage, limitThatEnded, stopForLimit } from './budget';
import { discardAttempt } from './discard';
import { classifyExit, diskSpaceNote, programProblem, startFailure, worktreeFailure, writeFailure } from './envFailure';
import { endUncharged, giveBackLostWorktree, stopForEnvironment, worktreeLost } from './envStop';
import { mergeTask, type TaskEnd } from './merge';
import type { MergeQueue } from './mergeQueue';
import { prepareWorktree, type WorktreeOrigin } from './prepare';
import { checkProgram } from './programCheck';
import { buildPrompt, type ResumeContext } from './prompt';
import { protectedPathsOf } from './protectedPaths';
import type { Session } from './session';
import { STOPPED_BY_PERSON } from './taskStops';
import type { TaskTerminal } from './types';
import { validateTask } from './validate';
import { worktreeSetupFailed } from './worktreeSetup';

/** An interrupted attempt to take over, as recovery found it. */
export interface Resume extends ResumeContext {
  /** The worktree it left (kept, with its commits and uncommitted changes). */
  worktree: string;
  /** The base branch's commit its branch started from. */
  base: string;
}

/** A dispatched attempt (transitions.dispatchTask): who runs it, from which base commit. */
export interface ClaimedTask {
  agentId: string;
  base: string;
  /** The task as it was before the dispatch. */
  before: Task;
  attempt: number;
  /** Concurrent mode: the worker's claim on it. */
  token?: ClaimToken | undefined;
}

/** Dispatches the task inside the caller's transaction: the run loop claims a batch with its pool. */
export function claimTask(s: Session, file: TaskFile, taskId: string): ClaimedTask {
  const agentId = newAgentId();
  const t = taskWithId(file.tasks, taskId);
  // The attempt after an answer or a review continues the same branch: its base stays.
  const base = t && (awaitsResume(t) || reviewDecision(t)) && t.started_at_commit ? t.started_at_commit : s.state.head;
  const claim = dispatchTask(file, taskId, { agentId, branch: branchFor(taskId), baseCommit: base, worker: s.worker });
  return { agentId, base, ...claim };
}

/**
 * Continues an interrupted attempt inside the caller's transaction (transitions.resumeTask): only
 * while the task still names the attempt the recovery found (`found`).
 */
function resumeClaim(file: TaskFile, taskId: string, resume: Resume, found: AttemptFence | undefined): ClaimedTask {
  if (found) assertFence(file, found);
  const agentId = newAgentId();
  return { agentId, base: resume.base, ...resumeTask(file, taskId, agentId) };
}

function newAgentId(): string {
  return `agent_${randomBytes(4).toString('hex')}`;
}

/**
 * One attempt of the task, from its dispatch to its end: `claimed` when the dispatch is already
 * recorded (the run loop claims its batch with the pool), `resume` for an interrupted attempt.
 */
export async function runTask(s: Session, task: Task, merges: MergeQueue, resume?: Resume, claimed?: ClaimedTask): Promise<TaskEnd> {
  try {
    return await runAttempt(s, task, merges, resume, claimed);
  } finally {
    // The task's port block is free again once its run has ended, whichever way.
    s.ports.releaseTask(task.id);
  }
}

async function runAttempt(s: Session, task: Task, merges: MergeQueue, resume?: Resume, claimed?: ClaimedTask): Promise<TaskEnd> {
  const branch = branchFor(task.id);
  let worktree = resume?.worktree ?? s.worktreePath(task.id);
  const { agentId, base, before, attempt, token } =
    claimed ??
    (await s.transact((file) => (resume ? resumeClaim(file, task.id, resume, s.fenceOf(task.id)) : claimTask(s, file, task.id))));
  s.worker?.hold(token);
  // Every effect of this attempt from here on is checked against its fence.
  const fence: AttemptFence = { taskId: task.id, agentId, generation: (token ?? s.worker?.tokenOf(task.id))?.generation };
  s.drive(fence);
  // A person answered its question, or reviewed its change: it goes on in the same worktree.
  const decision = resume ? undefined : reviewDecision(before);
  const after = resume ? undefined : continuesAfter(before);
  const resumed = resume
    ? ` resuming=attempt-${resume.interruptedAttempt}`
    : decision === 'approved'
      ? ` approved=round-${before.review_round!.number}`
      : after
        ? ` ${continuationText(before, after)}`
        : '';
  s.log({
    type: 'DISPATCH',
    taskId: task.id,
    message: `agent=${agentId} worktree=${branch}${token ? ` ${claimText(s, token.generation)}` : ''}${resumed}`,
  });
  s.taskEvents.fire({ taskId: task.id, kind: 'dispatched' });

  const terminal = s.terminals.open(task, worktree);
  const fail = (category: Category, reason: string, discardReason: string, tail?: string) =>
    discardAttempt(s, before, worktree, terminal, { category, reason, tail, discardReason });
  if (decision === 'approved') return mergeApproved(s, before, merges, { worktree, terminal, attempt, agentId, base, fence });
  // A person's stop before the agent gave its verdict: the task stays in progress, and the next
  // run continues the same attempt (or gives it back, when it left nothing).
  const stopped = () => interrupted(terminal);

  // While its worktree is made and set up, the pool makes no new worktree of its own: the two
  // would write the same files to the same disk at once (WorktreePool.startDispatch).
  const dispatchEnds = s.pool.startDispatch();
  const setUp = await (async () => {
    let from: WorktreeOrigin;
    try {
      if (after) {
        resume = await continuedResume(s, before, worktree, base, fence, after);
        worktree = resume?.worktree ?? worktree;
      }
      // A resumed attempt continues in the worktree it left, set up already.
      from = resume ? { kind: 'resumed', after: resume.after } : await createWorktree(s, task.id, worktree, branch, base, fence);
      markWorktreeOwner(worktree, fence);
    } catch (err) {
      return {
        ready: false as const,
        end: await stopForEnvironment(s, before, worktreeFailure(worktree, err, diskSpaceNote(s.config.worktreeRoot)), terminal, {
          agentRan: false,
        }),
      };
    }
    if (s.stopping) return { ready: false as const, end: stopped() };

    const files = s.createAttempt(task.id, attempt, agentId);
    const prompt = buildPrompt(
      before,
      { worktree, branch, baseBranch: s.baseBranch, protectedPaths: protectedPathsOf(before, s.config.protectedPaths) },
      resume,
    );
    writeFileSync(files.prompt, prompt);
    const ready = await prepareWorktree(s, before, worktree, terminal, files, from);
    if (ready.kind === 'interrupted') return { ready: false as const, end: stopped() };
    if (ready.kind === 'failed') return { ready: false as const, end: await worktreeSetupFailed(s, before, terminal, ready.failure) };
    return { ready: true as const, files, prompt, env: ready.env };
  })().finally(dispatchEnds);
  if (!setUp.ready) return setUp.end;
  const { files, prompt } = setUp;
  terminal.write(`[launchpad] ${task.id} attempt ${attempt}: ${s.config.agentCommand}\r\n`);

  const agentCwd = s.projectDirIn(worktree);
  const agentEnv = {
    ...process.env,
    ...setUp.env,
    LAUNCHPAD_TASK_ID: task.id,
    LAUNCHPAD_TASK_TITLE: task.title,
    LAUNCHPAD_PROMPT_FILE: files.prompt,
    LAUNCHPAD_WORKTREE: worktree,
    LAUNCHPAD_BRANCH: branch,
    LAUNCHPAD_ATTEMPT: String(attempt),
  };
  const missing = await checkProgram(s.config.agentCommand!, agentCwd, agentEnv);
  if (missing)
    return stopForEnvironment(s, before, programProblem('agent command', missing.program, missing.problem), terminal, { agentRan: false });
  const { agent, verdict, report } = await runAgent(s, task, terminal, files, { cwd: agentCwd, env: agentEnv, prompt });
  if (agent.aborted && s.stopping) return stopped();
  // Whatever the agent said, a worktree removed from under it is not the task's failure.
  if (worktreeLost(worktree, fence)) return giveBackLostWorktree(s, before, worktree, terminal);
  // Before the machine's faults: a tool out of quota often exits non-zero with no work done.
  const limit = limitThatEnded(report, verdict.kind);
  if (limit && !s.spending.chargesLimit(task.id, limit)) return stopForLimit(s, before, report!.preset, limit, terminal);
  if (limit) s.log({ type: 'WARN', taskId: task.id, message: chargedOverloadMessage(report!.preset, limit) });
  else s.spending.noLimit(task.id);
  // A person's stop of this agent (taskStops.ts) is its attempt's end, not the machine's.
  const machine = agent.aborted
    ? undefined
    : agent.transcriptError
      ? writeFailure(files.transcript, agent.transcriptError)
      : agent.spawnError
        ? startFailure('agent command', agent.spawnError, agentCwd)
        : verdict.kind === 'none' && (await noWork(s, worktree, base, branch))
          ? classifyExit(agent.code, agent.tail, 'agent command')
          : undefined;
  const end = agentEnd(verdict, agent, s.config.agentTimeoutMs);
  if (machine) {
    // The agent said it succeeded before the machine failed: that verdict is kept (when it can
    // be written), so the next run validates and merges its work instead of running it again.
    if (end.kind === 'success') {
      try {
        files.recordVerdict(agentId, end);
      } catch {
        // Not written: the next run resumes the agent instead.
      }
    }
    return stopForEnvironment(s, before, machine, terminal);
  }

  // The verdict is recorded before anything else: a recovery merges only what it says succeeded.
  files.recordVerdict(agentId, end.kind === 'fail' ? { kind: 'fail', category: end.category, reason: end.reason } : end);
  const result = end.kind === 'fail' ? 'error' : end.kind;
  s.log({ type: 'AGENT_DONE', taskId: task.id, message: `agent=${agentId} result=${result}` });
  s.taskEvents.fire({ taskId: task.id, kind: 'agent-done' });
  if (end.kind === 'fail') return fail(end.category, end.reason, end.discardReason, end.tail);
  if (end.kind === 'question') return awaitAnswer(s, before, worktree, terminal, attempt, base, end.text);

  const problem = await inspectWork(s, before, worktree, base, { commitLeftovers: true, warnIfEmpty: true });
  if (problem) return fail('AGENT_FAIL', problem, 'agent reported failure');
  files.markWorkCommitted(agentId);

  let validation;
  try {
    validation = await validateTask(s, before, worktree, terminal, files, base);
  } catch (err) {
    const end = endUncharged(s, before, err, terminal);
    if (end) return end;
    throw err;
  }
  if (validation.kind === 'interrupted') return interrupted(terminal);
  if (validation.kind === 'fail') {
    if (worktreeLost(worktree, fence)) return giveBackLostWorktree(s, before, worktree, terminal);
    return discardAttempt(s, before, worktree, terminal, { ...validation, discardReason: 'validation failed' });
  }
  return merges.enqueue(task.id, () => mergeTask(s, before, worktree, terminal, files));
}

type AgentEnd =
  | { kind: 'success' }
  | { kind: 'question'; text: string }
  | { kind: 'fail'; category: Category; reason: string; discardReason: string; tail?: string };

/** How the agent ended: its RESULT line, unless it timed out or never started. */
function agentEnd(verdict: AgentVerdict, agent: ProcessResult, timeoutMs: number): AgentEnd {
  // Aborted while the session goes on: a person stopped this agent.
  if (agent.aborted)
    return { kind: 'fail', category: 'AGENT_FAIL', reason: STOPPED_BY_PERSON, discardReason: 'stopped by a person', tail: agent.tail };
  if (agent.timedOut)
    return {
      kind: 'fail',
      category: 'TIMEOUT',
      reason: `Agent timed out after ${timeoutMs / 1000}s`,
      discardReason: 'agent timed out',
      tail: agent.tail,
    };
  if (agent.spawnError)
    return {
      kind: 'fail',
      category: 'AGENT_FAIL',
      reason: `could not start the agent: ${agent.spawnError}`,
      discardReason: 'agent reported failure',
    };
  if (verdict.kind === 'fail')
    return { kind: 'fail', category: 'AGENT_FAIL', reason: verdict.reason, discardReason: 'agent reported failure', tail: agent.tail };
  if (verdict.kind === 'question') return verdict;
  if (verdict.kind === 'none') {
    return {
      kind: 'fail',
      category: 'AGENT_FAIL',
      reason: noVerdictReason(agent, agent.tail),
      discardReason: 'agent reported failure',
      tail: agent.tail,
    };
  }
  return { kind: 'success' };
}

/** Nothing done in the worktree: no commit on its branch since `base`, no change left in it. */
async function noWork(s: Session, worktree: string, base: string, branch: string): Promise<boolean> {
  try {
    return (await s.git.countCommits(`${base}..refs/heads/${branch}`)) === 0 && !(await s.git.anyChanges(worktree)).length;
  } catch {
    return false;
  }
}

function interrupted(terminal: TaskTerminal): TaskEnd {
  terminal.write('\r\n[launchpad] stopped: the task stays in progress for the next run to recover\r\n');
  terminal.close('interrupted');
  return 'interrupted';
}

/**
 * The agent asked a question: what it left uncommitted is committed (as after a success) and its
 * commits kept under refs/launchpad/attempts/, then the task awaits an answer, the attempt given
 * back (Session.awaitAnswer). The worktree and branch stay for the attempt after the answer.
 * Work that touches the controller's state files fails the attempt, as after a success.
 */
export async function awaitAnswer(
  s: Session,
  task: Task,
  worktree: string,
  terminal: TaskTerminal,
  attempt: number,
  base: string,
  text: string,
): Promise<TaskEnd> {
  const problem = await inspectWork(s, task, worktree, base, { commitLeftovers: true, warnIfEmpty: false });
  if (problem)
    return discardAttempt(s, task, worktree, terminal, {
      category: 'AGENT_FAIL',
      reason: problem,
      discardReason: 'agent reported failure',
    });
  const kept = await s.keepAttempt(task.id, attempt);
  await s.awaitAnswer(task, text, kept);
  terminal.write(
    `\r\n[launchpad] ${task.id} asks: ${escapeControlChars(text)}\r\n[launchpad] its worktree is kept; answer with: launchpad answer ${task.id} "…"\r\n`,
  );
  terminal.close('interrupted');
  return 'awaiting-answer';
}

/** Whether the task's next attempt continues after a person's answer or requested changes (an approval is not a turn). */
export function continuesAfter(task: Task): 'answer' | 'review' | undefined {
  return awaitsResume(task) ? 'answer' : reviewDecision(task) === 'changes_requested' ? 'review' : undefined;
}

/** `answered=attempt-1` or `review=round-1`, as the DISPATCH line shows such a turn. */
export function continuationText(task: Task, after: 'answer' | 'review'): string {
  return after === 'answer' ? `answered=attempt-${task.question!.attempt}` : `review=round-${task.review_round!.number}`;
}

/**
 * Where the attempt after an answer or a review continues: the earlier attempt's worktree, or one
 * made again from its branch when only the branch is left. Undefined when neither is (a new
 * worktree then; the question and the answer, or the review's comments, are still in its prompt).
 */
export async function continuedResume(
  s: Session,
  task: Task,
  worktree: string,
  base: string,
  fence: AttemptFence,
  after: 'answer' | 'review',
): Promise<Resume | undefined> {
  const path = await reviewedWorktree(s, task, worktree, fence);
  if (!path) return undefined;
  return {
    after,
    worktree: path,
    base,
    interruptedAttempt: after === 'answer' ? (task.question?.attempt ?? task.attempts) : task.attempts + 1,
    commits: await s.git.commitSubjects(`${base}..refs/heads/${branchFor(task.id)}`),
    uncommitted: await s.git.anyChanges(path),
  };
}

/** The worktree of the task's branch: where it is, or made again at `worktree` from the branch; undefined without a branch. */
async function reviewedWorktree(s: Session, task: Task, worktree: string, fence: AttemptFence): Promise<string | undefined> {
  const branch = branchFor(task.id);
  const listed = (await s.git.listWorktrees()).find((w) => w.branch === `refs/heads/${branch}`);
  if (listed) return listed.path;
  if (!(await s.git.branchExists(branch))) return undefined;
  await s.git.addWorktreeForBranch(worktree, branch, { whileLocked: () => markWorktreeOwner(worktree, fence) });
  return worktree;
}

/**
 * A person approved the change under review: no agent runs. What it left uncommitted is not
 * part of what was reviewed and is kept aside; the validation runs again on the branch (the base
 * moved meanwhile), and the merge queue merges it. A branch that moved since the review is
 * reviewed again instead (merge.ts): only the reviewed commit merges.
 */
async function mergeApproved(
  s: Session,
  before: Task,
  merges: MergeQueue,
  a: { worktree: string; terminal: TaskTerminal; attempt: number; agentId: string; base: string; fence: AttemptFence },
): Promise<TaskEnd> {
  const { terminal, fence } = a;
  let worktree: string | undefined;
  try {
    worktree = await reviewedWorktree(s, before, a.worktree, fence);
  } catch (err) {
    return stopForEnvironment(s, before, worktreeFailure(a.worktree, err, diskSpaceNote(s.config.worktreeRoot)), terminal, {
      agentRan: false,
    });
  }
  if (!worktree)
    return discardAttempt(s, before, a.worktree, terminal, {
      category: 'AGENT_FAIL',
      reason: `its approved branch ${branchFor(before.id)} is gone; the next attempt starts afresh`,
      discardReason: 'approved branch gone',
    });
  markWorktreeOwner(worktree, fence);
  const files = s.createAttempt(before.id, a.attempt, a.agentId);
  // What was approved stands as this attempt's verdict: a recovery validates and merges it, never runs an agent.
  files.recordVerdict(a.agentId, { kind: 'success' });
  files.markWorkCommitted(a.agentId);
  terminal.write(`[launchpad] ${before.id}: approved in review round ${before.review_round!.number}; validating and merging\r\n`);
  const left = await s.git.anyChanges(worktree);
  if (left.length) {
    const snapshot = await s.git.snapshotChanges(worktree, `[${before.id}] changes made after its review (not merged)`);
    const kept = snapshot ? await s.keepAttempt(before.id, a.attempt, snapshot) : undefined;
    await s.git.run(['reset', '--hard', '-q'], { cwd: worktree });
    await s.git.run(['clean', '-fdq'], { cwd: worktree });
    s.log({
      type: 'WARN',
      taskId: before.id,
      message: `${left.length} uncommitted change(s) in its worktree are not part of the reviewed commit and are not merged${kept ? `; kept=${kept}` : ''}`,
    });
  }
  let validation;
  try {
    validation = await validateTask(s, before, worktree, terminal, files, a.base);
  } catch (err) {
    const end = endUncharged(s, before, err, terminal);
    if (end) return end;
    throw err;
  }
  if (validation.kind === 'interrupted') return interrupted(terminal);
  if (validation.kind === 'fail')
    return discardAttempt(s, before, worktree, terminal, { ...validation, discardReason: 'validation failed' });
  return merges.enqueue(before.id, () => mergeTask(s, before, worktree, terminal, files));
}

/**
 * A worktree on a new branch from `base`: a prepared one from the pool when there is one, else a
 * new one; leftovers of an earlier attempt are removed first.
 */
export async function createWorktree(
  s: Session,
  taskId: string,
  worktree: string,
  branch: string,
  base: string,
  fence: AttemptFence,
): Promise<WorktreeOrigin> {
  // The last attempt's worktree may still be being removed (Session.removeWorktreeSoon).
  await s.removalOf(taskId);
  const prepared = await s.pool.take(worktree, branch, base);
  if (prepared) return { kind: 'pool', preparedAt: prepared.preparedAt };
  // Marked as the attempt's before any other worktree command runs: a stale attempt's removal
  // never finds it unmarked.
  const whileLocked = () => markWorktreeOwner(worktree, fence);
  try {
    await s.git.addWorktree(worktree, branch, base, { whileLocked });
  } catch {
    await s.discardWorktree(taskId);
    await s.git.addWorktree(worktree, branch, base, { whileLocked });
  }
  return { kind: 'new' };
}

/**
 * After a successful agent: commits what it left uncommitted (validation must judge what will
 * be merged), and refuses work that touches the controller's state files. Returns a problem.
 */
export async function inspectWork(
  s: Session,
  task: Task,
  worktree: string,
  base: string,
  opts: { commitLeftovers: boolean; warnIfEmpty: boolean },
): Promise<string | undefined> {
  const leftovers = opts.commitLeftovers ? await s.git.anyChanges(worktree) : [];
  if (leftovers.length) {
    await s.git.commitAll(worktree, `[${task.id}] ${task.title} (changes left uncommitted by the agent)`);
    s.log({ type: 'WARN', taskId: task.id, message: `agent left ${leftovers.length} uncommitted change(s); committed them` });
  }
  const changed = await s.git.changedFiles(base, 'HEAD', worktree);
  const sub = relative(s.toplevel, s.paths.root);
  const touched = changed.filter((f) => isOwnPath(f, sub));
  if (touched.length) return `agent modified the controller's state files: ${touched.join(', ')}`;
  if (!changed.length && opts.warnIfEmpty)
    s.log({ type: 'WARN', taskId: task.id, message: 'agent made no changes; validating the base as it is' });
  return undefined;
}

/** A concurrent worker's claim as a DISPATCH line shows it. */
export function claimText(s: Session, generation: number): string {
  return `worker=${s.worker!.workerId} claim=${generation}`;
}
