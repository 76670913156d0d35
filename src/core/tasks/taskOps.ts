// Adding a task, as a person asks for it: mutates a loaded task file in place (inside a
// StateStore transaction) and returns the task, or throws InputError. A retry is a change of
// state: transitions.ts.
import { isValidTaskId } from '../ids';
import { InputError } from '../inputError';
import { PRIORITIES, type Priority, type Task, type TaskFile } from '../taskFile/schema';

export interface NewTask {
  title: string;
  context?: string | undefined;
  priority?: string | undefined;
  dependsOn?: string[] | undefined;
  files?: string[] | undefined;
  validate?: string | undefined;
  timeoutSeconds?: number | undefined;
  maxAttempts?: number | undefined;
}

/** The next `task-NNN` after the highest one in the file. */
export function nextTaskId(file: TaskFile): string {
  let max = 0;
  for (const t of file.tasks) {
    const m = /^task-(\d+)$/.exec(t.id);
    if (m) max = Math.max(max, Number(m[1]));
  }
  return `task-${String(max + 1).padStart(3, '0')}`;
}

export function addTask(file: TaskFile, input: NewTask): Task {
  if (!input.title.trim()) throw new InputError('title: must not be empty');
  const priority = (input.priority ?? 'P1') as Priority;
  if (!PRIORITIES.includes(priority)) throw new InputError(`--priority: expected P0, P1 or P2, got "${input.priority}"`);
  const dependsOn = [...new Set(input.dependsOn ?? [])];
  for (const dep of dependsOn) {
    if (!isValidTaskId(dep)) throw new InputError(`--depends-on: "${dep}" is not a valid task id`);
    if (!file.tasks.some((t) => t.id === dep)) throw new InputError(`--depends-on: no task "${dep}" in harness-tasks.json`);
  }
  if (input.timeoutSeconds !== undefined && !(input.timeoutSeconds > 0)) {
    throw new InputError(`--timeout: expected a number of seconds above 0, got "${input.timeoutSeconds}"`);
  }
  if (input.maxAttempts !== undefined && !(Number.isInteger(input.maxAttempts) && input.maxAttempts >= 1)) {
    throw new InputError(`--max-attempts: expected a whole number of at least 1, got "${input.maxAttempts}"`);
  }

  const task: Task = {
    id: nextTaskId(file),
    title: input.title.trim(),
    status: 'pending',
    priority,
    depends_on: dependsOn,
    attempts: 0,
    max_attempts: input.maxAttempts ?? 3,
    context: input.context ?? null,
    files_hint: input.files ?? [],
    validation: { command: input.validate ?? null, timeout_seconds: input.timeoutSeconds ?? null },
    on_failure: { cleanup: null },
    error_log: [],
    agent_id: null,
    worktree_branch: null,
    completed_at: null,
  };
  file.tasks.push(task);
  return task;
}
