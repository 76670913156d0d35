// session_config.worktree_setup: a command run in each new task worktree before its agent
// (`npm ci`, `pip install -r requirements.txt`), with its own time limit, its output in the
// attempt's setup.log and one INIT line. A worktree that cannot be set up is the machine's
// failure (ENV_SETUP), not the task's: the attempt is not charged, and the session stops, since
// every other worktree would fail the same way.
import type { AttemptPaths } from '../statePaths';
import type { Task } from '../taskFile/schema';
import { lastMeaningfulLine } from './agentOutput';
import type { TaskEnd } from './merge';
import type { Session } from './session';
import type { TaskTerminal } from './types';

/** Why a worktree could not be set up, and what a person does about it. */
export interface SetupFailure {
  cause: string;
  advice: string;
}

export type SetupResult = { kind: 'pass' } | { kind: 'fail'; failure: SetupFailure } | { kind: 'interrupted' };

/** Output kept in memory for the failure's reason; all of it is in setup.log. */
const CAPTURE_BYTES = 64 * 1024;

/**
 * Runs worktree_setup in the task's project folder inside `worktree`, with `env` (the task's
 * ports) and LAUNCHPAD_MAIN_WORKTREE (the main checkout, for a script that links or copies from it).
 */
export async function runWorktreeSetup(
  s: Session,
  task: Task,
  worktree: string,
  terminal: TaskTerminal,
  attempt: AttemptPaths,
  env: Record<string, string>,
): Promise<SetupResult> {
  const command = s.config.worktreeSetup;
  if (!command) return { kind: 'pass' };
  const timeoutMs = s.config.worktreeSetupTimeoutMs;
  terminal.write(`\r\n$ ${command}   (worktree_setup)\r\n`);
  const r = await terminal.run('setup', {
    command,
    cwd: s.projectDirIn(worktree),
    env: { ...process.env, ...env, LAUNCHPAD_TASK_ID: task.id, LAUNCHPAD_WORKTREE: worktree, LAUNCHPAD_MAIN_WORKTREE: s.toplevel },
    timeoutMs,
    signal: s.stopSignal,
    transcript: attempt.setupLog,
    captureBytes: CAPTURE_BYTES,
    record: { records: s.records, name: `${task.id}.setup`, label: `worktree setup of ${task.id}` },
  });
  if (r.aborted && s.stopping) return { kind: 'interrupted' };
  const verdict = r.timedOut ? 'TIMEOUT' : r.code === 0 ? 'PASS' : 'FAIL';
  s.log({
    type: 'INIT',
    taskId: task.id,
    message: `worktree_setup command="${command}" result=${verdict} (${(r.durationMs / 1000).toFixed(1)}s)`,
  });
  if (verdict === 'PASS') return { kind: 'pass' };
  const why = r.timedOut
    ? `timed out after ${timeoutMs / 1000}s (session_config.worktree_setup_timeout_seconds)`
    : r.spawnError
      ? `could not start: ${r.spawnError}`
      : `exited with ${r.code ?? r.signal}`;
  const last = r.timedOut || r.spawnError ? undefined : lastMeaningfulLine(r.tail);
  return {
    kind: 'fail',
    failure: {
      cause: `worktree_setup "${command}" ${why}${last ? `: ${last}` : ''}`,
      advice: `fix session_config.worktree_setup or what it needs (its output: ${attempt.setupLog})`,
    },
  };
}

/**
 * The task's worktree could not be set up (ENV_SETUP): the attempt is not charged — the task is
 * back as it was before its dispatch (transitions.undoDispatch) —, its worktree goes, and the
 * session stops with the cause and what to do. The task's error_log is left alone: the next
 * agent has nothing to learn from it.
 */
export async function worktreeSetupFailed(s: Session, before: Task, terminal: TaskTerminal, failure: SetupFailure): Promise<TaskEnd> {
  s.stopForEnvironment({
    category: 'ENV_SETUP',
    cause: `the worktree of ${before.id} could not be set up: ${failure.cause}`,
    advice: failure.advice,
  });
  // The worktree goes before the task is given back: another worker may claim it then.
  await s
    .removeWorktree(before.id, s.fenceOf(before.id))
    .catch((err: Error) => s.logger.warn(`could not remove the worktree of ${before.id}: ${err.message}`));
  let recorded = true;
  try {
    await s.giveBack(before);
  } catch (err) {
    recorded = false;
    s.logger.warn(`could not record that ${before.id}'s attempt is not charged: ${(err as Error).message}`);
  }
  s.log({
    type: 'ERROR',
    taskId: before.id,
    category: 'ENV_SETUP',
    message: `${failure.cause} (not charged${recorded ? '' : '; harness-tasks.json could not be updated'})`,
  });
  s.taskEvents.fire({ taskId: before.id, kind: 'interrupted' });
  terminal.write(
    `\r\n[launchpad] ${before.id}: the worktree could not be set up: ${failure.cause}\r\n[launchpad] to fix: ${failure.advice}\r\n`,
  );
  terminal.close('interrupted');
  return 'interrupted';
}
