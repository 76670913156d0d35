// A spec's tasks.md ↔ tasks.json: parsing, the sync's merge, results written back (a tick that
// changes one byte), and a round trip that keeps everything a person wrote.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

import { JournalPaths } from '../../../src/core/journal/journalPaths';
import { recordSpecResult, syncSpec } from '../../../src/core/specTasks/specFiles';
import { specTaskId } from '../../../src/core/specTasks/specImport';
import { parseTasksMd, SpecTasksError } from '../../../src/core/specTasks/tasksMd';
import { StatePaths } from '../../../src/core/statePaths';
import { assertUnchanged, snapshot } from '../cli/util';
import { tempDir } from './support';

const MD = [
  '# Spec Tasks: auth-feature ✓',
  '',
  'These are the tasks for [the spec](../../specs/auth-feature/spec.md).',
  '> Notes a person keeps here — *never* rewritten.',
  '',
  '- [ ] 1. Implement authentication endpoints',
  '  - [x] 1.1 Create login endpoint',
  '  - [ ] 1.2 Implement JWT validation',
  '    - validate: npm test -- jwt',
  '    - files: src/auth/, test/auth/',
  '    Some prose under 1.2, with a [ ] that is not a box.',
  '  - [ ] 1.3 Add session management',
  '    - depends: 1.2',
  '',
  '```md',
  '- [ ] 9. An example inside a code block',
  '```',
  '',
  '- [ ] 2. Documentation',
  '  - [ ] 2.1 Write the API docs',
  '',
].join('\r\n');

function specProject(md = MD): { root: string; paths: JournalPaths; mdFile: string; jsonFile: string } {
  const root = tempDir('launchpad-spec-');
  const paths = new JournalPaths(new StatePaths(root));
  const mdFile = paths.specTasksMd('auth-feature');
  mkdirSync(dirname(mdFile), { recursive: true });
  writeFileSync(mdFile, md);
  return { root, paths, mdFile, jsonFile: paths.specTasksJson('auth-feature') };
}

/** Positions where two buffers differ. */
function diffBytes(a: Buffer, b: Buffer): number[] {
  assert.equal(a.length, b.length, 'same length');
  const out: number[] = [];
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) out.push(i);
  return out;
}

describe('spec tasks: tasks.md ↔ tasks.json', () => {
  it('parses parents, subtasks, boxes and the validate/files/depends lines, ignoring prose and code blocks', () => {
    const tasks = parseTasksMd(Buffer.from(MD), 'tasks.md');
    assert.deepEqual(
      tasks.map((t) => [t.id, t.type, t.parent ?? null, t.description, t.checked, t.line]),
      [
        ['1', 'parent', null, 'Implement authentication endpoints', false, 6],
        ['1.1', 'subtask', '1', 'Create login endpoint', true, 7],
        ['1.2', 'subtask', '1', 'Implement JWT validation', false, 8],
        ['1.3', 'subtask', '1', 'Add session management', false, 12],
        ['2', 'parent', null, 'Documentation', false, 19],
        ['2.1', 'subtask', '2', 'Write the API docs', false, 20],
      ],
    );
    const t12 = tasks.find((t) => t.id === '1.2')!;
    assert.equal(t12.validate, 'npm test -- jwt');
    assert.deepEqual(t12.files, ['src/auth/', 'test/auth/']);
    assert.deepEqual(tasks.find((t) => t.id === '1.3')!.depends, ['1.2']);
    // The offset points at the character between the brackets, in bytes (the title line has a multi-byte ✓).
    for (const t of tasks)
      assert.equal(
        Buffer.from(MD)
          .subarray(t.boxOffset - 1, t.boxOffset + 2)
          .toString(),
        t.checked ? '[x]' : '[ ]',
      );
  });

  it('names the file and the line of a parse error', () => {
    const bad: Array<[string, RegExp]> = [
      ['- [ ] 1. A\n  - [ ] Untitled thing\n', /^tasks\.md:2: expected a numbered task/],
      ['- [ ] 1. A\n  - [ ] 2.1 Wrong parent\n', /^tasks\.md:2: subtask 2\.1 must come under its parent task 2\./],
      ['- [ ] 1. A\n- [ ] 1.1 Not indented\n', /^tasks\.md:2: subtask 1\.1 must be indented/],
      ['- [ ] 1. A\n  - [ ] 1.1 B\n    - [ ] 1.1.1 C\n', /^tasks\.md:3: task 1\.1\.1: only parent tasks/],
      ['- [ ] 1. A\n  - [ ] 1.1 B\n  - [x] 1.1 B again\n', /^tasks\.md:3: task 1\.1 is listed twice \(also line 2\)/],
      ['- [ ] 1. A\n  - [ ] 1.1 B\n    - depends: 4.4\n', /^tasks\.md:2: task 1\.1 depends on "4\.4", which is not a subtask/],
      ['- [ ] 1. A\n  - [ ] 1.1 B\n    - validate:\n', /^tasks\.md:3: validate: needs a command/],
    ];
    for (const [text, message] of bad)
      assert.throws(
        () => parseTasksMd(Buffer.from(text), 'tasks.md'),
        (err: SpecTasksError) => message.test(err.message),
      );
  });

  it('sync: generates tasks.json in the spec shape, keeps attempts, timestamps, notes and added fields, and is stable', async () => {
    const { paths, jsonFile } = specProject();
    const first = await syncSpec(paths, 'auth-feature');
    assert.equal(first.changed, true);
    const doc = JSON.parse(readFileSync(jsonFile, 'utf8'));
    assert.deepEqual(Object.keys(doc), ['$schema', 'version', 'spec', 'spec_path', 'created', 'updated', 'tasks', 'summary']);
    assert.equal(doc.spec_path, '.agent-os/specs/auth-feature/');
    assert.deepEqual(doc.tasks[0], {
      id: '1',
      type: 'parent',
      description: 'Implement authentication endpoints',
      status: 'in_progress',
      subtasks: ['1.1', '1.2', '1.3'],
      progress_percent: 33,
    });
    assert.deepEqual(doc.tasks[1], {
      id: '1.1',
      type: 'subtask',
      parent: '1',
      description: 'Create login endpoint',
      status: 'pass',
      attempts: 0,
      completed_at: null,
      duration_minutes: null,
      notes: null,
    });
    assert.deepEqual(doc.summary, { total_tasks: 6, completed: 1, in_progress: 1, blocked: 0, pending: 4 });

    // Metadata only tasks.json keeps, and a field someone added, survive the next sync.
    doc.tasks[2] = { ...doc.tasks[2], attempts: 2, notes: 'JWKS fixed on attempt 2', status: 'fail', reviewer: 'ana' };
    doc.tasks[1] = { ...doc.tasks[1], attempts: 1, completed_at: '2025-12-07T11:30:00Z', duration_minutes: 45 };
    writeFileSync(jsonFile, JSON.stringify(doc, null, 2) + '\n');
    const text = readFileSync(jsonFile, 'utf8');
    const again = await syncSpec(paths, 'auth-feature');
    const merged = JSON.parse(readFileSync(jsonFile, 'utf8'));
    assert.deepEqual(merged.tasks[2], { ...doc.tasks[2], status: 'fail' });
    assert.deepEqual(merged.tasks[1], doc.tasks[1]);
    assert.equal(again.changed, false, 'nothing new in tasks.md: tasks.json is left as it is');
    assert.equal(readFileSync(jsonFile, 'utf8'), text, 'not even updated moves');

    // A new subtask in tasks.md appears in tasks.json, its parent's progress follows.
    writeFileSync(
      paths.specTasksMd('auth-feature'),
      MD.replace('  - [ ] 2.1 Write the API docs', '  - [ ] 2.1 Write the API docs\r\n  - [x] 2.2 Publish them'),
    );
    assert.equal((await syncSpec(paths, 'auth-feature')).changed, true);
    const grown = JSON.parse(readFileSync(jsonFile, 'utf8'));
    assert.deepEqual(grown.tasks.at(-3).subtasks, ['2.1', '2.2']);
    assert.equal(grown.tasks.at(-3).progress_percent, 50);
    assert.equal(grown.created, doc.created, 'created is kept');
  });

  it('completing a subtask changes exactly one byte of tasks.md (and the parent box when its last subtask is done)', async () => {
    const { paths, mdFile, jsonFile } = specProject();
    await syncSpec(paths, 'auth-feature');
    const before = readFileSync(mdFile);
    await recordSpecResult(paths, 'auth-feature', '1.2', { kind: 'dispatched' });
    assert.deepEqual(readFileSync(mdFile), before, 'a dispatch does not touch tasks.md');
    const ticked = await recordSpecResult(paths, 'auth-feature', '1.2', {
      kind: 'completed',
      completedAt: '2025-12-08T14:30:00Z',
      durationMinutes: 15,
    });
    assert.deepEqual(ticked, ['1.2']);
    const after = readFileSync(mdFile);
    const changed = diffBytes(before, after);
    assert.equal(changed.length, 1);
    assert.equal(after.subarray(changed[0]! - 1, changed[0]! + 2).toString(), '[x]');
    assert.equal(after.toString().split('\r\n')[7], '  - [x] 1.2 Implement JWT validation');
    const t = JSON.parse(readFileSync(jsonFile, 'utf8')).tasks.find((x: { id: string }) => x.id === '1.2');
    assert.deepEqual([t.status, t.attempts, t.completed_at, t.duration_minutes], ['pass', 1, '2025-12-08T14:30:00Z', 15]);

    const last = await recordSpecResult(paths, 'auth-feature', '1.3', {
      kind: 'completed',
      completedAt: '2025-12-08T15:00:00Z',
      durationMinutes: 5,
    });
    assert.deepEqual(last, ['1.3', '1']);
    const final = readFileSync(mdFile);
    assert.equal(diffBytes(after, final).length, 2);
    assert.match(final.toString(), /^- \[x\] 1\. Implement authentication endpoints\r$/m);
    const parent = JSON.parse(readFileSync(jsonFile, 'utf8')).tasks[0];
    assert.deepEqual([parent.status, parent.progress_percent], ['pass', 100]);
  });

  it('round trip: results into tasks.json and back into tasks.md agree, and everything a person wrote is kept', async () => {
    const { paths, mdFile, jsonFile } = specProject();
    await syncSpec(paths, 'auth-feature');
    await recordSpecResult(paths, 'auth-feature', '2.1', { kind: 'dispatched' });
    await recordSpecResult(paths, 'auth-feature', '2.1', { kind: 'failed', permanent: false, note: '[TEST_FAIL] docs lint failed' });
    await recordSpecResult(paths, 'auth-feature', '1.3', {
      kind: 'failed',
      permanent: true,
      note: '[DEPENDENCY] Blocked by failed dependency 1.2',
    });
    await recordSpecResult(paths, 'auth-feature', '1.2', { kind: 'completed', completedAt: '2025-12-08T14:30:00Z', durationMinutes: 15 });

    // md → json: every box agrees with a status.
    const md = parseTasksMd(readFileSync(mdFile), 'tasks.md');
    const json = JSON.parse(readFileSync(jsonFile, 'utf8'));
    for (const t of md.filter((x) => x.type === 'subtask')) {
      const j = json.tasks.find((x: { id: string }) => x.id === t.id);
      assert.equal(j.status === 'pass', t.checked, `${t.id}: box ${t.checked} vs status ${j.status}`);
      assert.equal(j.description, t.description);
    }
    assert.deepEqual(
      json.tasks.map((t: { id: string; status: string }) => `${t.id}:${t.status}`),
      ['1:blocked', '1.1:pass', '1.2:pass', '1.3:blocked', '2:in_progress', '2.1:fail'],
    );
    assert.equal(json.tasks.find((t: { id: string }) => t.id === '2.1').notes, '[TEST_FAIL] docs lint failed');
    assert.deepEqual(json.summary, { total_tasks: 6, completed: 2, in_progress: 1, blocked: 2, pending: 1 });

    // json → md: the file is the original with exactly the ticked boxes changed.
    const expected = MD.replace('  - [ ] 1.2 Implement JWT validation', '  - [x] 1.2 Implement JWT validation');
    assert.equal(readFileSync(mdFile, 'utf8'), expected);

    // A person empties a box: the next sync reopens the task, and keeps its attempts.
    writeFileSync(mdFile, expected.replace('  - [x] 1.1 Create login endpoint', '  - [ ] 1.1 Create login endpoint'));
    await syncSpec(paths, 'auth-feature');
    const reopened = JSON.parse(readFileSync(jsonFile, 'utf8')).tasks.find((t: { id: string }) => t.id === '1.1');
    assert.deepEqual([reopened.status, reopened.completed_at], ['pending', null]);
  });

  it('never overwrites an unreadable tasks.json and names the file and line', async () => {
    const { root, paths, jsonFile } = specProject();
    mkdirSync(dirname(jsonFile), { recursive: true });
    writeFileSync(jsonFile, '{\n  "tasks": [\n    {"id": "1.1", "status": "done"}\n  ]\n}\n');
    const before = snapshot(root);
    await assert.rejects(
      syncSpec(paths, 'auth-feature'),
      /^SpecTasksError: \.agent-os\/tasks\/auth-feature\/tasks\.json: tasks\[0\]\.status: expected one of pending/,
    );
    writeFileSync(jsonFile, '{\n  "tasks": [,]\n}\n');
    const before2 = snapshot(root);
    await assert.rejects(syncSpec(paths, 'auth-feature'), /tasks\.json: invalid JSON at line 2, column 13/);
    assertUnchanged(before2, root, 'unreadable tasks.json');
    assert.ok(before.size > 0);
  });

  it('makes harness task ids that follow the task id rule', () => {
    assert.equal(specTaskId('auth-feature', '1.2'), 'spec-auth-feature-1.2');
    assert.equal(specTaskId('my spec/with:odd..chars', '10.11'), 'spec-my-spec-with-odd.chars-10.11');
    const long = specTaskId('x'.repeat(100), '1.1');
    assert.equal(long.length, 64);
    assert.match(long, /^spec-x+-1\.1$/);
  });
});
