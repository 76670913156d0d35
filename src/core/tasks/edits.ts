// A person's edits to the task file as whole transactions, shared by the CLI and the extension:
// the task file changes under the state lock, then one log line per task says what happened.
import { closeSync, openSync, readSync } from 'node:fs';

import { ProgressLog } from '../log/progressLog';
import type { Task } from '../taskFile/schema';
import type { StateStore } from '../taskFile/store';
import { type ConfigKey, setConfigValue, unsetConfigValue } from './configOps';
import { blockedDependents } from './dag';
import { addTask, editTask, type FieldChange, type NewTask, removeTask, type TaskChanges } from './taskOps';
import { answerQuestion, retryTasks } from './transitions';

/**
 * A person's edits change a task or two: the unchanged tasks are shared with the store's parse
 * (draft.ts), and taskOps and transitions copy each task they change.
 */
export const SHARED = { sharedTasks: true } as const;

export async function addTaskLogged(store: StateStore, input: NewTask): Promise<Task> {
  const { task, session } = await store.transact(
    (file) => ({
      task: addTask(file, input, highestTaskNumberAdded(store.paths.progress)),
      session: file.session_count,
    }),
    SHARED,
  );
  const details = [
    `priority=${task.priority}`,
    `depends_on=[${task.depends_on.join(', ')}]`,
    `files_hint=[${task.files_hint.join(', ')}]`,
    ...(task.protected_paths?.length ? [`protected_paths=[${task.protected_paths.join(', ')}]`] : []),
    ...(task.review ? [`review=${task.review}`] : []),
    task.validation?.command ? `validation="${task.validation.command}"` : 'validation=none',
  ];
  log(store, session, { type: 'INIT', taskId: task.id, message: `task added: "${task.title}" ${details.join(' ')}` });
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
    for (let n; (n = readSync(fd, chunk, 0, chunk.length, null)) > 0;) {
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

/** Changes fields of a task; logs which, with their values before. Nothing is written or logged when nothing changed. */
export async function editTaskLogged(store: StateStore, id: string, changes: TaskChanges): Promise<{ task: Task; changed: FieldChange[] }> {
  const { result, session } = await store.transact(
    (file) => ({ result: editTask(file, id, changes), session: file.session_count }),
    SHARED,
  );
  if (result.changed.length) {
    const fields = result.changed.map((c) => `${c.field}=${showValue(c.after)} (was ${showValue(c.before)})`);
    log(store, session, { type: 'INIT', taskId: id, message: `task edited: ${fields.join(' ')}` });
  }
  return result;
}

export async function removeTaskLogged(
  store: StateStore,
  id: string,
  opts: { force?: boolean } = {},
): Promise<ReturnType<typeof removeTask>> {
  const { result, session } = await store.transact((file) => ({ result: removeTask(file, id, opts), session: file.session_count }), SHARED);
  const notes = [
    result.detached.length ? ` removed from depends_on of ${result.detached.join(', ')}` : '',
    result.unblocked.length ? ` unblocked ${result.unblocked.join(', ')}` : '',
  ].filter(Boolean);
  log(store, session, {
    type: 'INIT',
    taskId: id,
    message: `task removed: "${result.task.title}"${notes.length ? ';' + notes.join(';') : ''}`,
  });
  return result;
}

/**
 * Retries failed tasks, all or none. Returns every task reset, by id, and for each one it
 * unblocked the retried task that freed it (the first of `ids`, in their order).
 */
export async function retryTasksLogged(
  store: StateStore,
  ids: readonly string[],
): Promise<{ reset: Task[]; unblockedBy: Map<string, string> }> {
  const { reset, session, previousAttempts, unblockedBy } = await store.transact((file) => {
    const previousAttempts = new Map(file.tasks.map((t) => [t.id, t.attempts]));
    // Each unblocked task is told which retried task freed it (the first, in the order given).
    const unblockedBy = new Map<string, string>();
    for (const id of ids) for (const t of blockedDependents(file.tasks, id)) if (!unblockedBy.has(t.id)) unblockedBy.set(t.id, id);
    return { reset: retryTasks(file, ids), session: file.session_count, previousAttempts, unblockedBy };
  }, SHARED);
  const retried = new Set(ids);
  log(
    store,
    session,
    ...reset.map((t) =>
      retried.has(t.id)
        ? {
            type: 'RECOVERY' as const,
            taskId: t.id,
            message: `action="retry" reason="requested by user" attempts_before=${previousAttempts.get(t.id) ?? 0}`,
          }
        : { type: 'RECOVERY' as const, taskId: t.id, message: `action="unblocked" reason="retry of ${unblockedBy.get(t.id) ?? ids[0]}"` },
    ),
  );
  return { reset, unblockedBy };
}

/**
 * A person's answer to a task's question (transitions.answerQuestion): the task is pending again,
 * its next attempt resumes the asking one's worktree. Logged as a RECOVERY line. Returns the task.
 */
export async function answerQuestionLogged(store: StateStore, id: string, answer: string): Promise<Task> {
  const { task, session } = await store.transact(
    (file) => ({ task: answerQuestion(file, id, answer), session: file.session_count }),
    SHARED,
  );
  log(store, session, {
    type: 'RECOVERY',
    taskId: id,
    message: `action="answered" reason="answered by user" answer=${JSON.stringify(answer)}`,
  });
  return task;
}

/** `launchpad config KEY VALUE`: returns the value before. */
export async function setConfigLogged(store: StateStore, key: ConfigKey, value: unknown): Promise<unknown> {
  const { before, session } = await store.transact(
    (file) => ({ before: setConfigValue(file, key, value), session: file.session_count }),
    SHARED,
  );
  if (JSON.stringify(before) !== JSON.stringify(value)) {
    log(store, session, { type: 'INIT', message: `session_config.${key.key}=${showValue(value)} (was ${showValue(before)})` });
  }
  return before;
}

/** `launchpad config --unset KEY`: back to the default; returns the value before. */
export async function unsetConfigLogged(store: StateStore, key: ConfigKey): Promise<unknown> {
  const { before, session } = await store.transact(
    (file) => ({ before: unsetConfigValue(file, key), session: file.session_count }),
    SHARED,
  );
  const after = key.defaultValue;
  if (JSON.stringify(before) !== JSON.stringify(after)) {
    log(store, session, {
      type: 'INIT',
      message: `session_config.${key.key} unset (was ${showValue(before)}${after === undefined ? '' : `, now the default ${showValue(after)}`})`,
    });
  }
  return before;
}

function log(store: StateStore, session: number, ...events: Parameters<ProgressLog['append']>[1][]): void {
  new ProgressLog(store.paths.progress).append(session, ...events);
}

/** A value in a log line: strings quoted, lists and objects as JSON, absent as none. */
function showValue(value: unknown): string {
  if (value === undefined || value === null) return 'none';
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return `[${value.join(', ')}]`;
  return JSON.stringify(value);
}
