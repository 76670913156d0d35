// Ending an attempt that failed: the task's on_failure.cleanup runs in its worktree (a failing
// cleanup is logged, never fatal), then the failure is recorded and the worktree discarded.
import type { Category } from '../log/logLine';
import { escapedMessage } from '../process/runProcess';
import type { Task } from '../taskFile/schema';
import { formatErrorEntry } from '../tasks/errorEntry';
import { lastMeaningfulLine } from './agentOutput';
import type { Session } from './session';
import type { TaskTerminal } from './types';

export async function discardAttempt(
  s: Session,
  task: Task,
  worktree: string,
  terminal: TaskTerminal,
  failure: { category: Category; reason: string; tail?: string | undefined; discardReason: string },
): Promise<'failed'> {
  await runCleanup(s, task, worktree, terminal);
  await s.failTask(task, failure.category, failure.reason, failure.tail, failure.discardReason);
  terminal.write(`\r\n[launchpad] ${task.id} failed: ${formatErrorEntry(failure.category, failure.reason)}\r\n`);
  terminal.close('failed');
  return 'failed';
}

/** The task's on_failure.cleanup in `dir` (its worktree, or the main working tree in place): a failure is a WARN line. */
export async function runCleanup(s: Session, task: Task, dir: string, terminal: TaskTerminal): Promise<void> {
  const cleanup = task.on_failure?.cleanup?.trim();
  if (cleanup && !s.stopping) {
    terminal.write(`\r\n$ ${cleanup}   (on_failure.cleanup)\r\n`);
    const r = await terminal.run('cleanup', {
      command: cleanup,
      cwd: s.projectDirIn(dir),
      timeoutMs: s.config.cleanupTimeoutMs,
      signal: s.stopSignal,
      captureBytes: 8 * 1024,
      record: { records: s.records, name: `${task.id}.cleanup`, label: `cleanup of ${task.id}` },
    });
    if (r.escaped) s.log({ type: 'WARN', taskId: task.id, message: escapedMessage('on_failure.cleanup', r.escaped) });
    if (r.code !== 0) {
      const why = r.timedOut ? `timed out after ${s.config.cleanupTimeoutMs / 1000}s` : `exited with ${r.code ?? r.signal}`;
      const last = r.spawnError ?? lastMeaningfulLine(r.tail);
      s.log({ type: 'WARN', taskId: task.id, message: `on_failure.cleanup ${why}: ${cleanup}${last ? ` (${last})` : ''}` });
    }
  }
}
