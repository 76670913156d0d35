// Adding a task, as a person asks for it: mutates a loaded task file in place (inside a
// StateStore transaction) and returns the task, or throws InputError. A retry is a change of
// state: transitions.ts.
import { isValidTaskId } from '../ids';
import { InputError } from '../inputError';
import { formatPath } from '../taskFile/parse';
import { PRIORITIES, taskSchema, type Priority, type Task, type TaskFile } from '../taskFile/schema';

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

/**
 * The next `task-NNN`: one above the highest number in the file, the highest the file says was
 * ever handed out (last_task_number) and `issued` (the highest the log says was added, which
 * survives a restored backup), so the id of a task removed by hand is never handed out again.
 */
export function nextTaskId(file: TaskFile, issued = 0): string {
  return `task-${String(nextTaskNumber(file, issued)).padStart(3, '0')}`;
}

function nextTaskNumber(file: TaskFile, issued: number): number {
  let max = Math.max(file.last_task_number ?? 0, issued);
  for (const t of file.tasks) {
    const m = /^task-(\d+)$/.exec(t.id);
    if (m) max = Math.max(max, Number(m[1]));
  }
  return max + 1;
}

/** The option of `add` behind each field of a new task, for its limit's message. */
const OPTION_OF: Record<string, string> = {
  title: 'title',
  context: '--context',
  files_hint: '--files',
  validation: '--validate',
  max_attempts: '--max-attempts',
};

export function addTask(file: TaskFile, input: NewTask, issued = 0): Task {
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

  const number = nextTaskNumber(file, issued);
  const task: Task = {
    id: `task-${String(number).padStart(3, '0')}`,
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
  // The schema's limits (a title's length, a timeout's bound…), said in terms of the option.
  const checked = taskSchema.safeParse(task);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    const [head, sub] = issue.path;
    const option = head === 'validation' && sub === 'timeout_seconds' ? '--timeout' : (OPTION_OF[String(head)] ?? formatPath(issue.path));
    const value: unknown = issue.path.reduce<unknown>((v, k) => (v as Record<PropertyKey, unknown>)[k], task);
    const limit =
      issue.code !== 'too_big'
        ? issue.message
        : typeof value === 'string'
          ? `at most ${String(issue.maximum)} characters, got ${value.length}`
          : `at most ${String(issue.maximum)}${option === '--timeout' ? ' seconds' : ''}, got ${String(value)}`;
    throw new InputError(`${option}: ${limit}`);
  }
  file.tasks.push(task);
  file.last_task_number = number;
  return task;
}
