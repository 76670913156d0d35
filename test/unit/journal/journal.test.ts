// The journal: appends (ids, validation, the atomic write, the lock), a corrupt progress.json
// never overwritten, progress.md regenerated from it, and archiving past 500 entries.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { JournalEntry } from '../../../src/core/journal/entrySchema';
import { Journal, JournalEntryError } from '../../../src/core/journal/journal';
import { JournalFileError } from '../../../src/core/journal/journalFile';
import { JournalPaths } from '../../../src/core/journal/journalPaths';
import { StatePaths } from '../../../src/core/statePaths';
import { assertUnchanged, snapshot } from '../cli/util';
import { cli, journalEntries, JSON_FILE, MD_FILE, project, read, tempDir } from './support';

const at = (iso: string) => new Date(iso);

describe('journal: append', function () {
  this.timeout(60_000);

  it('adds an entry with `journal add`, prints its id, writes progress.json with its metadata and progress.md', () => {
    const root = project();
    const r = cli(['journal', 'add', 'debug_resolved', '--issue', 'JWKS endpoint missing', '--resolution', 'added JWKS_URI to the env'], {
      cwd: root,
    });
    assert.match(r.stdout, /^entry-\d{8}-\d{6}\n$/);
    const doc = JSON.parse(read(root, JSON_FILE));
    assert.equal(doc.version, '1.0');
    assert.equal(doc.entries.length, 1);
    const e = doc.entries[0];
    assert.deepEqual(Object.keys(e), ['id', 'timestamp', 'type', 'issue', 'resolution']);
    assert.equal(e.id, r.stdout.trim());
    assert.equal(e.id, `entry-${e.timestamp.slice(0, 10).replace(/-/g, '')}-${e.timestamp.slice(11, 19).replace(/:/g, '')}`);
    assert.deepEqual(doc.metadata, { total_entries: 1, oldest_entry: e.timestamp, last_updated: e.timestamp });
    assert.match(
      read(root, MD_FILE),
      /### \d\d:\d\d - Debug Resolved\n- \*\*Issue\*\*: JWKS endpoint missing\n- \*\*Resolution\*\*: added JWKS_URI to the env\n/,
    );
    assert.ok(!existsSync(join(root, `${JSON_FILE}.tmp`)), 'no temp file left');
    assert.ok(!existsSync(join(root, '.launchpad', 'journal.lock')), 'lock released');

    const steps = cli(['journal', 'add', 'session_ended', '--summary', 'auth done', '--next-steps', 'Task 1.3', '--next-steps', 'review'], {
      cwd: root,
    });
    assert.equal(steps.code, 0);
    assert.deepEqual(journalEntries(root)[1]!.next_steps, ['Task 1.3', 'review']);
    const override = cli(
      ['journal', 'add', 'scope_override', '--requested-tasks', '1.1,1.2', '--reason', 'user_override', '--note', 'one go'],
      { cwd: root },
    );
    assert.equal(override.code, 0);
    assert.deepEqual(journalEntries(root)[2]!.requested_tasks, ['1.1', '1.2']);
  });

  it('gives entries of the same second ids with -2, -3', async () => {
    const root = project();
    const journal = new Journal(new JournalPaths(new StatePaths(root)));
    const now = at('2025-12-08T14:30:00.250Z');
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await journal.append({ type: 'debug_resolved', issue: `i${i}`, resolution: 'r' }, now)).id);
    assert.deepEqual(ids, ['entry-20251208-143000', 'entry-20251208-143000-2', 'entry-20251208-143000-3']);
    assert.deepEqual(
      journalEntries(root).map((e) => e.timestamp),
      Array(3).fill('2025-12-08T14:30:00Z'),
    );
  });

  it('refuses a bad entry naming the field (exit 2) and changes nothing', async () => {
    const root = project();
    cli(['journal', 'add', 'debug_resolved', '--issue', 'a', '--resolution', 'b'], { cwd: root });
    const before = snapshot(root);

    const missing = cli(['journal', 'add', 'task_blocked', '--spec', 'auth', '--task-id', '1.2'], { cwd: root }, 2);
    assert.match(missing.stderr, /task_blocked: --issue is required/);
    const empty = cli(['journal', 'add', 'task_blocked', '--spec', 'auth', '--task-id', '1.2', '--issue', ''], { cwd: root }, 2);
    assert.match(empty.stderr, /journal entry task_blocked: issue: must not be empty/);
    const wrongField = cli(['journal', 'add', 'session_started', '--spec', 'a', '--focus-task', '1', '--issue', 'x'], { cwd: root }, 2);
    assert.match(wrongField.stderr, /--issue is not one of its fields/);
    const duration = cli(
      ['journal', 'add', 'task_completed', '--spec', 'a', '--task-id', '1', '--duration-minutes', 'soon'],
      { cwd: root },
      2,
    );
    assert.match(duration.stderr, /--duration-minutes: expected a number/);
    const type = cli(['journal', 'add', 'lunch_break'], { cwd: root }, 2);
    assert.match(type.stderr, /expected an entry type \(session_started, task_completed/);
    assertUnchanged(before, root, 'refused entries');

    // The core refuses the same way: the field is named, nothing is written.
    const journal = new Journal(new JournalPaths(new StatePaths(root)));
    await assert.rejects(
      journal.append({ type: 'task_completed', spec: 'auth', task_id: '1.2', duration_minutes: -3 }),
      (err: JournalEntryError) => {
        assert.equal(err.field, 'duration_minutes');
        assert.match(err.message, /task_completed: duration_minutes: must be at least 0/);
        return true;
      },
    );
    await assert.rejects(
      journal.append({ type: 'scope_override', requested_tasks: ['1'], reason: 'user_override', note: 'n' }),
      /requested_tasks: must have at least 2 items/,
    );
    assertUnchanged(before, root, 'refused entries (core)');
  });

  it('never overwrites a corrupt progress.json: exit 2 naming the file and line/column or the field', () => {
    const root = project();
    mkdirSync(join(root, '.agent-os/progress'), { recursive: true });
    const cases: Array<[string, RegExp]> = [
      [
        '{\n  "version": "1.0",\n  "entries": [\n    {"id": "x",}\n  ]\n}\n',
        /\.agent-os\/progress\/progress\.json: invalid JSON at line 4, column 16: trailing comma/,
      ],
      [
        JSON.stringify({
          version: '1.0',
          entries: [{ id: 'entry-20251208-143000', timestamp: '2025-12-08T14:30:00Z', type: 'task_blocked', spec: 'a', issue: 'x' }],
        }),
        /progress\.json: entries\[0\]\.task_id: required field is missing/,
      ],
      [
        JSON.stringify({ version: '1.0', entries: [{ id: 'e1', timestamp: 'yesterday', type: 'session_started' }] }),
        /entries\[0\]\.id: expected an id like entry-/,
      ],
      [JSON.stringify({ version: 2, entries: [] }), /progress\.json: version: expected "1\.0", got 2/],
      ['', /progress\.json: file is empty/],
    ];
    for (const [text, message] of cases) {
      writeFileSync(join(root, JSON_FILE), text);
      const before = snapshot(root);
      const r = cli(['journal', 'add', 'debug_resolved', '--issue', 'a', '--resolution', 'b'], { cwd: root }, 2);
      assert.match(r.stderr, message);
      assert.match(cli(['journal'], { cwd: root }, 2).stderr, message);
      assert.match(cli(['start', '--yes'], { cwd: root }, 2).stderr, message);
      assertUnchanged(before, root, `corrupt journal ${JSON.stringify(text.slice(0, 30))}`);
      assert.ok(!existsSync(join(root, MD_FILE)), 'progress.md not generated from a corrupt journal');
    }
  });

  it('regenerates progress.md from progress.json: dates newest first, entries newest first, --- between dates', async () => {
    const root = project();
    const journal = new Journal(new JournalPaths(new StatePaths(root)));
    await journal.append(
      {
        type: 'task_blocked',
        spec: 'auth-feature',
        task_id: '1.2',
        task_description: 'Implement JWT validation',
        issue: 'Missing JWKS endpoint configuration',
        resolution: 'Need to add JWKS_URI to environment config',
      },
      at('2025-12-07T16:20:00Z'),
    );
    await journal.append(
      {
        type: 'session_started',
        spec: 'auth-feature',
        focus_task: '1.2',
        context: "Continuing from yesterday's JWT implementation",
        environment: 'Dev server running on port 3000',
      },
      at('2025-12-08T13:45:00Z'),
    );
    await journal.append(
      {
        type: 'task_completed',
        spec: 'auth-feature',
        task_id: '1.2',
        task_description: 'Implement JWT validation',
        duration_minutes: 15,
        notes: 'Added refresh token support, all tests passing',
        next_task: '1.3',
      },
      at('2025-12-08T14:30:00Z'),
    );
    assert.equal(
      read(root, MD_FILE),
      [
        '# Agent OS Progress Log',
        '',
        '## 2025-12-08',
        '',
        '### 14:30 - Task Completed',
        '- **Spec**: auth-feature',
        '- **Task**: 1.2 - Implement JWT validation',
        '- **Status**: COMPLETED',
        '- **Duration**: ~15 minutes',
        '- **Notes**: Added refresh token support, all tests passing',
        '- **Next**: Task 1.3',
        '',
        '### 13:45 - Session Started',
        '- **Spec**: auth-feature',
        '- **Focus**: Task 1.2',
        "- **Context**: Continuing from yesterday's JWT implementation",
        '- **Environment**: Dev server running on port 3000',
        '',
        '---',
        '',
        '## 2025-12-07',
        '',
        '### 16:20 - Blocker Encountered',
        '- **Spec**: auth-feature',
        '- **Task**: 1.2 - Implement JWT validation',
        '- **Status**: BLOCKED',
        '- **Issue**: Missing JWKS endpoint configuration',
        '- **Resolution**: Need to add JWKS_URI to environment config',
        '',
      ].join('\n'),
    );
    // A person's edit of progress.md is not kept: it is regenerated from progress.json on the next append.
    writeFileSync(join(root, MD_FILE), 'scribbles\n');
    await journal.append({ type: 'debug_resolved', issue: 'JWKS', resolution: 'set' }, at('2025-12-08T15:00:00Z'));
    assert.match(read(root, MD_FILE), /^# Agent OS Progress Log\n\n## 2025-12-08\n\n### 15:00 - Debug Resolved\n/);
    const doc = JSON.parse(read(root, JSON_FILE));
    assert.deepEqual(doc.metadata, { total_entries: 4, oldest_entry: '2025-12-07T16:20:00Z', last_updated: '2025-12-08T15:00:00Z' });

    const printed = cli(['journal', '--last', '1'], { cwd: root }).stdout;
    assert.match(printed, /^# Agent OS Progress Log\n\n## 2025-12-08\n\n### 15:00 - Debug Resolved\n/);
    assert.ok(!printed.includes('Blocker'));
    const json = JSON.parse(cli(['journal', '--json', '--last', '2'], { cwd: root }).stdout);
    assert.deepEqual(
      json.entries.map((e: JournalEntry) => e.type),
      ['task_completed', 'debug_resolved'],
    );
  });

  it('needs a project: outside one, journal exits 2 and creates nothing', () => {
    const empty = tempDir();
    const r = cli(['journal', 'add', 'debug_resolved', '--issue', 'a', '--resolution', 'b'], { cwd: empty }, 2);
    assert.match(r.stderr, /not in a project: no harness-tasks\.json or \.agent-os\//);
    assert.deepEqual(readdirSync(empty), []);
  });
});

describe('journal: archive', function () {
  this.timeout(60_000);
  const NOW = at('2025-12-08T14:30:00Z');

  /** 500 entries: 60 in September, 40 in October (older than 30 days), 400 in the last two weeks. */
  function fullJournal(root: string): void {
    const entries: JournalEntry[] = [];
    const add = (iso: string, n: number) =>
      entries.push({
        id: `entry-${iso.slice(0, 10).replace(/-/g, '')}-${iso.slice(11, 19).replace(/:/g, '')}`,
        timestamp: iso,
        type: 'debug_resolved',
        issue: `issue ${n}`,
        resolution: 'fixed',
      });
    for (let i = 0; i < 60; i++) add(`2025-09-${String(1 + (i % 28)).padStart(2, '0')}T10:${String(i).padStart(2, '0')}:00Z`, i);
    for (let i = 0; i < 40; i++) add(`2025-10-${String(1 + (i % 28)).padStart(2, '0')}T11:${String(i).padStart(2, '0')}:00Z`, 60 + i);
    for (let i = 0; i < 400; i++)
      add(`2025-12-0${1 + (i % 7)}T${String(i % 24).padStart(2, '0')}:${String(Math.floor(i / 24)).padStart(2, '0')}:00Z`, 100 + i);
    mkdirSync(join(root, '.agent-os/progress'), { recursive: true });
    writeFileSync(
      join(root, JSON_FILE),
      JSON.stringify({ version: '1.0', entries, metadata: { total_entries: 500, oldest_entry: null, last_updated: null } }, null, 2),
    );
  }
  const archived = (root: string, month: string) => JSON.parse(read(root, `.agent-os/progress/archive/${month}.json`));

  it('at 501 entries moves those older than 30 days to archive/YYYY-MM.json; an interrupted archive run again duplicates nothing', async () => {
    const root = project();
    fullJournal(root);
    const journal = new Journal(new JournalPaths(new StatePaths(root)));

    // 500 entries: no archiving yet.
    const untouched = tempDir();
    copyFileSync(join(root, JSON_FILE), join(untouched, 'progress.json'));
    await journal.append({ type: 'debug_resolved', issue: 'the 501st', resolution: 'r' }, NOW);
    let doc = JSON.parse(read(root, JSON_FILE));
    assert.equal(doc.entries.length, 401);
    assert.ok(
      doc.entries.every((e: JournalEntry) => e.timestamp >= '2025-11-08'),
      'only the last 30 days stay',
    );
    assert.deepEqual(doc.metadata, { total_entries: 401, oldest_entry: '2025-12-01T00:00:00Z', last_updated: '2025-12-08T14:30:00Z' });
    assert.deepEqual(readdirSync(join(root, '.agent-os/progress/archive')).sort(), ['2025-09.json', '2025-10.json']);
    const sept = archived(root, '2025-09');
    assert.equal(sept.month, '2025-09');
    assert.equal(sept.entries.length, 60);
    assert.equal(archived(root, '2025-10').entries.length, 40);
    assert.deepEqual(
      sept.entries.map((e: JournalEntry) => e.timestamp),
      [...sept.entries.map((e: JournalEntry) => e.timestamp)].sort(),
      'sorted by time',
    );
    assert.ok(!read(root, MD_FILE).includes('## 2025-09'), 'archived entries leave progress.md');

    // A crash after the archive files were written but before progress.json was: the old
    // progress.json again, and the next append archives the same entries again.
    copyFileSync(join(untouched, 'progress.json'), join(root, JSON_FILE));
    await journal.append({ type: 'debug_resolved', issue: 'again', resolution: 'r' }, NOW);
    doc = JSON.parse(read(root, JSON_FILE));
    assert.equal(doc.entries.length, 401);
    for (const [month, n] of [
      ['2025-09', 60],
      ['2025-10', 40],
    ] as const) {
      const ids = archived(root, month).entries.map((e: JournalEntry) => e.id);
      assert.equal(ids.length, n, `${month}: no duplicates`);
      assert.equal(new Set(ids).size, n);
    }
  });

  it('merges into an existing month file; a corrupt archive file stops the append and nothing is written', async () => {
    const root = project();
    fullJournal(root);
    const archiveDir = join(root, '.agent-os/progress/archive');
    mkdirSync(archiveDir, { recursive: true });
    const earlier = {
      id: 'entry-20250901-090000',
      timestamp: '2025-09-01T09:00:00Z',
      type: 'debug_resolved',
      issue: 'archived before',
      resolution: 'r',
    };
    writeFileSync(join(archiveDir, '2025-09.json'), JSON.stringify({ version: '1.0', month: '2025-09', entries: [earlier] }));
    writeFileSync(join(archiveDir, '2025-10.json'), '{"version": "1.0", "month": "2025-10", "entries": [');
    const journal = new Journal(new JournalPaths(new StatePaths(root)));
    const before = snapshot(root);
    await assert.rejects(journal.append({ type: 'debug_resolved', issue: 'x', resolution: 'r' }, NOW), (err: JournalFileError) => {
      assert.match(err.message, /^\.agent-os\/progress\/archive\/2025-10\.json: invalid JSON at line 1, column \d+/);
      return true;
    });
    assertUnchanged(before, root, 'append stopped by a corrupt archive');

    writeFileSync(join(archiveDir, '2025-10.json'), JSON.stringify({ version: '1.0', month: '2025-10', entries: [] }));
    await journal.append({ type: 'debug_resolved', issue: 'x', resolution: 'r' }, NOW);
    const sept = archived(root, '2025-09').entries as JournalEntry[];
    assert.equal(sept.length, 61);
    assert.equal(sept[0]!.id, earlier.id, 'kept, in time order');
    assert.equal(readFileSync(join(archiveDir, '2025-09.json'), 'utf8').endsWith('\n'), true);
  });
});
