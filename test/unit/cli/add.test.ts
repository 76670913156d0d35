// launchpad add: ids, fields, validation of the options, the INIT line, where the harness is found.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { startCli } from '../helpers/cli';
import { makeRepo } from '../helpers/gitRepo';
import { tempDir } from '../helpers/tmp';
import { assertUnchanged, cli, progressEntries, progressLines, rawTask, readTasks, snapshot, stateRoot, taskById, TASKS } from './util';

function initialized(): string {
  const dir = makeRepo();
  cli(['init'], { cwd: dir });
  return dir;
}

describe('launchpad add', () => {
  it('assigns task-001, task-002, task-003 and prints only the id on stdout', () => {
    const dir = initialized();
    for (const id of ['task-001', 'task-002', 'task-003']) {
      const r = cli(['add', `title of ${id}`, '--validate', 'true'], { cwd: dir });
      assert.equal(r.stdout, `${id}\n`);
      assert.equal(r.stderr, '');
    }
    assert.deepEqual(
      readTasks(dir).tasks.map((t) => t.id),
      ['task-001', 'task-002', 'task-003'],
    );
  });

  it('continues after the highest hand-written task-NNN (task-041 → task-042), ignoring other ids', () => {
    const dir = stateRoot({
      version: 3,
      tasks: [rawTask('task-007'), rawTask('task-041'), rawTask('setup'), rawTask('task-abc'), rawTask('task-9x'), rawTask('task-003')],
    });
    assert.equal(cli(['add', 'next'], { cwd: dir }).stdout, 'task-042\n');
    assert.equal(cli(['add', 'next again'], { cwd: dir }).stdout, 'task-043\n');
  });

  it('goes past task-999 to task-1000', () => {
    const dir = stateRoot({ version: 3, tasks: [rawTask('task-999')] });
    assert.equal(cli(['add', 'x'], { cwd: dir }).stdout, 'task-1000\n');
  });

  it('stores every option in the task, with the documented defaults for the rest', () => {
    const dir = initialized();
    cli(['add', 'base', '--validate', 'true'], { cwd: dir });
    cli(
      [
        'add',
        '  Add OAuth providers  ',
        '--context',
        'use passport.js',
        '--priority',
        'P0',
        '--depends-on',
        ' task-001 ,',
        '--files',
        'src/auth/oauth/,src/x.ts',
        '--protect',
        'test/oauth/,test/x.test.ts',
        '--validate',
        'npm test -- oauth',
        '--timeout',
        '180',
        '--max-attempts',
        '5',
      ],
      { cwd: dir },
    );
    const t = taskById(dir, 'task-002');
    assert.equal(t.title, 'Add OAuth providers');
    assert.equal(t.status, 'pending');
    assert.equal(t.priority, 'P0');
    assert.deepEqual(t.depends_on, ['task-001']);
    assert.deepEqual(t.files_hint, ['src/auth/oauth/', 'src/x.ts']);
    assert.deepEqual(t.protected_paths, ['test/oauth/', 'test/x.test.ts']);
    assert.equal(t.context, 'use passport.js');
    assert.deepEqual(t.validation, { command: 'npm test -- oauth', timeout_seconds: 180 });
    assert.equal(t.attempts, 0);
    assert.equal(t.max_attempts, 5);
    assert.deepEqual(t.error_log, []);

    const d = taskById(dir, 'task-001');
    assert.equal(d.priority, 'P1');
    assert.deepEqual(d.depends_on, []);
    assert.equal(d.max_attempts, 3);
    assert.deepEqual(d.files_hint, []);
    assert.equal(d.protected_paths, undefined);
  });

  it('logs exactly one INIT line naming the new task, in the log grammar', () => {
    const dir = initialized();
    const before = progressLines(dir);
    cli(['add', 'Add rate limiting', '--priority', 'P2', '--validate', 'npm test'], { cwd: dir });
    const lines = progressLines(dir);
    assert.deepEqual(lines.slice(0, before.length), before, 'the log was rewritten, not appended');
    assert.equal(lines.length, before.length + 1);
    const entry = progressEntries(dir).at(-1)!;
    assert.equal(entry.type, 'INIT');
    assert.equal(entry.taskId, 'task-001');
    assert.equal(entry.session, 0);
    assert.match(entry.message, /"Add rate limiting".*priority=P2.*validation="npm test"/);
  });

  it('a title with newlines stays one log line (escaped) and is stored as given', () => {
    const dir = initialized();
    const before = progressLines(dir).length;
    cli(['add', 'two\nlines\r\nhere', '--validate', 'true'], { cwd: dir });
    assert.equal(progressLines(dir).length, before + 1);
    assert.ok(progressLines(dir).at(-1)!.includes('two\\nlines\\r\\nhere'));
    assert.equal(taskById(dir, 'task-001').title, 'two\nlines\r\nhere');
  });

  it('warns on stderr when the task has no validation command (a run would never start it)', () => {
    const dir = initialized();
    const r = cli(['add', 'no proof'], { cwd: dir });
    assert.equal(r.stdout, 'task-001\n');
    assert.match(r.stderr, /task-001 has no validation command/);
    assert.equal((taskById(dir, 'task-001').validation as { command: unknown }).command, null);
  });

  it('writes atomically: the previous file becomes .bak byte for byte, no .tmp is left', () => {
    const dir = initialized();
    cli(['add', 'one'], { cwd: dir });
    const previous = readFileSync(join(dir, TASKS), 'utf8');
    cli(['add', 'two'], { cwd: dir });
    assert.equal(readFileSync(join(dir, `${TASKS}.bak`), 'utf8'), previous);
    assert.ok(!existsSync(join(dir, `${TASKS}.tmp`)));
    assert.ok(!existsSync(join(dir, '.launchpad', 'state.lock')), 'the state lock was not released');
  });

  const rejected: Array<[string, string[], RegExp]> = [
    ['an unknown --priority', ['--priority', 'P3'], /--priority: expected P0, P1 or P2, got "P3"/],
    ['a lower-case --priority', ['--priority', 'p1'], /--priority: expected P0, P1 or P2, got "p1"/],
    ['an unknown dependency', ['--depends-on', 'task-001,task-404'], /--depends-on: no task "task-404" in harness-tasks\.json/],
    ['an invalid dependency id', ['--depends-on', '$(rm -rf ~)'], /--depends-on: "\$\(rm -rf ~\)" is not a valid task id/],
    ['--timeout 0', ['--timeout', '0'], /--timeout: expected a number greater than 0, got "0"/],
    ['a negative --timeout', ['--timeout=-5'], /--timeout: expected a number greater than 0, got "-5"/],
    ['a non-numeric --timeout', ['--timeout', '10m'], /--timeout: .*got "10m"/],
    ['--max-attempts 0', ['--max-attempts', '0'], /--max-attempts: expected a whole number of at least 1, got "0"/],
    ['a fractional --max-attempts', ['--max-attempts', '2.5'], /--max-attempts: expected a whole number .*got "2\.5"/],
    ['a non-numeric --max-attempts', ['--max-attempts', 'many'], /--max-attempts: .*got "many"/],
    [
      'a --protect path outside the state root',
      ['--protect', 'tests,../x'],
      /--protect: a path relative to the state root, without "\.\."/,
    ],
    ['an unknown option', ['--prio', 'P0'], /Unknown option '--prio'/],
  ];
  for (const [what, options, message] of rejected) {
    it(`rejects ${what}: exit 2, the option named, nothing written`, () => {
      const dir = initialized();
      cli(['add', 'first', '--validate', 'true'], { cwd: dir });
      const before = snapshot(dir);
      const r = cli(['add', 'second', ...options], { cwd: dir }, 2);
      assert.match(r.stderr, message);
      assert.equal(r.stdout, '');
      assertUnchanged(before, dir, `add ${options.join(' ')}`);
    });
  }

  it('rejects an empty title: exit 2, nothing written', () => {
    const dir = initialized();
    cli(['add', 'first'], { cwd: dir });
    const before = snapshot(dir);
    const r = cli(['add', '   '], { cwd: dir }, 2);
    assert.match(r.stderr, /title: must not be empty/);
    assertUnchanged(before, dir, 'add "   "');
  });

  it('from a subdirectory: the harness is found upward and no nested one is created', () => {
    const dir = initialized();
    const sub = join(dir, 'src', 'deep', 'er');
    mkdirSync(sub, { recursive: true });
    assert.equal(cli(['add', 'from below'], { cwd: sub }).stdout, 'task-001\n');
    assert.equal(taskById(dir, 'task-001').title, 'from below');
    assert.ok(!existsSync(join(sub, TASKS)));
    assert.ok(!existsSync(join(sub, '.launchpad')));
  });

  it('with --dir (global or after the command) and HARNESS_STATE_ROOT; --dir wins over the variable', () => {
    const a = initialized();
    const b = initialized();
    const elsewhere = tempDir();
    cli(['--dir', a, 'add', 'global dir'], { cwd: elsewhere });
    cli(['add', 'command dir', '--dir', a], { cwd: elsewhere });
    cli(['add', 'from env'], { cwd: elsewhere, env: { HARNESS_STATE_ROOT: b } });
    cli(['add', 'dir beats env', '--dir', a], { cwd: elsewhere, env: { HARNESS_STATE_ROOT: b } });
    assert.deepEqual(
      readTasks(a).tasks.map((t) => t.title),
      ['global dir', 'command dir', 'dir beats env'],
    );
    assert.deepEqual(
      readTasks(b).tasks.map((t) => t.title),
      ['from env'],
    );
  });

  it('HARNESS_STATE_ROOT wins over a harness found upward', () => {
    const here = initialized();
    const there = initialized();
    cli(['add', 'to there'], { cwd: here, env: { HARNESS_STATE_ROOT: there } });
    assert.equal(readTasks(here).tasks.length, 0);
    assert.equal(readTasks(there).tasks.length, 1);
  });

  it('--dir or HARNESS_STATE_ROOT without a harness: exit 2 naming the file, and nothing is created there', () => {
    const cwd = tempDir();
    const missing = join(tempDir(), 'not', 'yet');
    const empty = tempDir();
    let r = cli(['add', 'x', '--dir', missing], { cwd }, 2);
    assert.match(r.stderr, /harness-tasks\.json: not found in .*not\/yet; run "launchpad init" first/);
    assert.ok(!existsSync(join(missing, '..')), 'add created the --dir folders');
    r = cli(['add', 'x'], { cwd, env: { HARNESS_STATE_ROOT: empty } }, 2);
    assert.match(r.stderr, /harness-tasks\.json: not found/);
    assert.deepEqual(snapshot(empty), new Map());
  });

  it('eight adds at once: each gets its own id, none is lost, one INIT line each', async () => {
    const dir = initialized();
    const runs = Array.from({ length: 8 }, (_, i) => startCli(['add', `parallel ${i}`], { cwd: dir }));
    const results = await Promise.all(runs.map((r) => r.done));
    for (const r of results) assert.equal(r.code, 0, r.stderr);
    const printed = results.map((r) => r.stdout.trim()).sort();
    const expected = Array.from({ length: 8 }, (_, i) => `task-00${i + 1}`);
    assert.deepEqual(printed, expected);
    const tasks = readTasks(dir).tasks;
    assert.deepEqual(tasks.map((t) => t.id).sort(), expected);
    assert.deepEqual(
      tasks.map((t) => t.title).sort(),
      Array.from({ length: 8 }, (_, i) => `parallel ${i}`),
    );
    const inits = progressEntries(dir).filter((e) => e.type === 'INIT' && e.taskId);
    assert.deepEqual(inits.map((e) => e.taskId).sort(), expected);
  });

  it('a title that starts with "-" is added after "--"; without it the error says how', () => {
    const dir = initialized();
    assert.equal(cli(['add', '--validate', 'true', '--', '-v prints the version'], { cwd: dir }).stdout, 'task-001\n');
    assert.equal(taskById(dir, 'task-001').title, '-v prints the version');
    const before = snapshot(dir);
    const r = cli(['add', '-v prints the version'], { cwd: dir }, 2);
    assert.match(
      r.stderr,
      /add: Unknown option '-v' \(an argument that starts with "-" goes after "--": launchpad add -- '-v prints the version'\)/,
    );
    assertUnchanged(before, dir, 'add -v…');
    assert.match(
      cli(['add', 'x', '--prio', 'P0'], { cwd: dir }, 2).stderr,
      /Unknown option '--prio' \(launchpad add --help lists the options\)/,
    );
  });
});
