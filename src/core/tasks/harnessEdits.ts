// A person's edits to the harness as whole transactions, shared by the CLI and the extension:
// the task file changes under the state lock, then one log line says what happened.
import { closeSync, openSync, readSync } from 'node:fs';
import { ProgressLog } from '../log/progressLog';
import type { StateStore } from '../taskFile/store';
import type { Task } from '../taskFile/schema';
import { addTask, type NewTask } from './taskOps';
import { retryTask } from './transitions';

export async function addTaskLogged(store: StateStore, input: NewTask): Promise<Task> {
  const { task, session } = await store.transact((file) => ({
    task: addTask(file, input, highestTaskNumberAdded(store.paths.progress)),
    session: file.session_count,
  }));
  const details = [
    `priority=${task.priority}`,
    `depends_on=[${task.depends_on.join(', ')}]`,
    `files_hint=[${task.files_hint.join(', ')}]`,
    task.validation?.command ? `validation="${task.validation.command}"` : 'validation=none',
  ];
  new ProgressLog(store.paths.progress).append(session, {
    type: 'INIT',
    taskId: task.id,
    message: `task added: "${task.title}" ${details.join(' ')}`,
  });
  return task;
}

/**
 * The highest N of the "INIT [task-N] task added" lines of the log: the ids `add` handed out,
 * even those a restored backup or a hand edit took out of the task file. Read in chunks: the
 * log only grows.
 */
export function highestTaskNumberAdded(logFile: string): number {
  let fd: number;
  try {
    fd = openSync(logFile, 'r');
  } catch {
    return 0;
  }
  const added = /\] INIT \[task-(\d+)\] task added/g;
  let max = 0;
  let carry = '';
  try {
    const chunk = Buffer.allocUnsafe(1 << 20);
    for (let n; (n = readSync(fd, chunk, 0, chunk.length, null)) > 0; ) {
      // The tail of the previous chunk comes along, for a line cut in two (a match seen twice is harmless).
      const text = carry + chunk.toString('latin1', 0, n);
      for (const m of text.matchAll(added)) max = Math.max(max, Number(m[1]));
      carry = text.slice(-100);
    }
  } finally {
    closeSync(fd);
  }
  return max;
}

/** Retries a failed task (and unblocks its dependents); returns every task reset, the retried one included. */
export async function retryTaskLogged(store: StateStore, id: string): Promise<Task[]> {
  const { reset, session, previousAttempts } = await store.transact((file) => {
    const previousAttempts = file.tasks.find((t) => t.id === id)?.attempts ?? 0;
    return { reset: retryTask(file, id), session: file.session_count, previousAttempts };
  });
  new ProgressLog(store.paths.progress).append(
    session,
    ...reset.map((t) =>
      t.id === id
        ? { type: 'RECOVERY' as const, taskId: t.id, message: `action="retry" reason="requested by user" attempts_before=${previousAttempts}` }
        : { type: 'RECOVERY' as const, taskId: t.id, message: `action="unblocked" reason="retry of ${id}"` },
    ),
  );
  return reset;
}
