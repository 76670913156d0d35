// Running a task's validation command in its worktree: the only proof a task is done.
import type { Category } from '../log/logLine';
import type { AttemptPaths } from '../statePaths';
import type { Task } from '../taskFile/schema';
import { lastMeaningfulLine } from './agentOutput';
import { DEFAULT_VALIDATION_TIMEOUT_S } from './runConfig';
import type { Session } from './session';
import type { TaskTerminal } from './types';
import { explainMissingDependencies } from '../worktrees/missingDeps';

export type ValidationResult =
  | { kind: 'pass' }
  | { kind: 'fail'; category: Category; reason: string; tail: string }
  | { kind: 'interrupted' };

/** Output kept in memory per process; the full output is in the attempt's transcript. */
export const CAPTURE_BYTES = 64 * 1024;

export async function validateTask(s: Session, task: Task, worktree: string, terminal: TaskTerminal, attempt: AttemptPaths): Promise<ValidationResult> {
  const command = task.validation?.command?.trim();
  if (!command) {
    return { kind: 'fail', category: 'CONFIG', reason: 'Missing validation.command', tail: '' };
  }
  const timeoutS = task.validation?.timeout_seconds ?? DEFAULT_VALIDATION_TIMEOUT_S;
  terminal.write(`\r\n$ ${command}\r\n`);
  const ports = await s.ports.lease(task.id);
  const r = await terminal
    .run('validation', {
      command,
      cwd: s.projectDirIn(worktree),
      env: { ...process.env, ...ports.env, LAUNCHPAD_TASK_ID: task.id, LAUNCHPAD_WORKTREE: worktree },
      timeoutMs: timeoutS * 1000,
      signal: s.stopSignal,
      transcript: attempt.validationLog,
      captureBytes: CAPTURE_BYTES,
      record: { records: s.records, name: `${task.id}.validation`, label: `validation of ${task.id}` },
    })
    .finally(ports.release);
  if (r.aborted && s.stopping) return { kind: 'interrupted' };
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
