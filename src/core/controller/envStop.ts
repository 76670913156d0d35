// Ending an attempt that failed for a reason that is not the task's: the machine's (ENV_SETUP),
// which stops the session, or a configuration error (CONFIG), which does not. Neither is charged:
// the task returns to what it was before dispatch (transitions.undoDispatch) and its error_log is
// left alone.
import { existsSync } from 'node:fs';

import { type AttemptFence, mayRemoveWorktree, worktreeOwner } from '../attempt/lifecycle';
import { runsOnQueue } from '../executor/types';
import { ExpectedError } from '../expectedErrors';
import { keepAttempt } from '../git/keptAttempts';
import { branchFor } from '../ids';
import type { Task } from '../taskFile/schema';
import { classifyError, type EnvFailure } from './envFailure';
import type { TaskEnd } from './merge';
import type { Session } from './session';
import type { TaskTerminal } from './types';

/** A task's configuration cannot work (no validation command): named by file, task and field. */
export class TaskConfigError extends ExpectedError {
  constructor(message: string) {
    super(message);
    this.name = 'TaskConfigError';
  }
}

/**
 * The machine failed `before`'s attempt: nothing is charged, the session stops. Work the agent
 * did (commits on the task's branch, changes in its worktree) is kept: the task stays
 * in_progress, and the next run's recovery validates and merges it or continues the attempt. Otherwise the task returns to its state before dispatch and the worktree goes.
 */
export async function stopForEnvironment(
  s: Session,
  before: Task,
  failure: EnvFailure,
  terminal?: TaskTerminal,
  opts: { agentRan?: boolean } = {},
): Promise<TaskEnd> {
  s.stopForEnvironment(failure);
  // Before the agent ran, whatever the worktree holds (a half checkout on a full disk) is not work.
  const keepWork = opts.agentRan !== false && (await hasWork(s, before.id));
  // Its worktree goes before the task is given back: once given back, another worker may claim
  // it and make a worktree at the same path. A resumed attempt's worktree holds the interrupted
  // attempt's work: it stays for the next run.
  if (!keepWork && before.status !== 'in_progress') await s.removeWorktree(before.id, s.fenceOf(before.id)).catch(() => undefined);
  let recorded = true;
  try {
    await s.giveBack(before, { keepWork });
  } catch (err) {
    recorded = false;
    s.state.envUnrecorded.add(before.id);
    s.logger.warn(`could not record that ${before.id}'s attempt is not charged: ${(err as Error).message}`);
  }
  const kept = keepWork ? '; its committed work is kept for the next run' : '';
  s.log({
    type: 'ERROR',
    taskId: before.id,
    category: 'ENV_SETUP',
    message: `${failure.cause} (not charged${kept}${recorded ? '' : '; harness-tasks.json could not be updated'})`,
  });
  s.taskEvents.fire({ taskId: before.id, kind: 'interrupted' });
  terminal?.write(`\r\n[launchpad] stopped by the environment: ${failure.cause}\r\n[launchpad] to fix: ${failure.advice}\r\n`);
  terminal?.close('interrupted');
  return 'interrupted';
}

/**
 * A configuration error ended the attempt: not charged, the run goes on with the other tasks. A
 * dispatched task's worktree is discarded; a recovered one (in progress before) keeps its worktree
 * and its state for a run after the configuration is fixed.
 */
export async function returnForConfig(s: Session, before: Task, err: TaskConfigError, terminal?: TaskTerminal): Promise<TaskEnd> {
  if (before.status !== 'in_progress') await s.removeWorktree(before.id, s.fenceOf(before.id)).catch(() => undefined);
  await s.giveBack(before);
  s.log({ type: 'ERROR', taskId: before.id, category: 'CONFIG', message: `${err.message} (not charged)` });
  s.taskEvents.fire({ taskId: before.id, kind: 'interrupted' });
  terminal?.write(`\r\n[launchpad] ${err.message}\r\n`);
  terminal?.close('interrupted');
  return 'interrupted';
}

/**
 * How a task's run ends on an error that is not the task's: the machine's or its configuration.
 * Undefined when the error is neither (then it is the task's, or a bug).
 */
export function endUncharged(s: Session, before: Task, err: unknown, terminal?: TaskTerminal): Promise<TaskEnd> | undefined {
  if (err instanceof TaskConfigError) return returnForConfig(s, before, err, terminal);
  const failure = classifyError(err);
  return failure ? stopForEnvironment(s, before, failure, terminal) : undefined;
}

/**
 * A task whose run was interrupted by the session's stop for the machine's failure (its agent or
 * validation ended, or it never started): not charged either, since it was not the task's
 * failure. Its work, if any, stays for the next run's recovery. A task already handled (its
 * attempts as before dispatch) is left as it is.
 */
export async function releaseInterrupted(s: Session, before: Task): Promise<void> {
  const current = s.store.load().file.tasks.find((t) => t.id === before.id);
  // Dispatched by this session: one more attempt, or (when a stop already gave it back) another agent.
  const dispatched = current?.status === 'in_progress' && (current.attempts > before.attempts || current.agent_id !== before.agent_id);
  // An attempt published to a queue runs on another machine: the next run follows its job.
  if (!s.envFailure || !dispatched || runsOnQueue(current)) return;
  const keepWork = await hasWork(s, before.id);
  // A resumed attempt's worktree holds the interrupted attempt's work: it stays for the next run.
  if (!keepWork && before.status !== 'in_progress') await s.removeWorktree(before.id, s.fenceOf(before.id)).catch(() => undefined);
  await s.giveBack(before, { keepWork });
  const kept = keepWork ? '; its work is kept for the next run' : '';
  s.log({ type: 'WARN', taskId: before.id, message: `interrupted by the session's stop (${s.envFailure.cause}): not charged${kept}` });
}

/** Whether the task's attempt left work: commits on its branch since its base, or changes in its worktree. */
export async function hasWork(s: Session, taskId: string): Promise<boolean> {
  try {
    const base = s.store.load().file.tasks.find((t) => t.id === taskId)?.started_at_commit;
    const branch = `refs/heads/${branchFor(taskId)}`;
    if (!base) return false;
    const r = await s.git.run(['rev-list', '--count', `${base}..${branch}`], { allowFail: true });
    if (r.code === 0 && Number(r.stdout.trim()) > 0) return true;
    const worktree = s.worktreePath(taskId);
    return existsSync(worktree) && (await s.git.anyChanges(worktree)).length > 0;
  } catch {
    return false;
  }
}

/**
 * Whether the attempt's worktree was removed, or made another attempt's, while it ran: then
 * whatever failed in it (the agent, a git command, the validation) is not the task's failure.
 */
export function worktreeLost(worktree: string, fence: AttemptFence | undefined): boolean {
  return !existsSync(worktree) || (!!fence && !mayRemoveWorktree(worktree, fence));
}

/**
 * The attempt's worktree went from under it (a person removed it, or another worker made it its
 * own): the attempt is given back, its commits kept under a ref of ours, and the run goes on
 * without stopping: the task runs again from its base.
 */
export async function giveBackLostWorktree(s: Session, before: Task, worktree: string, terminal?: TaskTerminal): Promise<TaskEnd> {
  const fence = s.fenceOf(before.id);
  const owner = existsSync(worktree) ? worktreeOwner(worktree) : undefined;
  const what = owner ? `was made the worktree of another attempt (${owner.agentId ?? 'unknown agent'})` : 'was removed';
  const attempt = s.store.load().file.tasks.find((t) => t.id === before.id)?.attempts;
  // Given back only while the attempt is still the task's (a stale one is refused here). Nothing
  // of the worktree is left to remove first; its branch's commits are kept, then the branch goes
  // unless another attempt has it checked out.
  await s.giveBack(before);
  const kept = await s.keepAttempt(before.id, attempt).catch(() => undefined);
  if (!owner) await s.removeWorktree(before.id, fence).catch(() => undefined);
  const cause = `its worktree ${worktree} ${what} while the attempt ran`;
  s.log({
    type: 'WARN',
    taskId: before.id,
    message: `${cause}: not charged, the task runs again${kept ? `; the attempt's commits are kept as ${kept}` : ''}`,
  });
  s.note(`${before.id}: ${cause}; not charged. If something removes Launchpad's worktrees (a clean-up job, another tool), stop it.`);
  s.taskEvents.fire({ taskId: before.id, kind: 'interrupted' });
  terminal?.write(`\r\n[launchpad] ${cause}: not charged, the task runs again\r\n`);
  terminal?.close('interrupted');
  return 'interrupted';
}

/**
 * An effect of an attempt that is no longer the task's (another worker took it over, or a
 * recovery replaced it) was refused: nothing of it is applied. Its branch's commits are kept
 * under a ref of ours; the worktree and branch are left to the attempt that holds the task now.
 */
export async function refuseStale(s: Session, taskId: string, err: Error): Promise<TaskEnd> {
  const fence = s.fenceOf(taskId);
  s.release(taskId);
  const tip = await s.git.resolve(`refs/heads/${branchFor(taskId)}`).catch(() => undefined);
  const n = fence?.generation ?? s.store.load().file.tasks.find((t) => t.id === taskId)?.attempts ?? 0;
  const kept = tip ? await keepAttempt(s.git, taskId, n, tip, `refs/heads/${s.baseBranch}`).catch(() => undefined) : undefined;
  s.log({ type: 'WARN', taskId, message: `refused: ${err.message}; nothing of it applied${kept ? `, its commits kept as ${kept}` : ''}` });
  return 'interrupted';
}
