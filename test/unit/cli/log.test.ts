// launchpad log: each filter alone and combined over a hand-written log, and --follow.
import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { startCli } from '../helpers/cli';
import { assertUnchanged, cli, PROGRESS, rawTask, sleep, snapshot, stateRoot, waitFor } from './util';

// The protocol's example, a second and a tenth session, a category without a task, a free-text line a
// person added, and messages that mention other tasks' ids and bracketed words.
const LOG = [
  '[2025-07-01T10:00:00Z] [SESSION-1] INIT Launchpad runner initialized for project /path/to/project',
  '[2025-07-01T10:00:10Z] [SESSION-1] LOCK acquired (pid=12345)',
  '[2025-07-01T10:00:11Z] [SESSION-1] BATCH dispatching 3 tasks: [task-001, task-002, task-004]',
  '[2025-07-01T10:00:12Z] [SESSION-1] DISPATCH [task-001] agent=agent_abc123 worktree=harness-task-001',
  '[2025-07-01T10:00:12Z] [SESSION-1] DISPATCH [task-002] agent=agent_def456 worktree=harness-task-002',
  '[2025-07-01T10:08:01Z] [SESSION-1] VALIDATE [task-001] command="npm test -- --testPathPattern=auth" result=PASS',
  '[2025-07-01T10:08:05Z] [SESSION-1] MERGE [task-001] branch=harness-task-001 into=develop (commit abc1234)',
  '[2025-07-01T10:08:06Z] [SESSION-1] Completed [task-001]',
  '[2025-07-01T10:10:01Z] [SESSION-1] VALIDATE [task-002] command="npm test -- --testPathPattern=rate-limit" result=FAIL',
  '[2025-07-01T10:10:03Z] [SESSION-1] ERROR [task-002] [TEST_FAIL] Rate limit middleware test: expected 429 got 200',
  '[2025-07-01T10:12:02Z] [SESSION-1] ERROR [task-004] [AGENT_FAIL] Sub-agent could not resolve import errors',
  '[2025-07-01T10:12:03Z] [SESSION-1] STATS tasks_total=8 completed=1 failed=2 in_batch=0 pending=4 blocked=1 attempts_total=5',
  'a note a person typed into the log by hand: ERROR [task-002] looked at it',
  '[2025-07-02T09:00:00Z] [SESSION-2] ERROR [ENV_SETUP] harness-init.sh failed twice',
  '[2025-07-02T09:00:05Z] [SESSION-2] RECOVERY [task-003] action="unblocked" reason="retry of [task-002]"',
  '[2025-07-02T09:01:00Z] [SESSION-2] ERROR [task-002] [TEST_FAIL] still 200',
  '[2025-07-02T09:02:00Z] [SESSION-2] ERROR [task-010] [MERGE_CONFLICT] src/app.ts',
  '[2025-07-03T09:00:00Z] [SESSION-10] ERROR [task-002] [TIMEOUT] validation timed out after 120s',
  '[2025-07-03T09:00:01Z] [SESSION-10] WARN [task-002] [NOT_A_CATEGORY] stays in the message',
];
const L = (...indexes: number[]) => indexes.map((i) => LOG[i]!);

function harness(lines = LOG): string {
  // The tasks the lines name, and task-01 (a task with no line of its own).
  const dir = stateRoot({
    version: 3,
    tasks: ['task-001', 'task-002', 'task-003', 'task-004', 'task-010', 'task-01'].map((id) => rawTask(id)),
  });
  writeFileSync(join(dir, PROGRESS), lines.join('\n') + '\n');
  return dir;
}

function log(dir: string, ...args: string[]): string[] {
  const r = cli(['log', ...args], { cwd: dir });
  assert.equal(r.stderr, '');
  return r.stdout.split('\n').filter(Boolean);
}

describe('launchpad log', () => {
  it('without filters prints every line, free text included, and changes nothing', () => {
    const dir = harness();
    const before = snapshot(dir);
    assert.deepEqual(log(dir), LOG);
    assertUnchanged(before, dir, 'log');
  });

  const single: Array<[string, string[], string[]]> = [
    ['--type ERROR', ['--type', 'ERROR'], L(9, 10, 13, 15, 16, 17)],
    ['--type error (case-insensitive)', ['--type', 'error'], L(9, 10, 13, 15, 16, 17)],
    ['--type Completed', ['--type', 'Completed'], L(7)],
    ['--type VALIDATE', ['--type', 'VALIDATE'], L(5, 8)],
    ['--task task-002 (not the BATCH list, the free text or a mention in a message)', ['--task', 'task-002'], L(4, 8, 9, 15, 17, 18)],
    ['--task task-001', ['--task', 'task-001'], L(3, 5, 6, 7)],
    ['--task task-01 (no prefix match on task-010)', ['--task', 'task-01'], []],
    ['--session 1', ['--session', '1'], L(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)],
    ['--session 10 (not 1)', ['--session', '10'], L(17, 18)],
    ['--session 3 (none)', ['--session', '3'], []],
    ['--category TEST_FAIL', ['--category', 'TEST_FAIL'], L(9, 15)],
    ['--category env_setup (a category without a task)', ['--category', 'env_setup'], L(13)],
    ['--category MERGE_CONFLICT', ['--category', 'MERGE_CONFLICT'], L(16)],
    ['--grep a literal', ['--grep', 'result=FAIL'], L(8)],
    ['--grep a regex', ['--grep', 'result=(PASS|FAIL)$'], L(5, 8)],
    ['--grep anchored at the line start', ['--grep', '^a note'], L(12)],
    ['--grep a bracket literal', ['--grep', '\\[task-002\\]'], L(4, 8, 9, 12, 14, 15, 17, 18)],
    ['--grep case-sensitive', ['--grep', 'Redis|REDIS|rate-LIMIT'], []],
  ];
  for (const [what, args, expected] of single) {
    it(`${what}`, () => {
      assert.deepEqual(log(harness(), ...args), expected);
    });
  }

  const combined: Array<[string[], string[]]> = [
    [['--type', 'ERROR', '--task', 'task-002'], L(9, 15, 17)],
    [['--type', 'ERROR', '--session', '2'], L(13, 15, 16)],
    [['--type', 'ERROR', '--category', 'TEST_FAIL', '--session', '2'], L(15)],
    [['--task', 'task-002', '--session', '10', '--grep', 'timed out'], L(17)],
    [['--type', 'VALIDATE', '--grep', 'auth'], L(5)],
    [['--category', 'TEST_FAIL', '--task', 'task-004'], []],
    [['--type', 'WARN', '--category', 'TEST_FAIL'], []],
  ];
  for (const [args, expected] of combined) {
    it(`combined: ${args.join(' ')}`, () => {
      assert.deepEqual(log(harness(), ...args), expected);
    });
  }

  it('handles CRLF line endings and prints a last line that has no newline', () => {
    const dir = stateRoot({ version: 3, tasks: [] });
    writeFileSync(join(dir, PROGRESS), `${LOG[9]}\r\n${LOG[10]}\r\n${LOG[15]}\r`);
    assert.deepEqual(log(dir, '--type', 'ERROR', '--task', 'task-002'), L(9, 15));
    assert.deepEqual(log(dir, '--grep', 'Sub-agent'), L(10));
    assert.deepEqual(log(dir, '--grep', 'still 200$'), L(15));
    assert.deepEqual(log(dir), L(9, 10, 15));
    writeFileSync(join(dir, PROGRESS), `${LOG[0]}\n${LOG[1]}`);
    assert.deepEqual(log(dir), L(0, 1));
    assert.deepEqual(log(dir, '--type', 'LOCK'), L(1));
    assert.deepEqual(log(dir, '--type', 'INIT'), L(0));
  });

  it('a harness without a progress log prints nothing, exit 0', () => {
    const dir = stateRoot({ version: 3, tasks: [] });
    assert.equal(cli(['log'], { cwd: dir }).stdout, '');
  });

  const bad: Array<[string[], RegExp]> = [
    [['--type', 'EROR'], /--type: unknown type "EROR"; one of INIT, LOCK/],
    [['--category', 'FLAKY'], /--category: unknown category "FLAKY"; one of ENV_SETUP/],
    [['--session', 'one'], /--session: expected a whole number of at least 0, got "one"/],
    [['--session=-1'], /--session: expected a whole number of at least 0, got "-1"/],
    [['--session', '1.5'], /--session: expected a whole number/],
    [['--task', 'a;b'], /--task: "a;b" is not a valid task id/],
    [['--grep', '(unclosed'], /--grep: Invalid regular expression/],
    [['--type'], /--type/],
  ];
  for (const [args, message] of bad) {
    it(`log ${args.join(' ')}: exit 2 naming the option`, () => {
      const r = cli(['log', ...args], { cwd: harness() }, 2);
      assert.match(r.stderr, message);
      assert.equal(r.stdout, '');
    });
  }

  it('--task naming no task (not in harness-tasks.json, on no line): exit 2 saying so, not an empty success', () => {
    const dir = harness();
    const r = cli(['log', '--task', 'task-999'], { cwd: dir }, 2);
    assert.match(r.stderr, /--task: no task "task-999" in harness-tasks\.json, and no line of harness-progress\.txt names it/);
    assert.equal(r.stdout, '');
    // A task that exists but has no lines yet, and one that was removed but has lines, are fine.
    assert.deepEqual(log(dir, '--task', 'task-01'), []);
    const removed = stateRoot({ version: 3, tasks: [] });
    writeFileSync(join(removed, PROGRESS), LOG.join('\n') + '\n');
    assert.deepEqual(log(removed, '--task', 'task-001'), L(3, 5, 6, 7));
  });

  it('--type takes a comma list: lines of any of the types, in file order', () => {
    assert.deepEqual(log(harness(), '--type', 'validate,Completed'), L(5, 7, 8));
    assert.deepEqual(log(harness(), '--type', 'ERROR, WARN', '--task', 'task-002'), L(9, 15, 17, 18));
    const r = cli(['log', '--type', 'ERROR,EROR'], { cwd: harness() }, 2);
    assert.match(r.stderr, /--type: unknown type "EROR"/);
  });

  it('--dir without a harness: exit 2 (not an empty log)', () => {
    const dir = harness();
    const r = cli(['log', '--dir', join(dir, 'nothing-here')], { cwd: dir }, 2);
    assert.match(r.stderr, /harness-tasks\.json: not found in .*nothing-here/);
  });

  describe('--follow', () => {
    it('prints the matching lines there are, then those appended after it started, whole and once', async () => {
      const dir = harness();
      const file = join(dir, PROGRESS);
      const follow = startCli(['log', '--follow', '--type', 'ERROR', '--task', 'task-002'], { cwd: dir });
      try {
        const lines = () => follow.output().stdout.split('\n').filter(Boolean);
        await waitFor(() => lines().length >= 3, 'the existing lines');
        assert.deepEqual(lines(), L(9, 15, 17));

        const newError = '[2025-07-04T08:00:00Z] [SESSION-11] ERROR [task-002] [TEST_FAIL] appended later';
        const other = '[2025-07-04T08:00:01Z] [SESSION-11] ERROR [task-003] [TEST_FAIL] another task';
        appendFileSync(file, `${other}\n${newError}\n`);
        await waitFor(() => lines().length >= 4, 'the appended line');
        assert.deepEqual(lines(), [...L(9, 15, 17), newError]);

        // A line written in two pieces is printed once, whole, when its newline arrives.
        const split = '[2025-07-04T08:00:02Z] [SESSION-11] ERROR [task-002] [TIMEOUT] written in two appends';
        appendFileSync(file, split.slice(0, 50));
        await sleep(1500);
        appendFileSync(file, `${split.slice(50)}\n`);
        await waitFor(() => lines().length >= 5, 'the completed line');
        assert.deepEqual(lines(), [...L(9, 15, 17), newError, split]);
      } finally {
        follow.child.kill('SIGTERM');
      }
      const r = await follow.done;
      assert.equal(r.stderr, '');
      assert.equal(r.code, 0, 'SIGTERM ends --follow cleanly');
    });

    it('-f with no filter on an empty log prints each line as it is appended', async () => {
      const dir = stateRoot({ version: 3, tasks: [] });
      const file = join(dir, PROGRESS);
      writeFileSync(file, '');
      const follow = startCli(['log', '-f'], { cwd: dir });
      try {
        // Nothing to print yet: append until the follower has picked it up.
        appendFileSync(file, `${LOG[0]}\n`);
        await waitFor(() => follow.output().stdout.includes(LOG[0]!), 'the first line');
        appendFileSync(file, `${LOG[1]}\n`);
        await waitFor(() => follow.output().stdout.includes(LOG[1]!), 'the second line');
        assert.equal(follow.output().stdout, `${LOG[0]}\n${LOG[1]}\n`);
      } finally {
        follow.child.kill('SIGTERM');
      }
      await follow.done;
    });
  });
});
