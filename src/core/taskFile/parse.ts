// Parsing and writing harness-tasks.json as text. Pure: no I/O, so every malformed shape is
// testable on literal strings. Errors name the file and the JSON path of the bad field.
import type * as z from 'zod/mini';

import { ExpectedError } from '../expectedErrors';
import { lineColumn, locateJsonPath, locateJsonSyntaxError, pathAtOffset } from './jsonSyntax';
import { type Task, type TaskFile, taskFileSchema, taskSchema } from './schema';
import { decodeUtf8 } from './utf8';

/** Larger task files are refused rather than parsed: a multi-gigabyte file is a mistake. */
export const MAX_TASK_FILE_BYTES = 32 * 1024 * 1024;
/**
 * Objects and arrays nested deeper than this are refused: the task file's own fields go 4 deep,
 * and writing a value nested thousands deep overflows the stack (JSON.stringify is recursive).
 */
export const MAX_NESTING = 64;

export class TaskFileError extends ExpectedError {
  constructor(
    readonly file: string,
    /** JSON path of the first problem (`tasks[3].depends_on[0]`), or '' for the whole file. */
    readonly field: string,
    readonly problems: string[],
    /** Where the first problem is in the file, when it is known. */
    readonly position?: { line: number; column: number },
  ) {
    super(problems.map((p) => `${file}: ${p}`).join('\n'));
    this.name = 'TaskFileError';
  }

  /** "tasks[1].priority at line 7, column 19", "line 5, column 3", or the field alone. */
  get where(): string {
    const at = this.position ? `line ${this.position.line}, column ${this.position.column}` : '';
    if (this.field && at) return `${this.field} at ${at}`;
    return this.field || at;
  }
}

export type ParseResult = { ok: true; file: TaskFile } | { ok: false; error: TaskFileError };

/** The file as read from disk: refused unless it is strict UTF-8, then parsed. */
export function parseTaskFileBytes(bytes: Uint8Array, fileLabel = 'harness-tasks.json'): ParseResult {
  const fail = (field: string, problem: string, position?: { line: number; column: number }): ParseResult => ({
    ok: false,
    error: new TaskFileError(fileLabel, field, [field ? `${field}: ${problem}` : problem], position),
  });
  if (bytes.length > MAX_TASK_FILE_BYTES) return fail('', tooLargeProblem(bytes.length));
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return fail('', 'starts with a byte-order mark (BOM); save it as UTF-8 without a BOM');
  }
  const decoded = decodeUtf8(bytes);
  if (!decoded.ok) {
    const { offset, byte } = decoded;
    if (offset < 2 || bytes.includes(0)) return fail('', NOT_UTF8);
    // The text before the bad byte is valid: it gives the line and column; the lenient text
    // (the bad byte as U+FFFD) gives the field it is in.
    const charOffset = Buffer.from(bytes.buffer, bytes.byteOffset, offset).toString('utf8').length;
    const lenient = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8');
    const position = lineColumn(lenient, charOffset);
    const path = pathAtOffset(lenient, charOffset);
    const hex = byte.toString(16).toUpperCase().padStart(2, '0');
    return fail(
      path ? formatPath(path) : '',
      `byte 0x${hex} at line ${position.line}, column ${position.column} (byte offset ${offset}) is not UTF-8 (Latin-1 or Windows-1252 text?); ` +
        'save the file as UTF-8 (read leniently, the byte would become U+FFFD on the next write)',
      position,
    );
  }
  return parseTaskFile(decoded.text, fileLabel);
}

const NOT_UTF8 = 'is not UTF-8 text (UTF-16 or binary content); save it as UTF-8';

export function parseTaskFile(text: string, fileLabel = 'harness-tasks.json'): ParseResult {
  const fail = (field: string, ...problems: string[]): ParseResult => ({
    ok: false,
    error: new TaskFileError(fileLabel, field, problems, paths.has(field) ? locateJsonPath(text, paths.get(field)!) : undefined),
  });
  // The raw paths behind the formatted `field`s, for their position in the text.
  const paths = new Map<string, ReadonlyArray<PropertyKey>>();

  if (text.length > MAX_TASK_FILE_BYTES) return fail('', tooLargeProblem(text.length));
  if (text.charCodeAt(0) === 0xfeff) {
    return fail('', 'starts with a byte-order mark (BOM); save it as UTF-8 without a BOM');
  }
  if (text.charCodeAt(0) === 0xfffd || text.includes('\u0000')) return fail('', NOT_UTF8);
  if (text.trim() === '') return fail('', 'file is empty; expected a JSON object with a "tasks" array');

  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    const where = locateJsonSyntaxError(text);
    if (where) {
      const error = new TaskFileError(
        fileLabel,
        '',
        [`invalid JSON at line ${where.line}, column ${where.column}: ${where.message}`],
        where,
      );
      return { ok: false, error };
    }
    // Valid syntax that JSON.parse still refused (nesting too deep for the engine).
    return fail('', `cannot be read as JSON: ${err instanceof Error ? err.message : String(err)}`);
  }

  const shape = inspectShape(raw);
  // A field named __proto__, however its name is spelled ("\u005f_proto__" too), would be
  // dropped on the way through (it sets the prototype of the copy instead): refuse it rather
  // than lose it.
  if (shape.proto) {
    const field = record(shape.proto);
    return fail(field, `${field}: the field name "__proto__" cannot be kept; rename it`);
  }

  const parsed = taskFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues;
    // The path as the field has it, then the problem, then which task (`tasks[5].priority: … (in task-006)`).
    const shown = issues.slice(0, 5).map((issue) => `${formatPath(issue.path)}: ${describeIssue(issue, raw)}${taskOf(issue.path, raw)}`);
    if (issues.length > shown.length) shown.push(`… and ${issues.length - shown.length} more problem(s)`);
    return fail(record(issues[0]!.path), ...shown);
  }
  // After the schema, whose errors say more about a known field nested wrongly.
  if (shape.tooDeep) {
    const field = record(shape.tooDeep);
    return fail(
      field,
      `${field}: nested deeper than ${MAX_NESTING} levels of objects and arrays; Launchpad refuses a file nested this deep`,
    );
  }
  return { ok: true, file: parsed.data };

  function record(path: ReadonlyArray<PropertyKey>): string {
    const field = formatPath(path);
    paths.set(field, path);
    return field;
  }
}

/**
 * One walk over the parsed value, without recursion: the first own property named __proto__,
 * and the first object or array nested deeper than MAX_NESTING.
 */
function inspectShape(root: unknown, at: PropertyKey[] = []): { proto?: PropertyKey[]; tooDeep?: PropertyKey[] } {
  const out: { proto?: PropertyKey[]; tooDeep?: PropertyKey[] } = {};
  const stack: Array<{ value: unknown; path: PropertyKey[] }> = [{ value: root, path: at }];
  while (stack.length) {
    const { value, path } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (path.length >= MAX_NESTING) {
      out.tooDeep ??= path;
      continue;
    }
    if (Object.prototype.hasOwnProperty.call(value, '__proto__')) {
      out.proto = [...path, '__proto__'];
      return out;
    }
    const entries = Object.entries(value);
    // Pushed in reverse so the first problem in document order is found first.
    for (let k = entries.length - 1; k >= 0; k--) {
      const [key, child] = entries[k]!;
      if (child !== null && typeof child === 'object')
        stack.push({ value: child, path: [...path, Array.isArray(value) ? Number(key) : key] });
    }
  }
  return out;
}

/** The problem reported for a file over MAX_TASK_FILE_BYTES (checked on disk before reading, and here). */
export function tooLargeProblem(bytes?: number): string {
  const size = bytes === undefined ? 'over' : `${(bytes / 1048576).toFixed(1)} MiB, over`;
  return `file is ${size} the ${MAX_TASK_FILE_BYTES / 1048576} MiB limit`;
}

/** Stable, human-diffable JSON: two-space indent and a final newline. */
export function serializeTaskFile(file: TaskFile): string {
  return JSON.stringify(file, null, 2) + '\n';
}

/** One task's text as serializeTaskFile writes it inside the tasks array (indented for its place). */
export function serializeTaskEntry(task: Task): string {
  // A JSON string never holds a raw newline, so every newline is a line break to indent.
  return '    ' + JSON.stringify(task, null, 2).replace(/\n/g, '\n    ');
}

const TASKS_PLACEHOLDER = '\n  "tasks": []';
const ENTRY_SEPARATOR = Buffer.from(',\n');

/**
 * The UTF-8 bytes of serializeTaskFile(file), in parts, from the bytes of each task's
 * serializeTaskEntry: a file whose tasks mostly kept their text is written without serializing
 * them again, or copying them into one buffer.
 */
export function serializeTaskFileFrom(file: TaskFile, entries: readonly Uint8Array[]): Uint8Array[] {
  const top = JSON.stringify({ ...file, tasks: [] }, null, 2);
  // The only line at two spaces' indent that is the key "tasks" (keys are unique, strings one-line).
  const at = top.indexOf(TASKS_PLACEHOLDER);
  if (at < 0 || entries.length === 0) return [Buffer.from(serializeTaskFile(file), 'utf8')];
  const end = at + TASKS_PLACEHOLDER.length;
  const parts: Uint8Array[] = new Array(entries.length * 2 + 1);
  parts[0] = Buffer.from(`${top.slice(0, end - 1)}\n`, 'utf8');
  for (let i = 0; i < entries.length; i++) {
    parts[2 * i + 1] = entries[i]!;
    parts[2 * i + 2] = ENTRY_SEPARATOR;
  }
  parts[parts.length - 1] = Buffer.from(`\n  ]${top.slice(end)}\n`, 'utf8');
  return parts;
}

/**
 * What parseTaskFile would return for serializeTaskFile(file), when most of `file` is known
 * good: `known(i)` gives, for a task whose text is exactly that of a task parseTaskFile returned,
 * that parsed task, and the schema runs over the other tasks and the top-level fields alone.
 * Undefined when any part is refused or odd: parse the whole text then, which names the problem.
 */
export function parseTaskFileParts(
  file: TaskFile,
  known: (index: number) => Task | undefined,
  /** The caller has checked that no two tasks share an id. */
  idsUnique = false,
): TaskFile | undefined {
  if (!Array.isArray(file.tasks)) return undefined;
  // Through JSON and back, as the written text will be read.
  const top: unknown = JSON.parse(JSON.stringify({ ...file, tasks: [] }));
  const topShape = inspectShape(top);
  if (topShape.proto || topShape.tooDeep) return undefined;
  const head = taskFileSchema.safeParse(top);
  if (!head.success) return undefined;
  const tasks: Task[] = new Array(file.tasks.length);
  const ids = idsUnique ? undefined : new Set<string>();
  for (let i = 0; i < file.tasks.length; i++) {
    let parsed = known(i);
    if (!parsed) {
      const text = JSON.stringify(file.tasks[i]);
      if (text === undefined) return undefined;
      const raw: unknown = JSON.parse(text);
      const shape = inspectShape(raw, ['tasks', i]);
      if (shape.proto || shape.tooDeep) return undefined;
      const one = taskSchema.safeParse(raw);
      if (!one.success) return undefined;
      parsed = one.data;
    }
    if (ids?.has(parsed.id)) return undefined;
    ids?.add(parsed.id);
    tasks[i] = parsed;
  }
  head.data.tasks = tasks;
  return head.data;
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
    case 'too_big': {
      const value = valueAt(raw, issue.path);
      if (issue.origin === 'string' && typeof value === 'string')
        return `must be at most ${String(issue.maximum)} characters long, got ${value.length}`;
      return `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${String(issue.maximum)}, got ${JSON.stringify(value)}`;
    }
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
