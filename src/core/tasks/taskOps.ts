// A person's changes to the task list: add, edit and remove, as functions that mutate a loaded
// task file in place (inside a StateStore transaction) and return what they did, or throw
// InputError changing nothing. A change of state (retry, unblock) is transitions.ts's.
import { isValidTaskId } from '../ids';
import { InputError } from '../inputError';
import { writableTask } from '../taskFile/draft';
import { formatPath } from '../taskFile/parse';
import { PRIORITIES, type Priority, type Task, type TaskFile, taskSchema } from '../taskFile/schema';
import { taskWithId } from './taskIndex';
import { unblockDependents } from './transitions';

export interface NewTask {
  title: string;
  context?: string | undefined;
  priority?: string | undefined;
  dependsOn?: string[] | undefined;
  files?: string[] | undefined;
  /** protected_paths (none when empty). */
  protect?: string[] | undefined;
  /** review: "manual" waits for a person's review before it merges. */
  review?: string | undefined;
  validate?: string | undefined;
  timeoutSeconds?: number | undefined;
  maxAttempts?: number | undefined;
}

/** What `edit` changes: a field left undefined stays; null clears it (back to its default). */
export interface TaskChanges {
  title?: string | undefined;
  context?: string | null | undefined;
  priority?: string | undefined;
  dependsOn?: string[] | undefined;
  files?: string[] | undefined;
  /** protected_paths; empty removes them. */
  protect?: string[] | undefined;
  /** review; null removes it (session_config.review decides). */
  review?: string | null | undefined;
  validate?: string | null | undefined;
  timeoutSeconds?: number | null | undefined;
  maxAttempts?: number | undefined;
}

/** One field an edit changed, as the task file names it, with its values before and after. */
export interface FieldChange {
  field:
    | 'title'
    | 'context'
    | 'priority'
    | 'depends_on'
    | 'files_hint'
    | 'protected_paths'
    | 'review'
    | 'validation.command'
    | 'validation.timeout_seconds'
    | 'max_attempts';
  before: unknown;
  after: unknown;
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
  protected_paths: '--protect',
  validation: '--validate',
  max_attempts: '--max-attempts',
};

export function addTask(file: TaskFile, input: NewTask, issued = 0): Task {
  const title = checkTitle(input.title);
  const priority = checkPriority(input.priority ?? 'P1');
  const dependsOn = checkDependsOn(file, input.dependsOn ?? [], undefined);
  checkTimeout(input.timeoutSeconds);
  checkMaxAttempts(input.maxAttempts);
  const review = input.review === undefined ? undefined : checkReview(input.review);

  const number = nextTaskNumber(file, issued);
  const task: Task = {
    id: `task-${String(number).padStart(3, '0')}`,
    title,
    status: 'pending',
    priority,
    depends_on: dependsOn,
    attempts: 0,
    max_attempts: input.maxAttempts ?? 3,
    context: input.context ?? null,
    files_hint: input.files ?? [],
    ...(input.protect?.length ? { protected_paths: input.protect } : {}),
    ...(review ? { review } : {}),
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

/**
 * Changes fields of a task that is not running (an agent works from the task as it was given).
 * Returns the task and the fields whose value changed.
 */
export function editTask(file: TaskFile, id: string, changes: TaskChanges): { task: Task; changed: FieldChange[] } {
  const task = findTask(file, id);
  if (task.status === 'in_progress') {
    throw new InputError(`task "${id}" is in progress: an agent works from it as it was; edit it once the run has ended that attempt`);
  }
  const title = changes.title === undefined ? undefined : checkTitle(changes.title);
  const priority = changes.priority === undefined ? undefined : checkPriority(changes.priority);
  const dependsOn = changes.dependsOn === undefined ? undefined : checkDependsOn(file, changes.dependsOn, id);
  if (changes.timeoutSeconds !== null) checkTimeout(changes.timeoutSeconds);
  checkMaxAttempts(changes.maxAttempts);
  const review = changes.review === undefined || changes.review === null ? changes.review : checkReview(changes.review);

  const changed: FieldChange[] = [];
  const set = <K extends FieldChange['field']>(field: K, before: unknown, after: unknown, apply: () => void) => {
    if (after === undefined || JSON.stringify(before ?? null) === JSON.stringify(after)) return;
    apply();
    changed.push({ field, before: before ?? null, after });
  };
  set('title', task.title, title, () => (task.title = title!));
  set('context', task.context, changes.context, () => (task.context = changes.context!));
  set('priority', task.priority, priority, () => (task.priority = priority!));
  set('depends_on', task.depends_on, dependsOn, () => (task.depends_on = dependsOn!));
  set('files_hint', task.files_hint, changes.files, () => (task.files_hint = changes.files!));
  set('protected_paths', task.protected_paths ?? [], changes.protect, () => {
    if (changes.protect!.length) task.protected_paths = changes.protect!;
    else delete task.protected_paths;
  });
  set('review', task.review, review, () => {
    if (review) task.review = review;
    else delete task.review;
  });
  set(
    'validation.command',
    task.validation?.command,
    changes.validate,
    () => (task.validation = { ...task.validation, command: changes.validate! }),
  );
  set('validation.timeout_seconds', task.validation?.timeout_seconds, changes.timeoutSeconds, () => {
    task.validation = { command: null, ...task.validation, timeout_seconds: changes.timeoutSeconds! };
  });
  set('max_attempts', task.max_attempts, changes.maxAttempts, () => (task.max_attempts = changes.maxAttempts!));
  return { task, changed };
}

/**
 * Removes a task that is not running. Tasks that depend on it keep it from going, unless
 * `force`: then it is taken out of their depends_on, and those a run had marked failed because
 * of it go back to pending. Returns the task, the ids whose depends_on changed and those unblocked.
 */
export function removeTask(
  file: TaskFile,
  id: string,
  opts: { force?: boolean } = {},
): { task: Task; detached: string[]; unblocked: string[] } {
  const task = findTask(file, id);
  if (task.status === 'in_progress') {
    throw new InputError(`task "${id}" is in progress: remove it once the run has ended that attempt`);
  }
  const dependents = file.tasks.filter((t) => t.id !== id && t.depends_on.includes(id));
  if (dependents.length && !opts.force) {
    const ids = dependents.map((t) => t.id).join(', ');
    const one = dependents.length === 1;
    throw new InputError(
      `${ids} ${one ? 'depends' : 'depend'} on "${id}": remove or edit ${one ? 'it' : 'them'} first, or use --force to take "${id}" out of ${one ? 'its' : 'their'} depends_on`,
    );
  }
  const unblocked = unblockDependents(file, id).map((t) => t.id);
  for (const { id: dependent } of dependents) {
    // Found again: unblocking may have put a copy in its place.
    const t = writableTask(file, taskWithId(file.tasks, dependent)!);
    t.depends_on = t.depends_on.filter((d) => d !== id);
  }
  file.tasks.splice(file.tasks.indexOf(task), 1);
  return { task, detached: dependents.map((t) => t.id), unblocked };
}

/** The task to change: its own copy when the transaction shares unchanged tasks (draft.ts). */
function findTask(file: TaskFile, id: string): Task {
  const task = taskWithId(file.tasks, id);
  if (!task) throw new InputError(`no task "${id}" in harness-tasks.json`);
  return writableTask(file, task);
}

export function checkTitle(title: string): string {
  if (!title.trim()) throw new InputError('title: must not be empty', { field: 'title' });
  return title.trim();
}

export function checkPriority(value: string): Priority {
  if (!PRIORITIES.includes(value as Priority))
    throw new InputError(`--priority: expected P0, P1 or P2, got "${value}"`, { field: '--priority' });
  return value as Priority;
}

export function checkReview(value: string): 'manual' | 'auto' {
  if (value !== 'manual' && value !== 'auto')
    throw new InputError(`--review: expected manual or auto, got "${value}"`, { field: '--review' });
  return value;
}

/** The dependencies, deduplicated: known ids, not the task itself, no cycle through `self`. */
export function checkDependsOn(file: TaskFile, ids: string[], self: string | undefined): string[] {
  const deps = [...new Set(ids)];
  for (const dep of deps) {
    if (!isValidTaskId(dep)) throw new InputError(`--depends-on: "${dep}" is not a valid task id`, { field: '--depends-on' });
    if (!file.tasks.some((t) => t.id === dep))
      throw new InputError(`--depends-on: no task "${dep}" in harness-tasks.json`, { field: '--depends-on' });
    if (dep === self) throw new InputError(`--depends-on: a task cannot depend on itself ("${dep}")`, { field: '--depends-on' });
  }
  if (self !== undefined) {
    const path = pathTo(file, deps, self);
    if (path) throw new InputError(`--depends-on: would make a cycle: ${[self, ...path].join(' -> ')}`, { field: '--depends-on' });
  }
  return deps;
}

/** A dependency path from one of `from` to `target` (`from` first, `target` last), if there is one. */
function pathTo(file: TaskFile, from: string[], target: string): string[] | undefined {
  const byId = new Map(file.tasks.map((t) => [t.id, t]));
  const parent = new Map<string, string | undefined>(from.map((id) => [id, undefined]));
  const queue = [...from];
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i]!;
    if (id === target) {
      const path: string[] = [];
      for (let cur: string | undefined = id; cur !== undefined; cur = parent.get(cur)) path.unshift(cur);
      return path;
    }
    for (const d of byId.get(id)?.depends_on ?? []) {
      if (parent.has(d)) continue;
      parent.set(d, id);
      queue.push(d);
    }
  }
  return undefined;
}

export function checkTimeout(seconds: number | undefined): void {
  if (seconds !== undefined && !(seconds > 0))
    throw new InputError(`--timeout: expected a number of seconds above 0, got "${seconds}"`, { field: '--timeout' });
}

export function checkMaxAttempts(n: number | undefined): void {
  if (n !== undefined && !(Number.isInteger(n) && n >= 1))
    throw new InputError(`--max-attempts: expected a whole number of at least 1, got "${n}"`, { field: '--max-attempts' });
}
