// A spec's tasks.json: generated from tasks.md (the source of truth for which tasks exist, their
// descriptions and their boxes), merged with what only tasks.json keeps (attempts, completion
// times, durations, notes, and any field someone added). Pure: text in, text out.
import { locateJsonSyntaxError } from '../taskFile/jsonSyntax';
import { type MdTask, SpecTasksError, subtasksOf } from './tasksMd';

export const TASKS_JSON_SCHEMA_URL = 'https://agent-os.dev/schemas/tasks-v1.json';
export const TASKS_JSON_VERSION = '1.0';

/** pending: not started · in_progress: dispatched · pass: box ticked · fail: failed, will be retried · blocked: failed for good. */
export type SpecTaskStatus = 'pending' | 'in_progress' | 'pass' | 'fail' | 'blocked';

export interface SpecTaskEntry {
  id: string;
  type: 'parent' | 'subtask';
  parent?: string;
  description: string;
  status: SpecTaskStatus;
  subtasks?: string[];
  progress_percent?: number;
  attempts?: number;
  completed_at?: string | null;
  duration_minutes?: number | null;
  notes?: string | null;
  [extra: string]: unknown;
}

export interface SpecTasksSummary {
  total_tasks: number;
  completed: number;
  in_progress: number;
  blocked: number;
  pending: number;
}

export interface SpecTasksDoc {
  $schema: string;
  version: string;
  spec: string;
  spec_path: string;
  created: string;
  updated: string;
  tasks: SpecTaskEntry[];
  summary: SpecTasksSummary;
  [extra: string]: unknown;
}

const STATUSES: readonly SpecTaskStatus[] = ['pending', 'in_progress', 'pass', 'fail', 'blocked'];

export function parseTasksJson(text: string, label: string): SpecTasksDoc {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    const where = locateJsonSyntaxError(text);
    throw new SpecTasksError(
      `${label}: ${where ? `invalid JSON at line ${where.line}, column ${where.column}: ${where.message}` : (err as Error).message}`,
    );
  }
  const fail = (field: string, problem: string): never => {
    throw new SpecTasksError(`${label}: ${field}: ${problem}`);
  };
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) fail('(root)', 'expected a JSON object');
  const doc = raw as Record<string, unknown>;
  if (!Array.isArray(doc.tasks)) fail('tasks', 'expected an array');
  (doc.tasks as unknown[]).forEach((t, i) => {
    if (t === null || typeof t !== 'object' || Array.isArray(t)) fail(`tasks[${i}]`, 'expected an object');
    const task = t as Record<string, unknown>;
    if (typeof task.id !== 'string' || !task.id) fail(`tasks[${i}].id`, 'expected a task id like "1.2"');
    if (task.status !== undefined && !STATUSES.includes(task.status as SpecTaskStatus))
      fail(`tasks[${i}].status`, `expected one of ${STATUSES.join(', ')}`);
    if (task.attempts !== undefined && !(Number.isInteger(task.attempts) && (task.attempts as number) >= 0))
      fail(`tasks[${i}].attempts`, 'expected a whole number of at least 0');
  });
  return doc as SpecTasksDoc;
}

export function serializeTasksJson(doc: SpecTasksDoc): string {
  return JSON.stringify(doc, null, 2) + '\n';
}

/**
 * tasks.json for `md`, keeping from `existing` what tasks.md does not say. A ticked box is
 * `pass`; an empty box keeps in_progress, fail or blocked (a run's), and a `pass` whose box a
 * person emptied again becomes `pending`. `updated` changes only when something else did.
 */
export function buildTasksJson(
  spec: string,
  specPath: string,
  md: readonly MdTask[],
  existing: SpecTasksDoc | undefined,
  now: string,
): SpecTasksDoc {
  const before = new Map((existing?.tasks ?? []).map((t) => [t.id, t]));
  const subtaskEntries = new Map<string, SpecTaskEntry>();
  for (const t of md) {
    if (t.type !== 'subtask') continue;
    const old = before.get(t.id);
    const oldStatus = old?.status;
    const status: SpecTaskStatus = t.checked ? 'pass' : oldStatus && oldStatus !== 'pass' ? oldStatus : 'pending';
    const reopened = !t.checked && oldStatus === 'pass';
    subtaskEntries.set(t.id, {
      ...old,
      id: t.id,
      type: 'subtask',
      parent: t.parent!,
      description: t.description,
      status,
      attempts: old?.attempts ?? 0,
      completed_at: reopened ? null : (old?.completed_at ?? null),
      duration_minutes: reopened ? null : (old?.duration_minutes ?? null),
      notes: old?.notes ?? null,
    });
  }
  const tasks: SpecTaskEntry[] = [];
  for (const t of md) {
    if (t.type === 'subtask') {
      tasks.push(subtaskEntries.get(t.id)!);
      continue;
    }
    const subs = subtasksOf(md, t.id).map((s) => subtaskEntries.get(s.id)!);
    const passed = subs.filter((s) => s.status === 'pass').length;
    tasks.push({
      ...before.get(t.id),
      id: t.id,
      type: 'parent',
      description: t.description,
      status: parentStatus(t, subs),
      subtasks: subs.map((s) => s.id),
      progress_percent: subs.length ? Math.floor((passed * 100) / subs.length) : t.checked ? 100 : 0,
    });
  }
  const doc: SpecTasksDoc = {
    ...existing,
    $schema: TASKS_JSON_SCHEMA_URL,
    version: TASKS_JSON_VERSION,
    spec,
    spec_path: specPath,
    created: existing?.created ?? now,
    updated: existing?.updated ?? now,
    tasks,
    summary: summarize(tasks),
  };
  if (existing && serializeTasksJson({ ...doc, updated: '' }) !== serializeTasksJson({ ...existing, updated: '' })) doc.updated = now;
  return doc;
}

function parentStatus(t: MdTask, subs: SpecTaskEntry[]): SpecTaskStatus {
  if (!subs.length) return t.checked ? 'pass' : 'pending';
  if (subs.every((s) => s.status === 'pass')) return 'pass';
  if (subs.some((s) => s.status === 'blocked')) return 'blocked';
  if (subs.some((s) => s.status !== 'pending')) return 'in_progress';
  return 'pending';
}

/** completed = pass; pending counts the not-started and the failed-to-be-retried. */
export function summarize(tasks: readonly SpecTaskEntry[]): SpecTasksSummary {
  const count = (s: SpecTaskStatus) => tasks.filter((t) => t.status === s).length;
  const completed = count('pass');
  const inProgress = count('in_progress');
  const blocked = count('blocked');
  return {
    total_tasks: tasks.length,
    completed,
    in_progress: inProgress,
    blocked,
    pending: tasks.length - completed - inProgress - blocked,
  };
}
