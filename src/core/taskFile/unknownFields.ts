// Fields of harness-tasks.json that Launchpad does not read. They are kept on every write (other
// tools may own them), but a mistyped key ("depend_on") would silently change what runs: the
// CLI warns about each, with the known field it most resembles, and the editor marks each key.
import { editDistance } from '../editDistance';
import { SPEC_TASK_FIELD } from '../specTasks/specImport';
import { locateJsonPath, walkJson } from './jsonSyntax';
import { formatPath, parseTaskFile } from './parse';
import { sessionConfigSchema, type TaskFile, taskFileSchema, taskSchema } from './schema';

export interface UnknownField {
  /** Its JSON path: ['tasks', 2, 'depend_on']. */
  path: Array<string | number>;
  /** The known field of that object it most resembles, if one is close. */
  suggestion: string | undefined;
}

export function unknownFields(file: TaskFile): UnknownField[] {
  const out: UnknownField[] = [];
  const check = (object: object, known: readonly string[], at: Array<string | number>) => {
    for (const key of Object.keys(object)) {
      if (!known.includes(key)) out.push({ path: [...at, key], suggestion: closest(key, known) });
    }
  };
  check(file, Object.keys(taskFileSchema.shape), []);
  check(file.session_config, Object.keys(sessionConfigSchema.shape), ['session_config']);
  // A spec import's link from a task to its tasks.md entry is Launchpad's own, outside the schema.
  const taskKeys = [...Object.keys(taskSchema.shape), SPEC_TASK_FIELD];
  file.tasks.forEach((task, i) => check(task, taskKeys, ['tasks', i]));
  return out;
}

/** `file:line: field is not …`: one warning line. `text` is the file's, for the line (a walk of it: only for those shown). */
export function describeUnknownField(fileName: string, text: string, u: UnknownField): string {
  const line = locateJsonPath(text, u.path)?.line;
  return `${fileName}:${line !== undefined ? `${line}:` : ''} ${unknownFieldMessage(u)}`;
}

/** What is said about one unknown field, on a terminal and in the editor. */
export function unknownFieldMessage(u: UnknownField): string {
  const hint = u.suggestion ? ` (did you mean ${u.suggestion}?)` : '';
  return `${formatPath(u.path)} is not a field Launchpad reads${hint}; it is kept as it is`;
}

/** Each unknown field of a task file's text with the [start, end) offsets of its key; none when the text is not a valid task file. */
export function unknownFieldsInText(text: string): Array<UnknownField & { start: number; end: number }> {
  const parsed = parseTaskFile(text);
  if (!parsed.ok) return [];
  const found = unknownFields(parsed.file);
  if (!found.length) return [];
  const byPath = new Map(found.map((u) => [JSON.stringify(u.path), u]));
  const out: Array<UnknownField & { start: number; end: number }> = [];
  walkJson(text, (path, start, end, isKey) => {
    const u = isKey ? byPath.get(JSON.stringify(path)) : undefined;
    if (u) out.push({ ...u, start, end });
  });
  return out;
}

function closest(key: string, known: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    const d = editDistance(key.toLowerCase(), name);
    if (d <= Math.max(1, Math.min(3, Math.floor(name.length / 3))) && (!best || d < best.d)) best = { name, d };
  }
  return best?.name;
}
