import assert from 'node:assert/strict';

import type { Task } from '../../../../src/core/taskFile/schema';
import { countTasks, formatCounts, type TaskCounts } from '../../../../src/core/tasks/counts';
import { exhausted, task } from '../fixtures';

const NOW = Date.parse('2026-05-02T10:00:00Z');

// One task in every state a person can see.
const EVERY_STATE: Task[] = [
  task('done', { status: 'completed', attempts: 1 }),
  task('busy', { status: 'in_progress', attempts: 1, agent_id: 'agent-busy' }),
  task('leased', { status: 'in_progress', attempts: 1, claimed_by: 'w2', lease_expires_at: '2026-05-02T10:05:00Z' }),
  task('ready'),
  task('waits', { depends_on: ['busy'] }),
  task('novalidation', { validation: null }),
  task('retry', { status: 'failed', attempts: 1, error_log: ['[TEST_FAIL] expected 429 got 200'] }),
  exhausted('gaveup', { attempts: 3 }),
  task('blocked', { depends_on: ['gaveup'] }),
];

const counts = (c: Partial<TaskCounts>): TaskCounts => ({
  tasks_total: 9,
  completed: 1,
  running: 0,
  interrupted: 0,
  awaiting_answer: 0,
  awaiting_review: 0,
  ready: 1,
  waiting: 1,
  needs_validation: 1,
  retrying: 1,
  failed: 1,
  blocked: 1,
  ...c,
});

describe('core/tasks/counts', () => {
  it('counts a task file with every state once, by one name each, running or interrupted as the run is live or not', () => {
    assert.deepEqual(countTasks(EVERY_STATE, { live: true, now: NOW }), counts({ running: 2 }));
    // No run: a worker's current lease still holds its task; the other in_progress task is interrupted.
    assert.deepEqual(countTasks(EVERY_STATE, { live: false, now: NOW }), counts({ running: 1, interrupted: 1 }));
    // The lease has run out: both are interrupted.
    assert.deepEqual(countTasks(EVERY_STATE, { live: false, now: Date.parse('2026-05-02T10:06:00Z') }), counts({ interrupted: 2 }));
  });

  it('says the counts in one line: completed of all, then what moves or needs a person; all of them for status', () => {
    const live = countTasks(EVERY_STATE, { live: true, now: NOW });
    assert.equal(formatCounts(live), '1/9 completed · 2 running · 1 to retry · 1 failed · 1 blocked · 1 without validation');
    assert.equal(
      formatCounts(countTasks(EVERY_STATE, { live: false, now: NOW }), { all: true }),
      '1/9 completed · 1 running · 1 interrupted · 1 to retry · 1 failed · 1 blocked · 1 without validation · 1 ready · 1 waiting',
    );
    assert.equal(formatCounts(countTasks([task('a', { status: 'completed' })], { live: false, now: NOW })), '1/1 completed');
  });
});
