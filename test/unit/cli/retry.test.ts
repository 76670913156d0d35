// launchpad retry ID: a failed task becomes pending with its budget restored, the tasks a run
// marked failed because of it come back too; anything else is exit 2 and changes nothing.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { runCli } from '../helpers/cli';
import { assertUnchanged, cli, PROGRESS, progressEntries, rawTask, snapshot, stateRoot, taskById } from './util';

const blockedBy = (id: string) => `[DEPENDENCY] Blocked by failed ${id}`;

/** What a run leaves behind: an exhausted task and the chain it marked failed. */
function afterARun(): string {
  const dir = stateRoot({
    version: 3,
    session_count: 2,
    tasks: [
      rawTask('base', { status: 'completed', attempts: 1 }),
      rawTask('flaky', {
        status: 'failed',
        attempts: 3,
        max_attempts: 3,
        failed_at: '2025-07-01T10:10:03Z',
        error_log: ['[TEST_FAIL] one', '[TEST_FAIL] two', '[TEST_FAIL] three'],
      }),
      rawTask('child', { status: 'failed', depends_on: ['flaky'], error_log: [blockedBy('flaky')] }),
      rawTask('grandchild', { status: 'failed', depends_on: ['child', 'base'], error_log: [blockedBy('child')] }),
      // Failed on its own after an earlier unblock: not retried along with flaky.
      rawTask('own-failure', { status: 'failed', attempts: 3, depends_on: ['flaky'], error_log: [blockedBy('flaky'), '[AGENT_FAIL] no'] }),
      rawTask('unrelated', { status: 'failed', depends_on: ['other'], error_log: ['[DEPENDENCY] Unknown dependency other'] }),
      rawTask('retryable', { status: 'failed', attempts: 1, error_log: ['[TEST_FAIL] once'] }),
      rawTask('waiting', { depends_on: ['flaky'] }),
      rawTask('running', { status: 'in_progress', attempts: 1 }),
    ],
  });
  writeFileSync(join(dir, PROGRESS), '[2025-07-01T10:12:03Z] [SESSION-2] STATS tasks_total=9\n');
  return dir;
}

describe('launchpad retry', () => {
  it('resets an exhausted task and unblocks the chain it failed, keeping the error log', () => {
    const dir = afterARun();
    const r = cli(['retry', 'flaky'], { cwd: dir });
    assert.equal(
      r.stdout,
      'child: pending (was blocked by flaky)\nflaky: pending (attempts 0/3)\ngrandchild: pending (was blocked by flaky)\n',
    );

    const flaky = taskById(dir, 'flaky');
    assert.equal(flaky.status, 'pending');
    assert.equal(flaky.attempts, 0);
    assert.equal(flaky.failed_at, null);
    assert.deepEqual(flaky.error_log, ['[TEST_FAIL] one', '[TEST_FAIL] two', '[TEST_FAIL] three'], 'the next prompt needs what went wrong');
    for (const id of ['child', 'grandchild']) {
      assert.equal(taskById(dir, id).status, 'pending', id);
      assert.equal(taskById(dir, id).attempts, 0, id);
    }
    assert.equal(taskById(dir, 'own-failure').status, 'failed');
    assert.equal(taskById(dir, 'unrelated').status, 'failed');
    assert.equal(taskById(dir, 'retryable').status, 'failed');

    const entries = progressEntries(dir).slice(1);
    assert.deepEqual(
      entries.map((e) => [e.session, e.type, e.taskId, e.message]),
      [
        [2, 'RECOVERY', 'child', 'action="unblocked" reason="retry of flaky"'],
        [2, 'RECOVERY', 'flaky', 'action="retry" reason="requested by user" attempts_before=3'],
        [2, 'RECOVERY', 'grandchild', 'action="unblocked" reason="retry of flaky"'],
      ],
    );

    // status agrees: flaky is ready, its chain waits on it instead of being blocked.
    const s = JSON.parse(cli(['status', '--json'], { cwd: dir }).stdout) as { tasks: Array<{ id: string; state: string }> };
    const states = Object.fromEntries(s.tasks.map((t) => [t.id, t.state]));
    assert.equal(states.flaky, 'ready');
    assert.equal(states.child, 'waiting');
    assert.equal(states.grandchild, 'waiting');
    assert.equal(states.waiting, 'waiting');
  });

  it('retries a failed task that still had attempts left, restoring the full budget', () => {
    const dir = afterARun();
    assert.equal(cli(['retry', 'retryable'], { cwd: dir }).stdout, 'retryable: pending (attempts 0/3)\n');
    assert.equal(taskById(dir, 'retryable').attempts, 0);
    assert.equal(taskById(dir, 'retryable').status, 'pending');
  });

  it('retries a task failed for a dependency reason, naming the failure that will block it again', () => {
    const dir = afterARun();
    const r = cli(['retry', 'grandchild'], { cwd: dir });
    assert.equal(
      r.stderr,
      'note: grandchild is blocked by failed flaky, which stays failed: the next run blocks grandchild again; retry flaky to unblock it\n',
    );
    assert.equal(cli(['retry', 'child', 'flaky'], { cwd: afterARun() }).stderr, '', 'flaky retried with it: nothing to say');
    cli(['retry', 'child'], { cwd: dir });
    assert.equal(taskById(dir, 'child').status, 'pending');
    assert.equal(taskById(dir, 'grandchild').status, 'pending');
    assert.equal(taskById(dir, 'flaky').status, 'failed');
  });

  const refused: Array<[string, string, RegExp]> = [
    ['a pending task', 'waiting', /task "waiting" is pending, not failed: only a failed task \(or one awaiting review\) can be retried/],
    ['a running task', 'running', /task "running" is in progress, not failed/],
    ['a completed task', 'base', /task "base" is completed, not failed/],
    ['an unknown id', 'task-404', /no task "task-404" in harness-tasks\.json/],
    ['an id with shell characters', '$(touch pwned)', /no task "\$\(touch pwned\)" in harness-tasks\.json/],
  ];
  for (const [what, id, message] of refused) {
    it(`refuses ${what}: exit 2, file and log unchanged`, () => {
      const dir = afterARun();
      const before = snapshot(dir);
      const r = cli(['retry', id], { cwd: dir }, 2);
      assert.match(r.stderr, message);
      assert.equal(r.stdout, '');
      // The lock folder may stay (empty); the state files must not change.
      for (const file of ['harness-tasks.json', PROGRESS]) assert.equal(snapshot(dir).get(file), before.get(file), file);
      assert.deepEqual(
        [...snapshot(dir).keys()].filter((k) => !k.startsWith('.launchpad')),
        [...before.keys()],
      );
    });
  }

  it('a second retry of the same task is refused (it is pending now)', () => {
    const dir = afterARun();
    cli(['retry', 'flaky'], { cwd: dir });
    const before = snapshot(dir);
    cli(['retry', 'flaky'], { cwd: dir }, 2);
    assertUnchanged(before, dir, 'second retry');
  });

  it('--json: each task reset, with the retried task that unblocked it (null for one retried itself)', () => {
    const dir = afterARun();
    const r = cli(['retry', 'flaky', '--json'], { cwd: dir });
    assert.deepEqual(JSON.parse(r.stdout), {
      reset: [
        { id: 'child', max_attempts: 3, unblocked_by: 'flaky' },
        { id: 'flaky', max_attempts: 3, unblocked_by: null },
        { id: 'grandchild', max_attempts: 3, unblocked_by: 'flaky' },
      ],
    });
    assert.equal(taskById(dir, 'flaky').status, 'pending');
    assert.deepEqual(JSON.parse(cli(['retry', '--failed', '--json'], { cwd: stateRoot({ version: 3, tasks: [] }) }).stdout), { reset: [] });
  });

  it('several ids at once: each reset, the chain of each unblocked, all in one transaction', () => {
    const dir = afterARun();
    const r = cli(['retry', 'flaky', 'retryable'], { cwd: dir });
    assert.equal(
      r.stdout,
      'child: pending (was blocked by flaky)\nflaky: pending (attempts 0/3)\ngrandchild: pending (was blocked by flaky)\nretryable: pending (attempts 0/3)\n',
    );
    const actions = progressEntries(dir)
      .slice(1)
      .map((e) => `${e.taskId} ${e.message}`);
    assert.deepEqual(actions, [
      'child action="unblocked" reason="retry of flaky"',
      'flaky action="retry" reason="requested by user" attempts_before=3',
      'grandchild action="unblocked" reason="retry of flaky"',
      'retryable action="retry" reason="requested by user" attempts_before=1',
    ]);
  });

  it('several ids, one of them not failed: exit 2 and nothing changes (all or none)', () => {
    const dir = afterARun();
    const before = snapshot(dir);
    const r = cli(['retry', 'flaky', 'waiting'], { cwd: dir }, 2);
    assert.match(r.stderr, /task "waiting" is pending, not failed/);
    for (const file of ['harness-tasks.json', PROGRESS]) assert.equal(snapshot(dir).get(file), before.get(file), file);
  });

  it('--failed retries every failed task, blocked ones included; then there is nothing left to retry', () => {
    const dir = afterARun();
    cli(['retry', '--failed'], { cwd: dir });
    for (const id of ['flaky', 'child', 'grandchild', 'own-failure', 'unrelated', 'retryable'])
      assert.equal(taskById(dir, id).status, 'pending', id);
    assert.equal(taskById(dir, 'base').status, 'completed');
    assert.equal(taskById(dir, 'running').status, 'in_progress');
    assert.equal(cli(['retry', '--failed'], { cwd: dir }).stdout, 'no failed task: nothing to retry\n');
    cli(['retry', '--failed', 'flaky'], { cwd: dir }, 2);
  });

  it('status --json calls a task retryable exactly when retry accepts it (every failed task, exhausted or blocked too)', () => {
    const dir = afterARun();
    const s = JSON.parse(cli(['status', '--json'], { cwd: dir }).stdout) as { tasks: Array<{ id: string; retryable: boolean }> };
    for (const t of s.tasks) {
      const accepted = runCliCode(dir, t.id) === 0;
      assert.equal(t.retryable, accepted, `${t.id}: retryable=${t.retryable}, retry ${accepted ? 'accepts' : 'refuses'} it`);
    }
  });
});

/** Whether `retry ID` is accepted, on a fresh copy of the state (so one retry does not change the next). */
function runCliCode(dir: string, id: string): number | null {
  const copy = stateRoot(readFileSync(join(dir, 'harness-tasks.json'), 'utf8'));
  return runCli(['retry', id], { cwd: copy }).code;
}
