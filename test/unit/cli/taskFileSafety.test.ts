// The task file is never rewritten silently nor read forever: what a write would change or
// lose, and what is not a regular file, is refused up front (exit 2, file and field named,
// nothing changed). Real repositories, the built CLI: add, retry, run and status.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

import { runCli } from '../helpers/cli';
import { makeRepo } from '../helpers/gitRepo';
import { tempDir } from '../helpers/tmp';
import { cli, FIXTURES, rawTask, readTasks, TASKS } from './util';

const CORPUS = join(FIXTURES, 'bad-task-files');

/** A repository whose task file has one failed task (so retry has something to do) and one pending. */
function repoWith(
  file: unknown = {
    version: 3,
    tasks: [rawTask('task-001', { status: 'failed', attempts: 3, error_log: ['[TEST_FAIL] x'] }), rawTask('task-002')],
  },
): string {
  const repo = makeRepo();
  writeFileSync(join(repo, TASKS), typeof file === 'string' ? file : JSON.stringify(file, null, 2) + '\n');
  return repo;
}

/** What each command does to a file it must refuse: exit 2, `expect` in its output, the bytes kept. */
function refusedByAll(
  repo: string,
  expect: RegExp[],
  commands: string[][] = [['status'], ['add', 'x'], ['retry', 'task-001'], ['run']],
): void {
  const path = join(repo, TASKS);
  const before = lstatSync(path).isFile() ? readFileSync(path) : undefined;
  for (const args of commands) {
    // A generous bound: a command that hangs (a FIFO) fails here instead of stalling the suite.
    const r = runCli(args, { cwd: repo, timeoutMs: 30_000 });
    const out = r.stdout + r.stderr;
    assert.equal(r.code, 2, `launchpad ${args.join(' ')} exited ${r.code}\n${out}`);
    for (const e of expect) assert.match(out, e, `launchpad ${args.join(' ')}`);
    assert.doesNotMatch(out, /internal error/);
    if (before) assert.ok(readFileSync(path).equals(before), `launchpad ${args.join(' ')} changed the file`);
  }
  assert.ok(!existsSync(join(repo, `${TASKS}.tmp`)));
}

describe('what the task file must not be silently rewritten into, or read forever', function () {
  this.timeout(120_000);

  it('invalid UTF-8 (a Latin-1 "é") is refused by add, retry, run and status, naming field, line, column and byte', () => {
    const repo = repoWith();
    const text = readFileSync(join(repo, TASKS), 'utf8');
    const at = Buffer.byteLength(text.slice(0, text.indexOf('title of task-002') + 5));
    const bytes = Buffer.from(text);
    bytes[at] = 0xe9; // "title" → "titl\xe9"
    writeFileSync(join(repo, TASKS), bytes);
    refusedByAll(repo, [/harness-tasks\.json: tasks\[1\]\.title: byte 0xE9 at line \d+, column \d+ \(byte offset \d+\) is not UTF-8/]);
  });

  it('a key spelled "\\u005f_proto__" is refused by add, retry, run and status, whatever its escape', () => {
    for (const spelling of ['\\u005f_proto__', '__proto\\u005F_']) {
      const text = JSON.stringify(
        { version: 3, tasks: [rawTask('task-001', { status: 'failed', attempts: 3 }), rawTask('task-002', { x: { keep: 1 } })] },
        null,
        2,
      ).replace('"keep"', `"${spelling}"`);
      refusedByAll(repoWith(text), [/harness-tasks\.json: tasks\[1\]\.x\.__proto__: the field name "__proto__" cannot be kept/]);
    }
  });

  it('5,000 levels of nesting in an unknown field: refused with the path, no RangeError', () => {
    const text = JSON.stringify({ version: 3, tasks: [rawTask('task-001', { status: 'failed', attempts: 3 })] }, null, 2).replace(
      /\}\s*$/,
      `, "x_deep": ${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}\n`,
    );
    refusedByAll(repoWith(text), [/harness-tasks\.json: x_deep(\.a){63}: nested deeper than 64 levels/]);
  });

  it('a 1 MiB title (generated): refused by add, retry, run and status, not a spawn E2BIG later', () => {
    const repo = repoWith({
      version: 3,
      tasks: [rawTask('task-001', { status: 'failed', attempts: 3 }), rawTask('task-002', { title: 't'.repeat(1 << 20) })],
    });
    refusedByAll(repo, [/harness-tasks\.json: tasks\[1\]\.title: must be at most 500 characters long, got 1048576/]);
  });

  it('add refuses a title, a timeout and a context over the limits, writing nothing', () => {
    const repo = repoWith();
    const before = readFileSync(join(repo, TASKS));
    const cases: Array<[string[], RegExp]> = [
      [['add', 'x'.repeat(100_000)], /^launchpad: title: at most 500 characters, got 100000$/m],
      [['add', 'x', '--timeout', '2147484'], /^launchpad: --timeout: at most 604800 seconds, got 2147484$/m],
      [['add', 'x', '--context', 'c'.repeat(100_001)], /^launchpad: --context: at most 100000 characters, got 100001$/m],
    ];
    for (const [args, message] of cases) assert.match(cli(args, { cwd: repo }, 2).stderr, message);
    assert.ok(readFileSync(join(repo, TASKS)).equals(before));
    assert.ok(!existsSync(join(repo, `${TASKS}.bak`)));
  });

  for (const fixture of ['validation-timeout-too-large.json', 'session-config-agent-timeout-seconds-too-large.json']) {
    it(`${fixture}: a timeout that would fire at once is refused by run too`, () => {
      const repo = makeRepo();
      copyFileSync(join(CORPUS, fixture), join(repo, TASKS));
      refusedByAll(repo, [/at most 604800, got 2147484/], [['run']]);
    });
  }

  it('a symbolic link is written through: add, retry and run change its target, the link stays a link', () => {
    const repo = repoWith();
    const elsewhere = join(tempDir('launchpad-link-'), 'real-tasks.json');
    copyFileSync(join(repo, TASKS), elsewhere);
    rmSync(join(repo, TASKS));
    symlinkSync(elsewhere, join(repo, TASKS));
    assert.equal(cli(['add', 'third', '--validate', 'true'], { cwd: repo }).stdout, 'task-003\n');
    cli(['retry', 'task-001'], { cwd: repo });
    // Nothing the run can start (no agent needed): it reads through the link and leaves it a link
    // (a run that dispatches nothing does not count a session, so it writes nothing).
    const t = readTasks(repo);
    t.tasks = t.tasks.map((x) => ({ ...x, status: 'completed' }));
    writeFileSync(elsewhere, JSON.stringify(t, null, 2));
    cli(['run'], { cwd: repo });
    assert.ok(lstatSync(join(repo, TASKS)).isSymbolicLink(), 'the link was replaced by a file');
    assert.equal(readlinkSync(join(repo, TASKS)), elsewhere);
    const real = JSON.parse(readFileSync(elsewhere, 'utf8')) as { session_count: number; tasks: Array<{ id: string }> };
    assert.deepEqual(
      real.tasks.map((x) => x.id),
      ['task-001', 'task-002', 'task-003'],
    );
    assert.equal(real.session_count, 0);
    assert.ok(!existsSync(`${elsewhere}.tmp`));
  });

  it('a read-only (0444) file is not replaced: add, retry and run exit 2 saying so; bytes, inode and mode kept', () => {
    const repo = repoWith();
    const path = join(repo, TASKS);
    chmodSync(path, 0o444);
    const { ino } = statSync(path);
    refusedByAll(
      repo,
      [/harness-tasks\.json: has no write permission, so Launchpad does not replace it; nothing was changed/],
      [['add', 'x'], ['retry', 'task-001'], ['run']],
    );
    assert.equal(statSync(path).ino, ino);
    assert.equal(statSync(path).mode & 0o777, 0o444);
    assert.ok(!existsSync(join(repo, `${TASKS}.bak`)));
    // Readable still: status works.
    cli(['status'], { cwd: repo });
  });

  it('a FIFO is refused by every command at once, and the lock is not left held', () => {
    const repo = makeRepo();
    execFileSync('mkfifo', [join(repo, TASKS)]);
    refusedByAll(repo, [/harness-tasks\.json: is a FIFO \(named pipe\), not a regular file/]);
    assert.ok(lstatSync(join(repo, TASKS)).isFIFO());
    assert.ok(!existsSync(join(repo, '.launchpad', 'state.lock')) && !existsSync(join(repo, '.launchpad', 'session.lock')));
    // init does not open it either.
    assert.match(cli(['init'], { cwd: repo, env: {} }).stdout, /kept {5}harness-tasks\.json/);
  });

  it('a symbolic link to /dev/zero is refused before any read (fstat says 0 bytes), the link kept', () => {
    const repo = makeRepo();
    symlinkSync('/dev/zero', join(repo, TASKS));
    refusedByAll(
      repo,
      [/harness-tasks\.json: is a symbolic link to \/dev\/zero, a character device, not a regular file/],
      [['status'], ['add', 'x'], ['run']],
    );
    assert.ok(lstatSync(join(repo, TASKS)).isSymbolicLink());
  });

  it('a directory stays refused as before', () => {
    const repo = makeRepo();
    mkdirSync(join(repo, TASKS));
    refusedByAll(repo, [/harness-tasks\.json: is a directory, not a file/], [['status'], ['add', 'x']]);
  });
});
