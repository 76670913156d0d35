// A spec's tasks.md, the list a person edits: checkbox lines with parent tasks and subtasks,
//
//   - [ ] 1. Parent task
//     - [x] 1.1 Subtask
//       - validate: npm test -- auth     (optional: the subtask's validation command)
//       - depends: 1.1, 2.3             (optional: replaces the default dependencies; "none" for none)
//       - files: src/auth/, test/auth/   (optional: the files it works in)
//
// Everything else (headings, prose, notes, code blocks) is a person's and is never touched: a
// tick changes exactly the one character inside the brackets. Parsing is pure.
import { InputError } from '../inputError';

export interface MdTask {
  /** "1" for a parent, "1.1" for a subtask. */
  id: string;
  type: 'parent' | 'subtask';
  /** A subtask's parent id. */
  parent?: string;
  description: string;
  checked: boolean;
  /** 1-based line of the checkbox. */
  line: number;
  /** Byte offset of the character between the brackets. */
  boxOffset: number;
  /** `- validate:` under it (on a parent: the default of its subtasks). */
  validate?: string;
  /** `- depends:` under a subtask: subtask ids of the same spec. */
  depends?: string[];
  /** `- files:` under it. */
  files?: string[];
}

/** A tasks.md or tasks.json that cannot be used: names the file and the line (or field). */
export class SpecTasksError extends InputError {
  constructor(message: string) {
    super(message);
    this.name = 'SpecTasksError';
  }
}

const CHECKBOX = /^(\s*)[-*+] \[([ xX])\](?: +(.*))?$/;
const NUMBERED = /^(\d+(?:\.\d+)*)\.?\s+(\S.*)$/;
const DETAIL = /^(\s*)[-*+] (validate|depends|files):(.*)$/i;
const FENCE = /^\s*(```|~~~)/;

/** Parses tasks.md (as bytes, so tick offsets are byte offsets); `label` names it in errors. */
export function parseTasksMd(bytes: Buffer, label: string): MdTask[] {
  const text = bytes.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(bytes)) throw new SpecTasksError(`${label}: is not valid UTF-8 text; save it as UTF-8`);
  const fail = (line: number, problem: string): never => {
    throw new SpecTasksError(`${label}:${line}: ${problem}`);
  };

  const tasks: MdTask[] = [];
  const byId = new Map<string, MdTask>();
  let parent: { task: MdTask; indent: number } | undefined;
  let last: { task: MdTask; indent: number } | undefined;
  let inFence = false;
  let lineStart = 0; // byte offset of the current line
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const lineNo = i + 1;
    const lineBytes = Buffer.byteLength(raw, 'utf8');
    const line = (i === 0 ? raw.replace(/^\ufeff/, '') : raw).replace(/\r$/, '');
    const bomBytes = i === 0 && raw.startsWith('\ufeff') ? 3 : 0;
    const start = lineStart;
    lineStart += lineBytes + 1;

    if (FENCE.test(line)) {
      inFence = !inFence;
      continue;
    }
    if (inFence) continue;

    const box = CHECKBOX.exec(line);
    if (box) {
      const indent = box[1]!.length;
      const numbered = NUMBERED.exec((box[3] ?? '').trim());
      if (!numbered) fail(lineNo, 'expected a numbered task after the checkbox, like "- [ ] 1. Title" or "  - [ ] 1.1 Title"');
      const [, id, description] = numbered!;
      const depth = id!.split('.').length;
      if (depth > 2) fail(lineNo, `task ${id}: only parent tasks (1.) and subtasks (1.1) are supported`);
      const dup = byId.get(id!);
      if (dup) fail(lineNo, `task ${id} is listed twice (also line ${dup.line})`);
      // Offset of the character between the brackets: indent, the bullet and a space, then "[".
      const boxOffset = start + bomBytes + Buffer.byteLength(line.slice(0, indent + 3), 'utf8');
      const task: MdTask = {
        id: id!,
        type: depth === 1 ? 'parent' : 'subtask',
        description: description!.trim(),
        checked: box[2] !== ' ',
        line: lineNo,
        boxOffset,
      };
      if (task.type === 'parent') {
        parent = { task, indent };
      } else {
        const parentId = id!.split('.')[0]!;
        if (!parent || parent.task.id !== parentId) fail(lineNo, `subtask ${id} must come under its parent task ${parentId}.`);
        if (indent <= parent!.indent) fail(lineNo, `subtask ${id} must be indented under its parent task ${parentId}.`);
        task.parent = parentId;
      }
      tasks.push(task);
      byId.set(task.id, task);
      last = { task, indent };
      continue;
    }

    const detail = DETAIL.exec(line);
    if (detail && last && detail[1]!.length > last.indent) {
      const key = detail[2]!.toLowerCase();
      const value = detail[3]!.trim();
      const task = last.task;
      if (key === 'validate') {
        if (!value) fail(lineNo, `validate: needs a command (task ${task.id})`);
        task.validate = value;
      } else if (key === 'files') {
        task.files = splitItems(value);
      } else {
        if (task.type !== 'subtask') fail(lineNo, `depends: goes under a subtask (task ${task.id} is a parent task)`);
        task.depends = /^none$/i.test(value) ? [] : splitItems(value);
      }
    }
  }

  for (const t of tasks) {
    for (const dep of t.depends ?? []) {
      const target = byId.get(dep);
      if (!target || target.type !== 'subtask') fail(t.line, `task ${t.id} depends on "${dep}", which is not a subtask in this file`);
      if (dep === t.id) fail(t.line, `task ${t.id} depends on itself`);
    }
  }
  return tasks;
}

function splitItems(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The bytes with one box set; everything else byte-for-byte as it was. */
export function withBox(bytes: Buffer, task: MdTask, checked: boolean): Buffer {
  const out = Buffer.from(bytes);
  out[task.boxOffset] = checked ? 0x78 /* x */ : 0x20;
  return out;
}

export function subtasksOf(tasks: readonly MdTask[], parentId: string): MdTask[] {
  return tasks.filter((t) => t.type === 'subtask' && t.parent === parentId);
}
