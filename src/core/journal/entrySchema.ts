// The journal's entry types and their fields, in one table: the zod schemas that validate an
// entry (on append and when progress.json is read), the CLI's `journal add` flags and the
// Markdown all come from it. Entries are loose objects: a field someone added by hand is kept.
import * as z from 'zod/mini';

import { formatPath } from '../taskFile/parse';

export type FieldKind = 'text' | 'list' | 'minutes' | 'count';

export const ENTRY_FIELDS = {
  spec: { kind: 'text', help: 'the spec name, or "harness" for tasks of harness-tasks.json' },
  focus_task: { kind: 'text', help: 'the task (or tasks) the session works on' },
  context: { kind: 'text', help: 'where the session picks up' },
  environment: { kind: 'text', help: 'what the environment health check said' },
  branch: { kind: 'text', help: 'the git branch the session works on' },
  task_id: { kind: 'text', help: 'the task id (1.2, or a harness task id)' },
  task_description: { kind: 'text', help: "the task's title" },
  duration_minutes: { kind: 'minutes', help: 'minutes from dispatch to completion' },
  notes: { kind: 'text', help: 'free text' },
  next_task: { kind: 'text', help: 'the task to do next' },
  attempts: { kind: 'count', help: 'attempts the task took' },
  issue: { kind: 'text', help: 'what blocks (or blocked) the work' },
  resolution: { kind: 'text', help: 'how it was (or can be) resolved' },
  summary: { kind: 'text', help: 'what the session did' },
  next_steps: { kind: 'list', help: 'what to do next (one item per flag)' },
  requested_tasks: { kind: 'list', help: 'the parent tasks asked for (comma-separated)' },
  reason: { kind: 'text', help: 'why the scope rule was overridden' },
  note: { kind: 'text', help: 'free text' },
  session: { kind: 'count', help: 'the controller session number' },
} as const satisfies Record<string, { kind: FieldKind; help: string }>;

export type FieldName = keyof typeof ENTRY_FIELDS;

export const ENTRY_TYPES = {
  session_started: {
    title: 'Session Started',
    required: ['spec', 'focus_task'],
    optional: ['context', 'environment', 'branch', 'session'],
  },
  task_completed: {
    title: 'Task Completed',
    required: ['spec', 'task_id', 'duration_minutes'],
    optional: ['task_description', 'notes', 'next_task', 'attempts', 'session'],
  },
  task_blocked: {
    title: 'Blocker Encountered',
    required: ['spec', 'task_id', 'issue'],
    optional: ['task_description', 'resolution', 'attempts', 'session'],
  },
  debug_resolved: { title: 'Debug Resolved', required: ['issue', 'resolution'], optional: ['spec', 'task_id', 'notes'] },
  session_ended: { title: 'Session Ended', required: ['summary', 'next_steps'], optional: ['spec', 'session'] },
  scope_override: { title: 'Scope Override', required: ['requested_tasks', 'reason', 'note'], optional: ['spec', 'focus_task'] },
} as const satisfies Record<string, { title: string; required: readonly FieldName[]; optional: readonly FieldName[] }>;

export type EntryType = keyof typeof ENTRY_TYPES;
export const ENTRY_TYPE_NAMES = Object.keys(ENTRY_TYPES) as EntryType[];

/** An entry as stored: id, timestamp, type and its fields (plus whatever a person added). */
export interface JournalEntry {
  id: string;
  timestamp: string;
  type: EntryType;
  [field: string]: unknown;
}

/** An entry before it is appended: the journal gives it its id and, when absent, its timestamp. */
export type NewEntry = { type: EntryType; timestamp?: string } & Partial<Record<FieldName, string | number | string[] | null | undefined>>;

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?Z$/;
export const ENTRY_ID = /^entry-\d{8}-\d{6}(-\d+)?$/;

function fieldSchema(kind: FieldKind) {
  switch (kind) {
    case 'text':
      return z.string().check(z.minLength(1));
    case 'list':
      return z.array(z.string().check(z.minLength(1)));
    case 'minutes':
      return z.number().check(z.gte(0));
    case 'count':
      return z.int().check(z.gte(0));
  }
}

function schemaFor(type: EntryType) {
  const spec = ENTRY_TYPES[type];
  const shape: Record<string, z.core.SomeType> = {
    id: z.string().check(z.regex(ENTRY_ID, { error: 'expected an id like entry-20251208-143000' })),
    timestamp: z.string().check(z.regex(ISO_UTC, { error: 'expected a UTC timestamp like 2025-12-08T14:30:00Z' })),
    type: z.literal(type),
  };
  for (const f of spec.required) shape[f] = fieldSchema(ENTRY_FIELDS[f].kind);
  for (const f of spec.optional) shape[f] = z.optional(z.nullable(fieldSchema(ENTRY_FIELDS[f].kind)));
  // A scope override is about more than one task by definition.
  if (type === 'scope_override') shape.requested_tasks = z.array(z.string().check(z.minLength(1))).check(z.minLength(2));
  return z.looseObject(shape);
}

const SCHEMAS = Object.fromEntries(ENTRY_TYPE_NAMES.map((t) => [t, schemaFor(t)])) as Record<EntryType, ReturnType<typeof schemaFor>>;

/** One problem of an entry: the field (a JSON path below the entry) and what is wrong with it. */
export interface EntryProblem {
  field: string;
  message: string;
}

export function isEntryType(value: unknown): value is EntryType {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ENTRY_TYPES, value);
}

/** The first problem of `raw` as a journal entry, or undefined when it is valid. */
export function entryProblem(raw: unknown): EntryProblem | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { field: '(entry)', message: 'expected an object' };
  const type = (raw as Record<string, unknown>).type;
  if (!isEntryType(type)) {
    const got = type === undefined ? 'required field is missing' : `got ${JSON.stringify(type)}`;
    return { field: 'type', message: `expected one of ${ENTRY_TYPE_NAMES.join(', ')}; ${got}` };
  }
  const parsed = SCHEMAS[type].safeParse(raw);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0]!;
  return { field: formatPath(issue.path), message: describe(issue, (raw as Record<string, unknown>)[String(issue.path[0])]) };
}

function describe(issue: z.core.$ZodIssue, value: unknown): string {
  if (issue.path.length === 1 && value === undefined) return 'required field is missing';
  switch (issue.code) {
    case 'invalid_type':
      return `expected ${issue.expected === 'int' ? 'a whole number' : issue.expected}, got ${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value}`;
    case 'too_small':
      if (issue.origin === 'string') return 'must not be empty';
      if (issue.origin === 'array') return `must have at least ${String(issue.minimum)} items`;
      return `must be at least ${String(issue.minimum)}`;
    case 'invalid_value':
      return `expected ${issue.values.map((v) => JSON.stringify(v)).join(' or ')}`;
    default:
      return issue.message;
  }
}
