// --help on every command, and the usage errors of the command line itself (exit 2).
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';

import { runCli } from '../helpers/cli';
import { tempDir } from '../helpers/tmp';
import { cli } from './util';

/** Every option each command must show. */
const OPTIONS: Record<string, string[]> = {
  init: ['--gitignore', '--no-gitignore', '--init-script'],
  add: ['--context', '--priority', '--depends-on', '--files', '--validate', '--timeout', '--max-attempts'],
  status: ['--json'],
  pool: ['--disk', '--worktree-dir', '--json'],
  retry: [],
  'restore-backup': [],
  log: ['--type', '--task', '--session', '--category', '--grep', '--follow'],
  worker: ['--queue', '--repo', '--concurrency', '--clone', '--id', '--verbose'],
};

describe('launchpad --help and usage errors', () => {
  let empty: string;
  beforeEach(() => {
    empty = tempDir();
  });

  for (const [command, options] of Object.entries(OPTIONS)) {
    it(`${command} --help prints its usage and every option, exit 0, without a harness and touching nothing`, () => {
      for (const args of [
        [command, '--help'],
        [command, '-h'],
        ['help', command],
      ]) {
        const r = cli(args, { cwd: empty });
        assert.match(r.stdout, new RegExp(`^usage: launchpad ${command}\\b`), args.join(' '));
        for (const option of [...options, '--dir', '--help'])
          assert.ok(r.stdout.includes(option), `${args.join(' ')} lacks ${option}:\n${r.stdout}`);
        assert.equal(r.stderr, '');
      }
      assert.deepEqual(readdirSync(empty), []);
    });
  }

  it('every command listed by launchpad --help has its own --help (exit 0, usage line, --dir)', () => {
    const listed = [...cli(['--help'], { cwd: empty }).stdout.matchAll(/^ {2}([a-z][a-z-]*) {2,}/gm)].map((m) => m[1]!);
    for (const command of Object.keys(OPTIONS)) assert.ok(listed.includes(command), `${command} not listed`);
    for (const command of listed) {
      const r = cli([command, '--help'], { cwd: empty });
      assert.match(r.stdout, new RegExp(`^usage: launchpad ${command}\\b`));
      assert.match(r.stdout, /--dir DIR/);
    }
    assert.deepEqual(readdirSync(empty), []);
  });

  it('--help with other arguments still only prints help', () => {
    const r = cli(['add', 'a title', '--priority', 'P9', '--help'], { cwd: empty });
    assert.match(r.stdout, /^usage: launchpad add TITLE/);
    assert.deepEqual(readdirSync(empty), []);
  });

  it('launchpad --help lists every command and the exit codes', () => {
    const r = cli(['--help'], { cwd: empty });
    for (const command of Object.keys(OPTIONS)) assert.match(r.stdout, new RegExp(`^  ${command} `, 'm'));
    assert.match(r.stdout, /--dir DIR/);
    assert.match(r.stdout, /exit codes: 0 .*2 usage.*3 lock/);
  });

  it('launchpad with no command prints the usage on stderr and exits 2', () => {
    const r = cli([], { cwd: empty }, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /usage: launchpad/);
  });

  it('--version prints the package version', () => {
    const r = cli(['--version'], { cwd: empty });
    assert.match(r.stdout, /^\d+\.\d+\.\d+\n$/);
  });

  const usageErrors: Array<[string[], RegExp]> = [
    [['frobnicate'], /unknown command "frobnicate"/],
    [['--bogus', 'status'], /unknown option "--bogus"/],
    [['--dir'], /--dir needs a directory/],
    [['status', '--bogus'], /status: Unknown option '--bogus'/],
    [['status', 'extra'], /status: unexpected argument "extra"/],
    [['add'], /add: expected 1 argument, got 0\nusage: launchpad add/],
    [['add', 'one', 'two'], /add: expected 1 argument, got 2/],
    [['add', 'x', '--priority'], /--priority/],
    [['retry'], /retry: expected 1 argument, got 0/],
    [['log', '--follow=yes'], /--follow/],
    [['init', '--gitignore', '--no-gitignore'], /--gitignore and --no-gitignore exclude each other/],
  ];
  for (const [args, message] of usageErrors) {
    it(`launchpad ${args.join(' ')}: exit 2 with a message, nothing written`, () => {
      const r = runCli(args, { cwd: empty });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /^launchpad: /);
      assert.match(r.stderr, message);
      assert.equal(r.stdout, '');
      assert.deepEqual(readdirSync(empty), []);
    });
  }

  for (const command of ['add x', 'status', 'retry task-001', 'log']) {
    it(`${command} without any harness: exit 2 naming harness-tasks.json and "launchpad init"`, () => {
      const r = cli(command.split(' '), { cwd: empty }, 2);
      assert.match(r.stderr, /harness-tasks\.json: not found in .* or any parent directory; run "launchpad init" first/);
      assert.deepEqual(readdirSync(empty), []);
    });
  }

  it('a mistyped command gets the command it was probably meant to be', () => {
    const r = runCli(['stauts'], { cwd: empty });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown command "stauts"; did you mean "status"\?\ncommands: init, add, edit, remove, run/);
    assert.doesNotMatch(runCli(['frobnicate'], { cwd: empty }).stderr, /did you mean/);
  });
});
