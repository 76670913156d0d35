// A task's, a spec entry's, a milestone's and the long run's status each change in one module:
// tasks/transitions.ts, tasks/specTransitions.ts, milestones/transitions.ts. This scan of src/
// finds a status written anywhere else: an assignment to `.status`, or an object literal that sets
// `status` over an existing object (Object.assign, or a copy after a spread). A new object made
// with its first status (a task or milestone added as pending) is a creation, not a transition.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../../..');

/** The homes of the state machines, relative to the repository. */
const TRANSITION_MODULES = ['src/core/tasks/transitions.ts', 'src/core/tasks/specTransitions.ts', 'src/core/milestones/transitions.ts'];

/**
 * Writes of one kind a file may make besides those, and why. tasks.json is rebuilt from tasks.md:
 * each entry is copied with the status its box says (a person's edit), not moved by a run.
 */
const EXEMPT: Record<string, string> = {
  'src/core/specTasks/tasksJson.ts': 'copies an object with a new status',
  // The integration gate's result (green, red, checking) is the base branch's, not a task's.
  'src/core/integration/state.ts': 'assigns .status',
};

const ASSIGNMENT = /\.status\s*(?:\?\?|\|\||&&)?=(?![=>])/g;
const SPREAD_COPY = /\.\.\.[^{};]*?,\s*status\s*[:,}]/g;

/** Where `text` writes a status: `file:line: what`. */
function statusWrites(file: string, text: string): string[] {
  const lineOf = (at: number) => text.slice(0, at).split('\n').length;
  const out: { line: number; what: string }[] = [];
  for (const m of text.matchAll(ASSIGNMENT)) out.push({ line: lineOf(m.index), what: 'assigns .status' });
  for (const m of text.matchAll(SPREAD_COPY)) out.push({ line: lineOf(m.index), what: 'copies an object with a new status' });
  for (const m of text.matchAll(/\bObject\.assign\(/g)) {
    const args = callArguments(text, m.index + m[0].length);
    const status = /\bstatus\s*:/.exec(args);
    if (status) out.push({ line: lineOf(m.index + m[0].length + status.index), what: 'sets status with Object.assign' });
  }
  return out.sort((a, b) => a.line - b.line).map((o) => `${file}:${o.line}: ${o.what}`);
}

/** The text of a call's arguments, from just after its "(" to the matching ")". */
function callArguments(text: string, from: number): string {
  let depth = 1;
  for (let i = from; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return text.slice(from, i);
  }
  return text.slice(from);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

describe('lint: a status is written only by its transitions', () => {
  it('finds an assignment, an Object.assign and a spread copy that set status, each with its line', () => {
    const text = [
      'm.status = "failed";',
      'if (m.status === "failed") s.overall.status ??= "running";',
      'Object.assign(x, {',
      '  attempts: 0,',
      "  status: 'pending',",
      '});',
      "tasks = planned.map((p) => ({ ...toTask(run, id, p), status: 'pending' as const }));",
      'const entry = { ...old, id, status };',
    ].join('\n');
    assert.deepEqual(statusWrites('a.ts', text), [
      'a.ts:1: assigns .status',
      'a.ts:2: assigns .status',
      'a.ts:5: sets status with Object.assign',
      'a.ts:7: copies an object with a new status',
      'a.ts:8: copies an object with a new status',
    ]);
  });

  it('leaves reads, comparisons and new objects alone', () => {
    const text = [
      'if (m.status === "x" || m.status !== "y" || t.status == z) return;',
      'const status = m.status;',
      "tasks.push({ id, status: 'pending' });",
      'Object.assign(property, { minimum: 1 });',
      'const f = (t) => t.status;',
      "const all = [...tasks, extra].map((t) => ({ id: t.id, status: 'pending' }));",
    ].join('\n');
    assert.deepEqual(statusWrites('b.ts', text), []);
  });

  it('src/ writes a status only in the transition modules', () => {
    const offenders = sourceFiles(join(ROOT, 'src'))
      .map((path) => relative(ROOT, path))
      .filter((rel) => !TRANSITION_MODULES.includes(rel))
      .flatMap((rel) => statusWrites(rel, readFileSync(join(ROOT, rel), 'utf8')).filter((o) => !EXEMPT[rel] || !o.endsWith(EXEMPT[rel])));
    assert.deepEqual(offenders, [], `status written outside ${TRANSITION_MODULES.join(', ')}:\n${offenders.join('\n')}`);
  });

  it('the transition modules exist and write status themselves', () => {
    for (const rel of TRANSITION_MODULES) assert.ok(statusWrites(rel, readFileSync(join(ROOT, rel), 'utf8')).length > 0, rel);
  });
});
