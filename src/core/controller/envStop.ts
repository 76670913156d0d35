// Ending an attempt that failed for a reason that is not the task's: the machine's (ENV_SETUP),
// which stops the session, or a configuration error (CONFIG), which does not. Neither is charged:
// the task returns to what it was before dispatch (transitions.undoDispatch) and its error_log is
// left alone.
import { existsSync } from 'node:fs';

import { runsOnQueue } from '../executor/types';
import { ExpectedError } from '../expectedErrors';
import { branchFor } from '../ids';
import type { Task } from '../taskFile/schema';
import { undoDispatch } from '../tasks/transitions';
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
 * in_progress, its attempts as before dispatch, and the next run's recovery validates and merges
 * it. Otherwise the task returns to its state before dispatch and the worktree goes.
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
  let recorded = true;
  try {
    await s.transact((file) => void undoDispatch(file, before.id, before, { keepWork }));
  } catch (err) {
    recorded = false;
    s.envUnrecorded.add(before.id);
    s.logger.warn(`could not record that ${before.id}'s attempt is not charged: ${(err as Error).message}`);
  }
  // A resumed attempt's worktree holds the interrupted attempt's work: it stays for the next run.
  if (!keepWork && before.status !== 'in_progress') await s.removeWorktree(before.id).catch(() => undefined);
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
  await s.transact((file) => void undoDispatch(file, before.id, before));
  if (before.status !== 'in_progress') await s.removeWorktree(before.id).catch(() => undefined);
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
  await s.transact((file) => void undoDispatch(file, before.id, before, { keepWork }));
  // A resumed attempt's worktree holds the interrupted attempt's work: it stays for the next run.
  if (!keepWork && before.status !== 'in_progress') await s.removeWorktree(before.id).catch(() => undefined);
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
