// A milestone's plan (docs/engineering-discipline/plans/YYYY-MM-DD-<name>.md), written by the
// planner agent: free text for people and, under "## Tasks", the tasks Launchpad runs, each a
// checkbox line with indented fields. Ticking a box is the only edit Launchpad makes to a plan.
// The format is described in docs/milestones.md.
import * as z from 'zod/mini';

import { LongRunFormatError, readDocument, unquote } from './markdown';
import { describeIssue } from './zodIssues';

export const PLAN_TASK_ID = /^T[1-9]\d{0,3}$/;
/** More tasks than this and the approval gate asks whether the milestone should be split. */
export const MAX_PLAN_TASKS = 15;

export const planTaskSchema = z.strictObject({
  id: z.string().check(z.regex(PLAN_TASK_ID, { error: 'expected a task id T1, T2, …' })),
  title: z.string().check(z.minLength(1, { error: 'the task has no title' })),
  done: z.boolean(),
  files: z.array(z.string().check(z.minLength(1))),
  validate: z.string().check(z.minLength(1, { error: 'every task needs a validation command' })),
  depends: z.array(z.string().check(z.regex(PLAN_TASK_ID, { error: 'expected task ids (T1, T2)' }))),
  timeout: z.optional(z.int().check(z.positive({ error: 'expected a number of seconds above 0' }))),
  context: z.optional(z.string()),
});
export type PlanTask = z.infer<typeof planTaskSchema> & { line: number };

const TASK_LINE = /^[-*]\s+\[( |x|X)\]\s+(\S+)\s*(.*)$/;
const FIELD_LINE = /^\s+[-*]\s+([A-Za-z ]+?)\s*:\s?(.*)$/;
const FIELDS: Record<string, 'files' | 'validate' | 'depends' | 'timeout' | 'context'> = {
  files: 'files',
  validate: 'validate',
  validation: 'validate',
  depends: 'depends',
  'depends on': 'depends',
  timeout: 'timeout',
  context: 'context',
};

/** The plan's tasks in file order. Every problem names the file and line. */
export function parsePlan(text: string, file: string): PlanTask[] {
  const doc = readDocument(text);
  const section = doc.sections.find((s) => s.level === 2 && s.heading.toLowerCase() === 'tasks');
  if (!section) throw new LongRunFormatError(file, undefined, 'Tasks', 'no "## Tasks" section');
  const tasks: PlanTask[] = [];
  let current: (Record<string, unknown> & { line: number; seen: Set<string> }) | undefined;
  let lastField: string | undefined;
  const finish = () => {
    if (!current) return;
    const { line, seen: _seen, ...raw } = current;
    const parsed = planTaskSchema.safeParse({ files: [], depends: [], ...raw });
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const field = String(issue.path[0] ?? 'task');
      throw new LongRunFormatError(file, line, `${String(raw.id)} ${field}`, describeIssue(issue));
    }
    tasks.push({ ...parsed.data, line });
  };
  for (const { line, text: t } of section.body) {
    if (!t.trim()) continue;
    const task = TASK_LINE.exec(t);
    if (task) {
      finish();
      current = { id: task[2]!, title: task[3]!.trim(), done: task[1] !== ' ', line, seen: new Set() };
      lastField = undefined;
      continue;
    }
    const field = FIELD_LINE.exec(t);
    if (field && current) {
      const key = FIELDS[field[1]!.toLowerCase()];
      if (!key)
        throw new LongRunFormatError(file, line, field[1], 'unknown task field; expected Files, Validate, Depends, Timeout or Context');
      if (current.seen.has(key)) throw new LongRunFormatError(file, line, field[1], `given twice for ${String(current.id)}`);
      current.seen.add(key);
      const value = unquote(field[2]!);
      if (key === 'files' || key === 'depends')
        current[key] = value
          ? value
              .split(/\s*,\s*/)
              .map((v) => unquote(v) ?? '')
              .filter(Boolean)
          : [];
      else if (key === 'timeout') current[key] = value === null ? undefined : /^\d+$/.test(value) ? Number(value) : NaN;
      else if (value !== null) current[key] = value;
      lastField = key;
      continue;
    }
    // A Context may go on over more indented lines.
    if (current && lastField === 'context' && /^\s{4,}\S/.test(t)) {
      current.context = `${String(current.context ?? '')}\n${t.trim()}`.trim();
      continue;
    }
    throw new LongRunFormatError(
      file,
      line,
      'Tasks',
      `expected "- [ ] T<n> title" or an indented "- Field: value", got "${t.trim().slice(0, 80)}"`,
    );
  }
  finish();
  if (!tasks.length) throw new LongRunFormatError(file, section.line, 'Tasks', 'the plan has no tasks ("- [ ] T1 title" lines)');
  checkTaskGraph(tasks, file);
  return tasks;
}

function checkTaskGraph(tasks: PlanTask[], file: string): void {
  const byId = new Map<string, PlanTask>();
  for (const t of tasks) {
    const prior = byId.get(t.id);
    if (prior) throw new LongRunFormatError(file, t.line, t.id, `task id used twice (also line ${prior.line})`);
    byId.set(t.id, t);
  }
  for (const t of tasks) {
    for (const d of t.depends) {
      if (!byId.has(d)) throw new LongRunFormatError(file, t.line, `${t.id} Depends`, `no task ${d} in this plan`);
      if (d === t.id) throw new LongRunFormatError(file, t.line, `${t.id} Depends`, 'a task cannot depend on itself');
    }
  }
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (t: PlanTask, path: string[]): void => {
    if (state.get(t.id) === 'done') return;
    if (state.get(t.id) === 'visiting')
      throw new LongRunFormatError(file, t.line, `${t.id} Depends`, `dependency cycle: ${[...path, t.id].join(' → ')}`);
    state.set(t.id, 'visiting');
    for (const d of t.depends) visit(byId.get(d)!, [...path, t.id]);
    state.set(t.id, 'done');
  };
  for (const t of tasks) visit(t, []);
}

/** The plan text with task `id`'s box ticked (or cleared); unchanged when it already was. */
export function setTaskDone(text: string, id: string, done: boolean): string {
  const lines = text.split('\n');
  const i = lines.findIndex((l) => {
    const m = TASK_LINE.exec(l);
    return m && m[2] === id;
  });
  if (i < 0) return text;
  lines[i] = lines[i]!.replace(/\[( |x|X)\]/, done ? '[x]' : '[ ]');
  return lines.join('\n');
}

/** Every box cleared (the same plan run again). */
export function clearAllTasks(text: string): string {
  return text
    .split('\n')
    .map((l) => (TASK_LINE.test(l) ? l.replace(/\[(x|X)\]/, '[ ]') : l))
    .join('\n');
}

/** Task files outside the milestone's scope (a scope entry is a file or a folder prefix). */
export function filesOutsideScope(tasks: PlanTask[], scope: string[]): string[] {
  const out = new Set<string>();
  for (const t of tasks) for (const f of t.files) if (!inScope(f, scope)) out.add(f);
  return [...out];
}

export function inScope(file: string, scope: string[]): boolean {
  const norm = (p: string) => p.replace(/^\.\//, '').replace(/\/+$/, '');
  const f = norm(file);
  return scope.some((s) => {
    const n = norm(s);
    return n === '' || n === '.' || f === n || f.startsWith(`${n}/`);
  });
}

/** Two scopes touch the same file or folder (one entry equal to or inside the other). */
export function scopesOverlap(a: string[], b: string[]): boolean {
  return a.some((x) => inScope(x, b)) || b.some((y) => inScope(y, a));
}
