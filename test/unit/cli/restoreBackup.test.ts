// A person's edit is never replaced by a stale backup: `run` restores harness-tasks.json.bak by
// itself only over the file Launchpad last wrote, `restore-backup` does it when asked, and an
// id once handed out is never handed out again. Real repositories, the built CLI.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { StatePaths } from '../../../src/core/statePaths';
import { recordWrite } from '../../../src/core/taskFile/store';
import { makeRepo } from '../helpers/gitRepo';
import { cli, PROGRESS, progressEntries, readTasks, TASKS } from './util';

/** init; add First; add Second: the .bak is the file before the second add. */
function twoAdded(): string {
  const repo = makeRepo();
  cli(['init'], { cwd: repo });
  assert.equal(cli(['add', 'First', '--validate', 'true'], { cwd: repo }).stdout, 'task-001\n');
  assert.equal(cli(['add', 'Second', '--validate', 'true'], { cwd: repo }).stdout, 'task-002\n');
  return repo;
}

const bytes = (repo: string, name: string) => readFileSync(join(repo, name));
const corruptCopies = (repo: string) => readdirSync(repo).filter((n) => n.startsWith(`${TASKS}.corrupt-`));

describe('a broken harness-tasks.json and its backup', function () {
  this.timeout(60_000);

  const edits: Array<[string, (text: string) => string, RegExp]> = [
    [
      'a syntax error (a trailing comma)',
      (t) => t.replace(/("title": "Second",)/, '$1,'),
      /harness-tasks\.json: invalid JSON at line (\d+), column (\d+): /,
    ],
    [
      'a schema error ("priority": "high")',
      (t) => t.replace(/("id": "task-002",[\s\S]*?"priority": )"P1"/, '$1"high"'),
      /harness-tasks\.json: tasks\[1\]\.priority: expected one of "P0", "P1", "P2", got "high"/,
    ],
  ];
  for (const [what, edit, problem] of edits) {
    it(`${what} made by hand: run exits 2 naming file, line, column and field; both files byte for byte; ids not reused`, () => {
      const repo = twoAdded();
      const text = readFileSync(join(repo, TASKS), 'utf8');
      const edited = edit(text);
      assert.notEqual(edited, text);
      writeFileSync(join(repo, TASKS), edited);
      const [tasks, bak] = [bytes(repo, TASKS), bytes(repo, `${TASKS}.bak`)];

      const r = cli(['run'], { cwd: repo }, 2);
      const out = r.stdout + r.stderr;
      assert.match(out, problem);
      assert.match(out, /changed since Launchpad last wrote it, so it is not replaced by the older harness-tasks\.json\.bak/);
      assert.match(out, /at line \d+, column \d+|line \d+, column \d+ by hand/);
      if (what.startsWith('a schema')) assert.match(out, /fix tasks\[1\]\.priority at line \d+, column 19 by hand/);
      assert.match(out, /launchpad restore-backup/);
      assert.ok(bytes(repo, TASKS).equals(tasks), 'harness-tasks.json changed');
      assert.ok(bytes(repo, `${TASKS}.bak`).equals(bak), 'harness-tasks.json.bak changed');
      assert.deepEqual(corruptCopies(repo), []);
      const last = progressEntries(repo).at(-1)!;
      assert.equal(last.type, 'ERROR');
      assert.equal(last.category, 'ENV_SETUP');
      assert.match(last.message, /changed since Launchpad last wrote it: not restored from \.bak/);

      // status points at restore-backup, not at a run.
      const s = cli(['status'], { cwd: repo }, 2);
      assert.match(s.stderr, /harness-tasks\.json\.bak is valid: fix .* by hand, or run "launchpad restore-backup"/);
      assert.doesNotMatch(s.stderr, /launchpad run/);

      // Asked for, the backup comes back; the broken file is kept; the log says so.
      const restored = cli(['restore-backup'], { cwd: repo });
      assert.match(restored.stdout, /^restored harness-tasks\.json from harness-tasks\.json\.bak \(1 task\)$/m);
      const [copy] = corruptCopies(repo);
      assert.ok(copy, 'the broken file is kept');
      assert.ok(bytes(repo, copy).equals(tasks));
      assert.ok(bytes(repo, TASKS).equals(bak));
      const recovery = progressEntries(repo).at(-1)!;
      assert.equal(recovery.type, 'RECOVERY');
      assert.match(
        recovery.message,
        /^action="restored harness-tasks\.json from \.bak" reason="requested by user \(launchpad restore-backup\): harness-tasks\.json: .*" kept=.*\.corrupt-/,
      );

      // task-002 was handed out once (the log says so): the next add gives task-003.
      assert.equal(cli(['add', 'Third'], { cwd: repo }).stdout, 'task-003\n');
      assert.deepEqual(
        readTasks(repo).tasks.map((t) => t.id),
        ['task-001', 'task-003'],
      );
    });
  }

  it('the file Launchpad itself last wrote is restored by run, the broken one kept, a RECOVERY line logged', () => {
    const repo = makeRepo();
    cli(['init'], { cwd: repo });
    cli(['add', 'First', '--validate', 'true'], { cwd: repo });
    const bak = bytes(repo, `${TASKS}.bak`);
    // Bytes this version refuses but an earlier one wrote (no limit on titles then), and their record.
    const broken = readFileSync(join(repo, TASKS), 'utf8').replace('"First"', JSON.stringify('x'.repeat(600)));
    writeFileSync(join(repo, TASKS), broken);
    recordWrite(new StatePaths(repo), broken);

    const r = cli(['run'], { cwd: repo });
    assert.match(
      r.stdout,
      /RECOVERY action="restored harness-tasks\.json from \.bak" reason="harness-tasks\.json: tasks\[0\]\.title: must be at most 500 characters long, got 600 \(in task-001\)" kept=/,
    );
    const [copy] = corruptCopies(repo);
    assert.equal(readFileSync(join(repo, copy!), 'utf8'), broken);
    assert.equal(readTasks(repo).tasks.length, 0, 'the backup (before the add) is in place');
    assert.ok(bak.length > 0);
  });

  it('a person removing the last task by hand does not get its id again', () => {
    const repo = twoAdded();
    const file = readTasks(repo);
    assert.equal(file.last_task_number, 2);
    file.tasks = file.tasks.filter((t) => t.id !== 'task-002');
    writeFileSync(join(repo, TASKS), JSON.stringify(file, null, 2));
    assert.equal(cli(['add', 'Again'], { cwd: repo }).stdout, 'task-003\n');
    // Without last_task_number (an older file), the log's "task added" lines still know task-003.
    const older = readTasks(repo);
    delete older.last_task_number;
    older.tasks = older.tasks.filter((t) => t.id !== 'task-003');
    writeFileSync(join(repo, TASKS), JSON.stringify(older, null, 2));
    assert.equal(cli(['add', 'Once more'], { cwd: repo }).stdout, 'task-004\n');
  });

  describe('restore-backup refuses and changes nothing', () => {
    it('when the file is valid', () => {
      const repo = twoAdded();
      const before = [bytes(repo, TASKS), bytes(repo, `${TASKS}.bak`), bytes(repo, PROGRESS)];
      const r = cli(['restore-backup'], { cwd: repo }, 2);
      assert.match(r.stderr, /harness-tasks\.json is valid: nothing to restore/);
      assert.deepEqual([bytes(repo, TASKS), bytes(repo, `${TASKS}.bak`), bytes(repo, PROGRESS)], before);
    });

    it('when the backup is invalid too, naming the backup and its field', () => {
      const repo = twoAdded();
      writeFileSync(join(repo, TASKS), '{"tasks": [');
      writeFileSync(join(repo, `${TASKS}.bak`), '{"tasks": [{"id": "task-001", "status": "pending"}]}');
      const before = [bytes(repo, TASKS), bytes(repo, `${TASKS}.bak`), bytes(repo, PROGRESS)];
      const r = cli(['restore-backup'], { cwd: repo }, 2);
      assert.match(r.stderr, /harness-tasks\.json\.bak: tasks\[0\]\.title: required field is missing/);
      assert.match(r.stderr, /nothing was restored, both files were left as they are/);
      assert.deepEqual([bytes(repo, TASKS), bytes(repo, `${TASKS}.bak`), bytes(repo, PROGRESS)], before);
      assert.deepEqual(corruptCopies(repo), []);
    });

    it('when there is no backup', () => {
      const repo = makeRepo();
      cli(['init'], { cwd: repo });
      writeFileSync(join(repo, TASKS), '{"tasks": [');
      const r = cli(['restore-backup'], { cwd: repo }, 2);
      assert.match(r.stderr, /no harness-tasks\.json\.bak to restore from; nothing was changed/);
      assert.equal(readFileSync(join(repo, TASKS), 'utf8'), '{"tasks": [');
    });
  });
});
