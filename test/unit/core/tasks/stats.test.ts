import assert from 'node:assert/strict';

import { parseLogLine } from '../../../../src/core/log/logLine';
import type { Task } from '../../../../src/core/taskFile/schema';
import { computeStats, formatStats, type Stats } from '../../../../src/core/tasks/stats';
import { exhausted, rng, task } from '../fixtures';

const COUNTS = ['completed', 'failed', 'in_batch', 'pending', 'blocked'] as const;
const sum = (s: Stats) => COUNTS.reduce((n, k) => n + s[k], 0);

describe('core/stats', () => {
  it("reproduces the protocol's example STATS line from a matching task list", () => {
    // 8 tasks: 1 completed, 2 failed, 4 pending, 1 blocked; 5 attempts in all.
    const tasks: Task[] = [
      task('task-001', { status: 'completed', attempts: 1 }),
      task('task-002', { status: 'failed', attempts: 1, error_log: ['[TEST_FAIL] expected 429 got 200'] }),
      exhausted('task-004', { attempts: 3 }),
      task('task-003'),
      task('task-005'),
      task('task-006', { depends_on: ['task-002'] }),
      task('task-007', { validation: null }),
      task('task-008', { depends_on: ['task-004'] }),
    ];
    const stats = computeStats(tasks);
    assert.deepEqual(stats, {
      tasks_total: 8,
      completed: 1,
      failed: 2,
      in_batch: 0,
      pending: 4,
      blocked: 1,
      attempts_total: 5,
      checkpoints: 0,
    });
    assert.equal(formatStats(stats), 'tasks_total=8 completed=1 failed=2 in_batch=0 pending=4 blocked=1 attempts_total=5 checkpoints=0');
  });

  it('appends extra counters after the standard ones, as the protocol does with batches_dispatched', () => {
    const stats = computeStats([task('a', { status: 'in_progress', attempts: 1 })]);
    assert.equal(
      formatStats(stats, { batches_dispatched: 4 }),
      'tasks_total=1 completed=0 failed=0 in_batch=1 pending=0 blocked=0 attempts_total=1 checkpoints=0 batches_dispatched=4',
    );
  });

  it("a STATS log line carrying formatStats parses with the shape of the protocol's example", () => {
    const message = formatStats(computeStats([task('a'), exhausted('b'), task('c', { depends_on: ['b'] })]));
    const entry = parseLogLine(`[2025-07-01T10:12:03Z] [SESSION-1] STATS ${message}`);
    assert.equal(entry?.type, 'STATS');
    assert.equal(entry?.taskId, undefined);
    assert.match(
      entry!.message,
      /^tasks_total=\d+ completed=\d+ failed=\d+ in_batch=\d+ pending=\d+ blocked=\d+ attempts_total=\d+ checkpoints=\d+$/,
    );
  });

  it('blocked counts stored dependency failures and what a run would mark, not the cause', () => {
    const tasks = [
      exhausted('root'),
      task('a', { depends_on: ['root'] }),
      task('b', { status: 'failed', depends_on: ['root'], error_log: ['[DEPENDENCY] Blocked by failed root'] }),
      task('cyc', { depends_on: ['cyc'] }),
    ];
    assert.deepEqual(computeStats(tasks), {
      tasks_total: 4,
      completed: 0,
      failed: 1,
      in_batch: 0,
      pending: 0,
      blocked: 3,
      attempts_total: 3,
      checkpoints: 0,
    });
  });

  it('counts are disjoint and sum to tasks_total over random task lists', () => {
    const rand = rng(31337);
    for (let round = 0; round < 200; round++) {
      const n = 1 + rand(25);
      const tasks: Task[] = [];
      for (let i = 0; i < n; i++) {
        const status = (['pending', 'in_progress', 'completed', 'failed'] as const)[rand(4)]!;
        const deps = Array.from({ length: rand(3) }, () => `t${rand(n + 2)}`); // sometimes unknown, sometimes itself
        const attempts = rand(4);
        tasks.push(
          task(`t${i}`, {
            status,
            depends_on: [...new Set(deps)],
            attempts,
            max_attempts: 1 + rand(3),
            validation: rand(5) ? { command: 'x' } : null,
            error_log:
              status === 'failed' ? [(['[TEST_FAIL] x', '[DEPENDENCY] Blocked by failed t0', '[MERGE_CONFLICT] y'] as const)[rand(3)]] : [],
          }),
        );
      }
      const s = computeStats(tasks);
      assert.equal(s.tasks_total, n);
      assert.equal(sum(s), n, JSON.stringify(s));
      assert.equal(s.completed, tasks.filter((t) => t.status === 'completed').length);
      assert.equal(s.in_batch, tasks.filter((t) => t.status === 'in_progress').length);
      assert.equal(
        s.attempts_total,
        tasks.reduce((k, t) => k + t.attempts, 0),
      );
      for (const k of COUNTS) assert.ok(s[k] >= 0);
    }
  });

  it('an empty task list is all zeros', () => {
    assert.equal(
      formatStats(computeStats([])),
      'tasks_total=0 completed=0 failed=0 in_batch=0 pending=0 blocked=0 attempts_total=0 checkpoints=0',
    );
  });

  it('checkpoints counts every checkpoint recorded on the tasks, of every attempt', () => {
    const cp = (step: number) => ({ step, total: 3, description: `step ${step}`, timestamp: '2025-07-01T10:00:00Z' });
    const tasks = [
      task('a', { status: 'in_progress', attempts: 2, checkpoints: [cp(1), cp(2), cp(1)] }),
      task('b', { checkpoints: [cp(1)] }),
      task('c'),
    ];
    assert.equal(computeStats(tasks).checkpoints, 4);
    assert.match(formatStats(computeStats(tasks)), / attempts_total=2 checkpoints=4$/);
  });
});
