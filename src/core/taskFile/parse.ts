// Parsing and writing harness-tasks.json as text. Pure: no I/O, so every malformed shape is
// testable on literal strings. Errors name the file and the JSON path of the bad field.
import type * as z from 'zod/mini';
import { ExpectedError } from '../expectedErrors';
import { locateJsonSyntaxError } from './jsonSyntax';
import { taskFileSchema, type TaskFile } from './schema';

/** Larger task files are refused rather than parsed: a multi-gigabyte file is a mistake. */
export const MAX_TASK_FILE_BYTES = 32 * 1024 * 1024;

export class TaskFileError extends ExpectedError {
  constructor(
    readonly file: string,
    /** JSON path of the first problem (`tasks[3].depends_on[0]`), or '' for the whole file. */
    readonly field: string,
    readonly problems: string[],
  ) {
    super(problems.map((p) => `${file}: ${p}`).join('\n'));
    this.name = 'TaskFileError';
  }
}

export type ParseResult = { ok: true; file: TaskFile } | { ok: false; error: TaskFileError };

export function parseTaskFile(text: string, fileLabel = 'harness-tasks.json'): ParseResult {
  const fail = (field: string, ...problems: string[]): ParseResult => ({
    ok: false,
    error: new TaskFileError(fileLabel, field, problems),
  });

  if (text.length > MAX_TASK_FILE_BYTES) return fail('', tooLargeProblem(text.length));
  if (text.charCodeAt(0) === 0xfeff) {
    return fail('', 'starts with a byte-order mark (BOM); save it as UTF-8 without a BOM');
  }
  if (text.charCodeAt(0) === 0xfffd || text.includes('\u0000')) {
    return fail('', 'is not UTF-8 text (UTF-16 or binary content); save it as UTF-8');
  }
  if (text.trim() === '') return fail('', 'file is empty; expected a JSON object with a "tasks" array');

  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    const where = locateJsonSyntaxError(text);
    if (where) return fail('', `invalid JSON at line ${where.line}, column ${where.column}: ${where.message}`);
    // Valid syntax that JSON.parse still refused (nesting too deep for the engine).
    return fail('', `cannot be read as JSON: ${err instanceof Error ? err.message : String(err)}`);
  }

  // A field named __proto__ would be dropped on the way through (it sets the prototype of the
  // copy instead): refuse it rather than lose it.
  if (text.includes('"__proto__"')) {
    const where = findKey(raw, '__proto__', []);
    if (where) return fail(formatPath(where), `${formatPath(where)}: the field name "__proto__" cannot be kept; rename it`);
  }

  const parsed = taskFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues;
    // The path as the field has it, then the problem, then which task (`tasks[5].priority: … (in task-006)`).
    const shown = issues.slice(0, 5).map((issue) => `${formatPath(issue.path)}: ${describeIssue(issue, raw)}${taskOf(issue.path, raw)}`);
    if (issues.length > shown.length) shown.push(`… and ${issues.length - shown.length} more problem(s)`);
    return fail(formatPath(issues[0]!.path), ...shown);
  }
  return { ok: true, file: parsed.data };
}

/** The problem reported for a file over MAX_TASK_FILE_BYTES (checked on disk before reading, and here). */
export function tooLargeProblem(bytes: number): string {
  return `file is ${(bytes / 1048576).toFixed(1)} MiB, over the ${MAX_TASK_FILE_BYTES / 1048576} MiB limit`;
}

/** Stable, human-diffable JSON: two-space indent and a final newline. */
export function serializeTaskFile(file: TaskFile): string {
  return JSON.stringify(file, null, 2) + '\n';
}

/** `tasks[3].depends_on[0]`; the root is `(root)`. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out || '(root)';
}

/** ` (in task-006)` for a problem inside a task that has a plain id (and is not about the id). */
function taskOf(path: ReadonlyArray<PropertyKey>, raw: unknown): string {
  const index = path[1];
  if (path[0] !== 'tasks' || typeof index !== 'number' || path.length < 3 || path[2] === 'id') return '';
  const id = valueAt(raw, ['tasks', index, 'id']);
  return typeof id === 'string' && /^[\x21-\x7e]{1,64}$/.test(id) ? ` (in ${id})` : '';
}

function describeIssue(issue: z.core.$ZodIssue, raw: unknown): string {
  switch (issue.code) {
    case 'invalid_type': {
      const value = valueAt(raw, issue.path);
      const expected = issue.expected === 'int' ? 'a whole number' : issue.expected;
      if (value === undefined) return `required field is missing (expected ${expected})`;
      return `expected ${expected}, got ${kindOf(value)}`;
    }
    case 'invalid_value': {
      const value = valueAt(raw, issue.path);
      const expected = `one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
      if (value === undefined) return `required field is missing (expected ${expected})`;
      return `expected ${expected}, got ${JSON.stringify(value)}`;
    }
    case 'invalid_union': {
      const value = valueAt(raw, issue.path);
      if (issue.path.at(-1) === 'version') return `expected 2 or 3, got ${JSON.stringify(value)}`;
      return `unexpected value ${JSON.stringify(value)}`;
    }
    case 'too_small':
      if (issue.origin === 'string') return 'must not be empty';
      // z.positive() is exclusive: "at least 0" would wrongly allow 0.
      return `must be ${issue.inclusive === false ? 'greater than' : 'at least'} ${String(issue.minimum)}, got ${JSON.stringify(valueAt(raw, issue.path))}`;
    case 'too_big':
      return `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${String(issue.maximum)}`;
    case 'invalid_format':
    case 'custom': {
      const value = valueAt(raw, issue.path);
      return typeof value === 'string' && issue.path.at(-1) === 'id' && !issue.message.startsWith('duplicate')
        ? `${issue.message} (got ${JSON.stringify(value)})`
        : issue.message;
    }
    default:
      return issue.message;
  }
}

function valueAt(root: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let cur: unknown = root;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && !Number.isInteger(value)) return `number ${value}`;
  if (typeof value === 'string') return `string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)}`;
  return typeof value;
}

/** The path of the first own property named `key`, depth first. */
function findKey(value: unknown, key: string, path: PropertyKey[]): PropertyKey[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (Object.prototype.hasOwnProperty.call(value, key)) return [...path, key];
  for (const [k, v] of Object.entries(value)) {
    const found = findKey(v, key, [...path, Array.isArray(value) ? Number(k) : k]);
    if (found) return found;
  }
  return undefined;
}
