// Running a task's validation command in its worktree: the only proof a task is done. A program
// that cannot run, or output that cannot be written, is the machine's failure (EnvFailureError),
// never the task's; a task without a command is a configuration error (TaskConfigError).
import type { Category } from '../log/logLine';
import { escapedMessage } from '../process/runProcess';
import type { AttemptPaths } from '../statePaths';
import { DEFAULT_VALIDATION_TIMEOUT_S, type Task } from '../taskFile/schema';
import { explainMissingDependencies } from '../worktrees/missingDeps';
import { lastMeaningfulLine } from './agentOutput';
import { EnvFailureError, programProblem, startFailure, unrunnableProgram, writeFailure } from './envFailure';
import { TaskConfigError } from './envStop';
import { checkProgram, firstProgram } from './programCheck';
import { guardProtectedPaths, protectedPathsOf } from './protectedPaths';
import type { Session } from './session';
import type { TaskTerminal } from './types';

export type ValidationResult =
  { kind: 'pass' } | { kind: 'fail'; category: Category; reason: string; tail: string } | { kind: 'interrupted' };

/** Output kept in memory per process; the full output is in the attempt's transcript. */
export const CAPTURE_BYTES = 64 * 1024;

/**
 * The task's validation in `worktree`, on the protected paths as `base` (the commit its work
 * started from) has them; work that changed them fails without running it.
 */
export async function validateTask(
  s: Session,
  task: Task,
  worktree: string,
  terminal: TaskTerminal,
  attempt: AttemptPaths,
  base: string,
): Promise<ValidationResult> {
  const command = task.validation?.command?.trim();
  if (!command) {
    throw new TaskConfigError(
      `harness-tasks.json: task ${task.id} has no validation.command (tasks[].validation.command); add one, e.g. launchpad add --validate, or edit the file`,
    );
  }
  const timeoutS = task.validation?.timeout_seconds ?? DEFAULT_VALIDATION_TIMEOUT_S;
  const cwd = s.projectDirIn(worktree);
  const changed = await guardProtectedPaths(s.git, cwd, base, protectedPathsOf(task, s.config.protectedPaths));
  if (changed) return { kind: 'fail', category: 'TEST_FAIL', reason: changed, tail: '' };
  const env = { ...process.env, LAUNCHPAD_TASK_ID: task.id, LAUNCHPAD_WORKTREE: worktree };
  const missing = await checkProgram(command, cwd, env);
  if (missing) throw new EnvFailureError(programProblem('validation command', missing.program, missing.problem));
  terminal.write(`\r\n$ ${command}\r\n`);
  const ports = await s.ports.lease(task.id);
  const r = await terminal
    .run('validation', {
      command,
      cwd,
      env: { ...env, ...ports.env },
      timeoutMs: timeoutS * 1000,
      signal: s.stopSignal,
      transcript: attempt.validationLog,
      captureBytes: CAPTURE_BYTES,
      record: { records: s.records, name: `${task.id}.validation`, label: `validation of ${task.id}` },
    })
    .finally(ports.release);
  if (r.escaped) s.log({ type: 'WARN', taskId: task.id, message: escapedMessage('validation', r.escaped) });
  if (r.aborted && s.stopping) return { kind: 'interrupted' };
  if (r.transcriptError) throw new EnvFailureError(writeFailure(attempt.validationLog, r.transcriptError));
  if (r.spawnError) throw new EnvFailureError(startFailure('validation command', r.spawnError, cwd));
  // The shell could not run the command's own first program (removed since the check); a
  // program the command runs later that is missing is the command failing, as it would by hand.
  const unrunnable = unrunnableProgram(r.code, r.tail);
  if (unrunnable && unrunnable.program === firstProgram(command)) {
    throw new EnvFailureError(programProblem('validation command', unrunnable.program, unrunnable.problem));
  }
  const verdict = r.timedOut ? 'TIMEOUT' : r.code === 0 ? 'PASS' : 'FAIL';
  s.log({ type: 'VALIDATE', taskId: task.id, message: `command="${command}" result=${verdict}` });
  s.taskEvents.fire({ taskId: task.id, kind: 'validated' });
  if (verdict === 'PASS') return { kind: 'pass' };
  if (r.timedOut) {
    return { kind: 'fail', category: 'TIMEOUT', reason: `Validation timed out after ${timeoutS}s: ${command}`, tail: r.tail };
  }
  const last = r.spawnError ?? lastMeaningfulLine(r.tail);
  const reason = `${command} exited with ${r.code ?? r.signal}${last ? `: ${last}` : ''}`;
  return {
    kind: 'fail',
    category: 'TEST_FAIL',
    reason: explainMissingDependencies(s, s.projectDirIn(worktree), reason, r.tail),
    tail: r.tail,
  };
}
