import assert from 'node:assert/strict';

import type { Task } from '../../../../src/core/taskFile/schema';
import {
  analyzeTasks,
  chainsOf,
  eligibleTasks,
  entryCategory,
  findDependencyFailures,
  hasValidationCommand,
  heldBack,
  hintsOverlap,
  isDependencyFailure,
  isPermanentlyFailed,
  isRetryable,
  longestChains,
  MAX_RETRY_BACKOFF_S,
  normalizeHint,
  retryBackoffSeconds,
  retryNotBefore,
  runsSolo,
  scanPool,
  selectBatch,
} from '../../../../src/core/tasks/dag';
import { computeStats } from '../../../../src/core/tasks/stats';
import { exhausted, rng, task } from '../fixtures';

const ids = (tasks: readonly Task[]) => tasks.map((t) => t.id);
const failuresOf = (tasks: Task[]) => Object.fromEntries(findDependencyFailures(tasks).map((f) => [f.taskId, f.entry]));

describe('core/dag', () => {
  describe('cycle detection', () => {
    it("marks both tasks of a two-cycle with the protocol's message, each from itself", () => {
      const tasks = [task('task-A', { depends_on: ['task-B'] }), task('task-B', { depends_on: ['task-A'] })];
      assert.deepEqual(failuresOf(tasks), {
        'task-A': '[DEPENDENCY] Circular dependency detected: task-A -> task-B -> task-A',
        'task-B': '[DEPENDENCY] Circular dependency detected: task-B -> task-A -> task-B',
      });
    });

    it('a self-reference is a cycle', () => {
      assert.deepEqual(failuresOf([task('task-A', { depends_on: ['task-A'] }), task('task-B')]), {
        'task-A': '[DEPENDENCY] Circular dependency detected: task-A -> task-A',
      });
    });

    it('a three-cycle writes the whole loop; a task hanging off it is blocked, not cyclic', () => {
      const tasks = [
        task('t1', { depends_on: ['t2'] }),
        task('t2', { depends_on: ['t3'] }),
        task('t3', { depends_on: ['t1'] }),
        task('t4', { depends_on: ['t3'] }),
      ];
      const f = failuresOf(tasks);
      assert.equal(f.t1, '[DEPENDENCY] Circular dependency detected: t1 -> t2 -> t3 -> t1');
      assert.equal(f.t2, '[DEPENDENCY] Circular dependency detected: t2 -> t3 -> t1 -> t2');
      assert.equal(f.t3, '[DEPENDENCY] Circular dependency detected: t3 -> t1 -> t2 -> t3');
      assert.equal(f.t4, '[DEPENDENCY] Blocked by failed t3');
    });

    it('writes a shortest loop through each task when several cycles share it', () => {
      const tasks = [task('a', { depends_on: ['b', 'c'] }), task('b', { depends_on: ['c'] }), task('c', { depends_on: ['a'] })];
      const f = failuresOf(tasks);
      assert.equal(f.a, '[DEPENDENCY] Circular dependency detected: a -> c -> a');
      assert.equal(f.b, '[DEPENDENCY] Circular dependency detected: b -> c -> a -> b');
    });

    it('ignores a cycle among completed tasks', () => {
      const tasks = [
        task('a', { status: 'completed', depends_on: ['b'] }),
        task('b', { status: 'completed', depends_on: ['a'] }),
        task('c', { depends_on: ['a'] }),
      ];
      assert.deepEqual(findDependencyFailures(tasks), []);
      assert.deepEqual(ids(eligibleTasks(tasks)), ['c']);
    });

    it('does not mark a cycle member already failed for a dependency reason again', () => {
      const tasks = [
        task('a', { depends_on: ['b'], status: 'failed', error_log: ['[DEPENDENCY] Circular dependency detected: a -> b -> a'] }),
        task('b', { depends_on: ['a'] }),
      ];
      assert.deepEqual(Object.keys(failuresOf(tasks)), ['b']);
    });
  });

  it('an unknown dependency fails the task, and its dependents are blocked', () => {
    const tasks = [
      task('a', { depends_on: ['ghost'] }),
      task('b', { depends_on: ['a'] }),
      task('c', { status: 'completed', depends_on: ['ghost'] }),
    ];
    assert.deepEqual(failuresOf(tasks), {
      a: '[DEPENDENCY] Unknown dependency ghost',
      b: '[DEPENDENCY] Blocked by failed a',
    });
  });

  describe('blocked propagation', () => {
    it('runs to a fixpoint down a chain', () => {
      const tasks = [
        task('t5', { depends_on: ['t4'] }),
        task('t4', { depends_on: ['t3'] }),
        task('t3', { depends_on: ['t2'] }),
        task('t2', { depends_on: ['t1'] }),
        exhausted('t1'),
      ];
      assert.deepEqual(failuresOf(tasks), {
        t2: '[DEPENDENCY] Blocked by failed t1',
        t3: '[DEPENDENCY] Blocked by failed t2',
        t4: '[DEPENDENCY] Blocked by failed t3',
        t5: '[DEPENDENCY] Blocked by failed t4',
      });
    });

    it('marks the bottom of a diamond once', () => {
      const tasks = [
        exhausted('top'),
        task('left', { depends_on: ['top'] }),
        task('right', { depends_on: ['top'] }),
        task('bottom', { depends_on: ['left', 'right'] }),
      ];
      const failures = findDependencyFailures(tasks);
      assert.deepEqual(failures.map((f) => f.taskId).sort(), ['bottom', 'left', 'right']);
      assert.match(failuresOf(tasks).bottom!, /^\[DEPENDENCY\] Blocked by failed (left|right)$/);
    });

    it('passes through tasks already dependency-failed without marking them twice', () => {
      const tasks = [
        exhausted('a'),
        task('b', { depends_on: ['a'], status: 'failed', error_log: ['[DEPENDENCY] Blocked by failed a'] }),
        task('c', { depends_on: ['b'] }),
      ];
      assert.deepEqual(failuresOf(tasks), { c: '[DEPENDENCY] Blocked by failed b' });
    });

    it('a retryable failed dependency blocks nothing: its dependents wait', () => {
      const tasks = [task('a', { status: 'failed', attempts: 1, error_log: ['[TEST_FAIL] x'] }), task('b', { depends_on: ['a'] })];
      assert.deepEqual(findDependencyFailures(tasks), []);
      assert.equal(analyzeTasks(tasks).states.get('b'), 'waiting');
    });

    it('leaves completed and running dependents alone', () => {
      const tasks = [
        exhausted('a'),
        task('b', { depends_on: ['a'], status: 'completed' }),
        task('c', { depends_on: ['a'], status: 'in_progress' }),
      ];
      assert.deepEqual(findDependencyFailures(tasks), []);
    });

    it('a retryable failed dependent of a permanent failure is blocked too', () => {
      const tasks = [exhausted('a'), task('b', { depends_on: ['a'], status: 'failed', attempts: 1, error_log: ['[TEST_FAIL] x'] })];
      assert.deepEqual(failuresOf(tasks), { b: '[DEPENDENCY] Blocked by failed a' });
    });
  });

  describe('permanent vs retryable failures', () => {
    it('a task whose last error_log entry is [DEPENDENCY] is permanent, attempts notwithstanding', () => {
      const t = task('b', { status: 'failed', attempts: 0, error_log: ['[TEST_FAIL] x', '[DEPENDENCY] Blocked by failed a'] });
      assert.equal(isDependencyFailure(t), true);
      assert.equal(isPermanentlyFailed(t), true);
      assert.equal(isRetryable(t), false);
      assert.deepEqual(failuresOf([t, task('c', { depends_on: ['b'] })]), { c: '[DEPENDENCY] Blocked by failed b' });
    });

    it('deviation from the protocol: an older [DEPENDENCY] entry followed by [TEST_FAIL] with attempts left is retryable', () => {
      const t = task('b', { status: 'failed', attempts: 1, error_log: ['[DEPENDENCY] Blocked by failed a', '[TEST_FAIL] 2 tests failed'] });
      assert.equal(isDependencyFailure(t), false);
      assert.equal(isPermanentlyFailed(t), false);
      assert.equal(isRetryable(t), true);
      const tasks = [t, task('c', { depends_on: ['b'] })];
      assert.deepEqual(findDependencyFailures(tasks), []);
      assert.deepEqual(ids(eligibleTasks(tasks)), ['b']);
    });

    it('attempts at max_attempts is permanent; a pending task is neither', () => {
      assert.equal(isPermanentlyFailed(exhausted('a')), true);
      assert.equal(isRetryable(task('a', { status: 'failed', attempts: 2, max_attempts: 3 })), true);
      assert.equal(isPermanentlyFailed(task('a')), false);
      assert.equal(isRetryable(task('a')), false);
    });

    it('entryCategory reads [CATEGORY] at the start only', () => {
      assert.equal(entryCategory('[MERGE_CONFLICT] x'), 'MERGE_CONFLICT');
      assert.equal(entryCategory('x [DEPENDENCY]'), undefined);
      assert.equal(entryCategory('[NOT_A_CATEGORY] x'), undefined);
      assert.equal(entryCategory(undefined), undefined);
    });
  });

  describe('the eligible pool', () => {
    it('by priority, first attempts before retries of the same priority, then id (natural order) or oldest failure', () => {
      const tasks = [
        task('task-10', { priority: 'P1' }),
        task('task-9', { priority: 'P1' }),
        task('task-2', { priority: 'P2' }),
        task('task-11', { priority: 'P0' }),
        task('r-new', { status: 'failed', attempts: 1, priority: 'P1', failed_at: '2025-07-01T12:00:00Z' }),
        task('r-old', { status: 'failed', attempts: 1, priority: 'P1', failed_at: '2025-07-01T09:00:00Z' }),
        task('r-p0', { status: 'failed', attempts: 2, priority: 'P0', failed_at: '2025-07-02T00:00:00Z' }),
        task('done', { status: 'completed' }),
        task('busy', { status: 'in_progress' }),
        exhausted('dead'),
      ];
      // A P0 retry does not wait behind P1 and P2 work.
      assert.deepEqual(ids(eligibleTasks(tasks)), ['task-11', 'r-p0', 'task-9', 'task-10', 'r-old', 'r-new', 'task-2']);
    });

    it('only tasks whose dependencies are all completed', () => {
      const tasks = [
        task('a', { status: 'completed' }),
        task('b'),
        task('c', { depends_on: ['a'] }),
        task('d', { depends_on: ['a', 'b'] }),
        task('e', { depends_on: ['b'], status: 'failed', attempts: 1 }),
      ];
      assert.deepEqual(ids(eligibleTasks(tasks)), ['b', 'c']);
    });

    it("never a task without validation.command; the pool scan's missing names those that would be eligible", () => {
      const tasks = [
        task('ok'),
        task('none', { validation: undefined }),
        task('null', { validation: null }),
        task('nullcmd', { validation: { command: null } }),
        task('blank', { validation: { command: '   ' } }),
        task('retry', { status: 'failed', attempts: 1, validation: { command: '' } }),
        task('waiting', { validation: null, depends_on: ['ok'] }),
        task('done', { validation: null, status: 'completed' }),
      ];
      assert.deepEqual(ids(eligibleTasks(tasks)), ['ok']);
      assert.deepEqual(ids(scanPool(tasks).missing), ['none', 'null', 'nullcmd', 'blank', 'retry']);
      assert.equal(hasValidationCommand(tasks[0]!), true);
      assert.equal(analyzeTasks(tasks).states.get('none'), 'needs_validation');
    });
  });

  describe('the order within a priority: the longest chain of work first', () => {
    // A project's history: a hub that nine later tasks wait on, beside leaves with lower ids.
    const hubAndLeaves = () => [
      task('task-001'),
      task('task-002'),
      task('task-003'),
      task('task-004', { depends_on: ['task-009'] }),
      task('task-009'),
      ...Array.from({ length: 8 }, (_, i) => task(`task-${String(10 + i).padStart(3, '0')}`, { depends_on: ['task-009'] })),
    ];

    it('a hub that nine tasks wait on starts before lower-id leaves', () => {
      const pool = eligibleTasks(hubAndLeaves());
      assert.deepEqual(ids(pool), ['task-009', 'task-001', 'task-002', 'task-003']);
      assert.deepEqual(ids(selectBatch(pool, [], 3)), ['task-009', 'task-001', 'task-002']);
    });

    it("counts the chain's length, not the number of dependents: a deep chain beats a wide fan", () => {
      const tasks = [
        task('wide'),
        ...['w1', 'w2', 'w3', 'w4'].map((id) => task(id, { depends_on: ['wide'] })),
        task('deep'),
        task('d1', { depends_on: ['deep'] }),
        task('d2', { depends_on: ['d1'] }),
      ];
      const chains = longestChains(tasks);
      assert.equal(chains.get('wide'), 2);
      assert.equal(chains.get('deep'), 3);
      assert.deepEqual(ids(eligibleTasks(tasks)), ['deep', 'wide']);
    });

    it('weighs the chain by estimated durations; a task without one counts as their median', () => {
      const tasks = [
        task('a'),
        task('a1', { depends_on: ['a'] }),
        task('b'),
        task('b1', { depends_on: ['b'] }),
        task('b2', { depends_on: ['b1'] }),
      ];
      assert.deepEqual(ids(eligibleTasks(tasks)), ['b', 'a'], 'no history: the longer chain of tasks');
      // a1 took 10 minutes before; the median of what is known (60 s, 600 s) = 330 s stands for the rest.
      const durations = new Map([
        ['a1', 600_000],
        ['b', 60_000],
      ]);
      assert.equal(longestChains(tasks, durations).get('a'), 330_000 + 600_000);
      assert.equal(longestChains(tasks, durations).get('b'), 60_000 + 330_000 + 330_000);
      assert.deepEqual(ids(eligibleTasks(tasks, undefined, { durations })), ['a', 'b']);
    });

    it('priority still comes first, and retries after first attempts of the same priority', () => {
      const tasks = [
        ...hubAndLeaves(),
        task('p0-leaf', { priority: 'P0' }),
        task('retry-hub', { status: 'failed', attempts: 1, failed_at: '2025-07-01T09:00:00Z' }),
        ...['x1', 'x2', 'x3'].map((id) => task(id, { depends_on: ['retry-hub'] })),
        task('p2-hub', { priority: 'P2' }),
        ...['y1', 'y2', 'y3', 'y4', 'y5'].map((id) => task(id, { depends_on: ['p2-hub'] })),
      ];
      assert.deepEqual(ids(eligibleTasks(tasks)), ['p0-leaf', 'task-009', 'task-001', 'task-002', 'task-003', 'retry-hub', 'p2-hub']);
    });

    it('only work that will still run counts: completed and blocked tasks add nothing', () => {
      const tasks = [
        task('a'),
        task('a1', { depends_on: ['a'], status: 'completed' }),
        task('b'),
        task('b1', { depends_on: ['b'] }),
        task('c'),
        exhausted('dead'),
        task('c1', { depends_on: ['c', 'dead'], status: 'failed', attempts: 0, error_log: ['[DEPENDENCY] Blocked by failed dead'] }),
      ];
      const chains = longestChains(tasks);
      assert.equal(chains.get('a'), 1);
      assert.equal(chains.get('c'), 1);
      assert.equal(chains.has('dead'), false);
      assert.deepEqual(ids(eligibleTasks(tasks)), ['b', 'a', 'c']);
    });

    it('a cycle downstream of a ready task neither hangs nor throws', () => {
      const tasks = [
        task('r'),
        task('s'),
        task('x', { depends_on: ['r', 'y'] }),
        task('y', { depends_on: ['x'] }),
        task('z', { depends_on: ['s'] }),
      ];
      const chains = longestChains(tasks);
      assert.equal(chains.get('s'), 2);
      assert.ok(chains.has('r') && chains.has('x') && chains.has('y'));
      assert.deepEqual(ids(eligibleTasks(tasks)).sort(), ['r', 's']);
    });

    it('duplicate and self dependencies count once, or not at all', () => {
      const tasks = [task('a'), task('b', { depends_on: ['a', 'a', 'b'] })];
      assert.equal(longestChains(tasks).get('a'), 2);
    });

    it("the pool's chains alone (chainsOf, walking only what waits on the pool) are longestChains' own, or none at a cycle", () => {
      const rand = rng(5);
      const statuses = ['pending', 'pending', 'pending', 'completed', 'in_progress', 'failed'] as const;
      for (let n = 0; n < 200; n++) {
        const size = 5 + rand(40);
        const tasks = Array.from({ length: size }, (_, i) => {
          const deps = Array.from({ length: rand(3) }, () => `t${rand(n % 4 === 0 ? size : Math.max(1, i))}`);
          const status = statuses[rand(statuses.length)]!;
          return status === 'failed' && rand(2) ? exhausted(`t${i}`, { depends_on: deps }) : task(`t${i}`, { status, depends_on: deps });
        });
        const durations = rand(2) ? new Map(tasks.filter(() => rand(3) === 0).map((t) => [t.id, 1 + rand(1000)])) : undefined;
        const roots = tasks.filter(() => rand(3) === 0);
        const all = longestChains(tasks, durations);
        const some = chainsOf(tasks, roots, durations);
        // Without a cycle in reach (every fourth case may have one), the same figures.
        if (!some) {
          assert.equal(n % 4, 0, `case ${n}: no cycle can be reached, yet the walk gave up`);
          continue;
        }
        for (const r of roots) assert.equal(some.get(r.id), all.get(r.id), `case ${n}: ${r.id}`);
      }
    });
  });

  describe('the retry rule: a failed task waits until the base moves or its back-off has passed', () => {
    const FAILED_AT = '2025-07-01T10:00:00Z';
    const t0 = Date.parse(FAILED_AT);
    const failed = (id: string, over: Partial<Task> = {}) =>
      task(id, { status: 'failed', attempts: 1, failed_at: FAILED_AT, started_at_commit: 'base1', error_log: ['[TEST_FAIL] x'], ...over });
    const clock = (head: string, afterS: number, backoffSeconds = 30) => ({ head, now: t0 + afterS * 1000, backoffSeconds });

    it('the back-off doubles per attempt from the first, capped at 10 minutes (or the first, when longer)', () => {
      assert.deepEqual(
        [1, 2, 3, 4, 5, 6, 7, 30].map((n) => retryBackoffSeconds(n, 30)),
        [30, 60, 120, 240, 480, 600, 600, 600],
      );
      assert.equal(retryBackoffSeconds(3, 0), 0);
      assert.equal(retryBackoffSeconds(1, 900), 900);
      assert.equal(MAX_RETRY_BACKOFF_S, 600);
    });

    it('on an unchanged base the task is held back until failed_at + back-off, then eligible', () => {
      const a = failed('a');
      assert.equal(retryNotBefore(a, clock('base1', 10)), t0 + 30_000);
      assert.deepEqual(ids(eligibleTasks([a], clock('base1', 10))), []);
      assert.deepEqual(ids(eligibleTasks([a], clock('base1', 30))), ['a']);
      const third = failed('c', { attempts: 2 });
      assert.deepEqual(ids(eligibleTasks([third], clock('base1', 59))), [], 'the second back-off is 60 s');
      assert.deepEqual(ids(eligibleTasks([third], clock('base1', 60))), ['c']);
    });

    it('once the base branch has moved since the failed attempt started, at once', () => {
      assert.equal(retryNotBefore(failed('a'), clock('base2', 1)), undefined);
      assert.deepEqual(ids(eligibleTasks([failed('a')], clock('base2', 1))), ['a']);
    });

    it('a back-off of 0, no clock, or no recorded base or failure time: no wait (as before the rule)', () => {
      assert.deepEqual(ids(eligibleTasks([failed('a')], clock('base1', 1, 0))), ['a']);
      assert.deepEqual(ids(eligibleTasks([failed('a')])), ['a']);
      assert.deepEqual(ids(eligibleTasks([failed('a', { started_at_commit: null })], clock('base1', 1))), ['a']);
      assert.deepEqual(ids(eligibleTasks([failed('a', { failed_at: null })], clock('base1', 1))), ['a']);
    });

    it("pending tasks are never held back; the pool scan's retryAt is the earliest held-back retry, for the loop to wake up", () => {
      const tasks = [
        task('p'),
        failed('a'),
        failed('b', { attempts: 2 }),
        failed('moved', { started_at_commit: 'old' }),
        exhausted('dead', { started_at_commit: 'base1', failed_at: FAILED_AT }),
      ];
      const c = clock('base1', 5);
      assert.deepEqual(ids(eligibleTasks(tasks, c)), ['p', 'moved']);
      assert.equal(scanPool(tasks, c).retryAt, t0 + 30_000);
      assert.equal(scanPool([failed('b', { attempts: 2 })], c).retryAt, t0 + 60_000);
      assert.equal(scanPool([task('p'), exhausted('dead')], c).retryAt, undefined);
      // Held back for its dependency, not its back-off: not a reason to wake up.
      assert.equal(scanPool([task('dep'), failed('a', { depends_on: ['dep'] })], c).retryAt, undefined);
    });

    it('with the clock and durations both: a held-back retry is left out, the rest in the order of the weighted chain', () => {
      const tasks = [
        task('a'),
        task('a1', { depends_on: ['a'] }),
        task('b'),
        task('b1', { depends_on: ['b'] }),
        task('b2', { depends_on: ['b1'] }),
        failed('r'),
      ];
      const durations = new Map([
        ['a1', 600_000],
        ['b', 60_000],
      ]);
      assert.deepEqual(ids(eligibleTasks(tasks, clock('base1', 10), { durations })), ['a', 'b']);
      assert.deepEqual(ids(eligibleTasks(tasks, clock('base2', 10), { durations })), ['a', 'b', 'r'], 'the base moved');
      assert.deepEqual(ids(eligibleTasks(tasks, clock('base1', 10))), ['b', 'a'], 'no durations: the longer chain of tasks');
    });
  });

  describe('heldBack: why a ready task waits while a slot is free', () => {
    const pick = (eligible: Task[], running: Task[], max: number) => {
      const batch = selectBatch(eligible, running, max);
      return { batch: batch.map((t) => t.id), held: heldBack(eligible, running, max, batch) };
    };

    it('names the file a task shares with one running or starting, and nothing when no slot is left', () => {
      const a = task('task-001', { files_hint: ['calc.py'] });
      const b = task('task-002', { files_hint: ['calc.py', 'tests/'] });
      const c = task('task-003', { files_hint: ['docs/'] });
      assert.deepEqual(pick([a, b, c], [], 3), {
        batch: ['task-001', 'task-003'],
        held: [{ id: 'task-002', reason: 'shares calc.py with task-001' }],
      });
      assert.deepEqual(pick([b, c], [a], 3).held, [{ id: 'task-002', reason: 'shares calc.py with task-001' }]);
      assert.deepEqual(pick([a, b], [], 1).held, [], 'one slot, taken: waiting for a slot needs no reason');
      const same = ['task-004', 'task-005', 'task-006', 'task-007'].map((id) => task(id, { files_hint: ['calc.py'] }));
      assert.deepEqual(
        pick(same, [], 3).held.map((h) => h.id),
        ['task-005', 'task-006'],
        'as many as the free slots, first in the order: a thousand tasks on one file are not a thousand lines',
      );
    });

    it('a task that runs alone: it waits for the running ones, and those behind it wait for it', () => {
      const running = task('task-001');
      const solo = task('task-002', { files_hint: [] });
      const next = task('task-003');
      assert.deepEqual(pick([solo, next], [running], 3), {
        batch: [],
        held: [
          { id: 'task-002', reason: "it runs alone (no files_hint, or a merge conflict's retry): it starts once the tasks running end" },
          { id: 'task-003', reason: "task-002 runs alone (no files_hint, or a merge conflict's retry) and starts first" },
        ],
      });
      assert.deepEqual(pick([next], [solo], 3).held, [
        { id: 'task-003', reason: "task-002 runs alone (no files_hint, or a merge conflict's retry)" },
      ]);
    });
  });

  describe('selectBatch', () => {
    const pool = (n: number) => Array.from({ length: n }, (_, i) => task(`t${i + 1}`));

    it('takes up to max_parallel tasks in pool order', () => {
      assert.deepEqual(ids(selectBatch(pool(5), [], 3)), ['t1', 't2', 't3']);
      assert.deepEqual(ids(selectBatch(pool(2), [], 3)), ['t1', 't2']);
      assert.deepEqual(ids(selectBatch(pool(5), [], 1)), ['t1']);
      assert.deepEqual(selectBatch([], [], 3), []);
    });

    it('never puts a task with its dependency in one batch, either way round', () => {
      const a = task('a');
      const b = task('b', { depends_on: ['a'] });
      const c = task('c');
      assert.deepEqual(ids(selectBatch([a, b, c], [], 3)), ['a', 'c']);
      assert.deepEqual(ids(selectBatch([b, a, c], [], 3)), ['b', 'c']);
    });

    it('never starts a task next to a running one it depends on or that depends on it', () => {
      const running = [task('r')];
      assert.deepEqual(ids(selectBatch([task('x', { depends_on: ['r'] }), task('y')], running, 3)), ['y']);
      assert.deepEqual(ids(selectBatch([task('x'), task('y')], [task('r', { depends_on: ['x'] })], 3)), ['y']);
    });

    it("counts another worker's tasks for conflicts and solo, not against this worker's slots", () => {
      const elsewhere = [task('held', { files_hint: ['src/held/'] })];
      // Two slots of its own, though another worker runs a task.
      assert.deepEqual(ids(selectBatch(pool(3), [], 2, elsewhere)), ['t1', 't2']);
      assert.deepEqual(ids(selectBatch(pool(3), [task('mine', { files_hint: ['src/mine/'] })], 2, elsewhere)), ['t1']);
      // A dependency on, or a files_hint overlap with, the other worker's task still holds it back.
      const dependent = task('dep', { depends_on: ['held'] });
      const overlapping = task('over', { files_hint: ['src/held/x.ts'] });
      assert.deepEqual(ids(selectBatch([dependent, overlapping, task('free')], [], 3, elsewhere)), ['free']);
      // A solo task at the head waits for the other worker (nothing overtakes it); a solo task
      // elsewhere stops everything here.
      assert.deepEqual(selectBatch([task('solo', { files_hint: [] }), task('t1')], [], 3, elsewhere), []);
      assert.deepEqual(ids(selectBatch([task('t1'), task('solo', { files_hint: [] })], [], 3, elsewhere)), ['t1']);
      assert.deepEqual(selectBatch(pool(2), [], 3, [task('s', { files_hint: [] })]), []);
    });

    it('skips tasks whose files_hint overlaps a batch task at directory level', () => {
      const tasks = [
        task('auth', { files_hint: ['src/auth/'] }),
        task('oauth', { files_hint: ['src/auth/oauth/'] }),
        task('authz', { files_hint: ['src/authz'] }),
        task('mw', { files_hint: ['src/middleware/auth.ts', 'src/auth/index.ts'] }),
      ];
      assert.deepEqual(ids(selectBatch(tasks, [], 4)), ['auth', 'authz']);
    });

    it('an empty files_hint runs solo: alone when first, skipped when others are in the batch', () => {
      const solo = task('solo', { files_hint: [] });
      assert.deepEqual(ids(selectBatch([solo, ...pool(3)], [], 3)), ['solo']);
      assert.deepEqual(ids(selectBatch([task('t1'), solo, task('t2')], [], 3)), ['t1', 't2']);
      assert.equal(runsSolo(solo), true);
    });

    it('a task whose last failure was MERGE_CONFLICT runs solo; an older one does not count', () => {
      const conflicted = task('m', { status: 'failed', attempts: 1, error_log: ['[MERGE_CONFLICT] src/a.ts'] });
      const recovered = task('n', { status: 'failed', attempts: 2, error_log: ['[MERGE_CONFLICT] src/a.ts', '[TEST_FAIL] x'] });
      assert.equal(runsSolo(conflicted), true);
      assert.equal(runsSolo(recovered), false);
      assert.deepEqual(ids(selectBatch([conflicted, ...pool(2)], [], 3)), ['m']);
      assert.deepEqual(ids(selectBatch([recovered, ...pool(2)], [], 3)), ['n', 't1', 't2']);
    });

    it('a solo task first in line waits for the running tasks instead of being overtaken', () => {
      const solo = task('solo', { files_hint: [] });
      assert.deepEqual(selectBatch([solo, ...pool(3)], [task('r')], 3), []);
      assert.deepEqual(ids(selectBatch([solo], [], 3)), ['solo'], 'and runs once nothing is running');
    });

    it('nothing starts beside a running solo task', () => {
      assert.deepEqual(selectBatch(pool(3), [task('r', { files_hint: [] })], 3), []);
    });

    it('rolling dispatch: running tasks take slots, free slots are filled', () => {
      const running = [task('r1'), task('r2')];
      assert.deepEqual(ids(selectBatch(pool(3), running, 3)), ['t1']);
      assert.deepEqual(selectBatch(pool(3), [...running, task('r3')], 3), []);
      assert.deepEqual(ids(selectBatch([task('x', { files_hint: ['src/r1/deep/'] }), ...pool(3)], running, 4)), ['t1', 't2']);
    });
  });

  describe('hintsOverlap (directory level)', () => {
    const table: Array<[string[], string[], boolean]> = [
      [['src/auth/'], ['src/auth/oauth/'], true],
      [['src/auth'], ['src/authz'], false],
      [['src/auth/'], ['src/authz/'], false],
      [['src/auth/'], ['src/auth/x.ts'], true],
      [['src/auth.ts'], ['src/auth.ts'], true],
      [['src/auth.ts'], ['src/auth.tsx'], false],
      [['src/**/*.ts'], ['src/db/x.ts'], true],
      [['src/auth/*.ts'], ['src/auth/oauth/y.ts'], true],
      [['src/auth/*.ts'], ['src/db/'], false],
      [['lib/*.ts'], ['src/x.ts'], false],
      [['*.md'], ['src/deep/file.ts'], true],
      [['src/{a,b}/x.ts'], ['src/c/'], true],
      [['.'], ['anything/at/all'], true],
      [[''], ['anything'], true],
      [['./'], ['x'], true],
      [['./src/a'], ['src/a/b'], true],
      [['src\\auth\\'], ['src/auth/x'], true],
      [['src//auth//'], ['src/auth'], true],
      [['a', 'b'], ['c', 'b/d'], true],
      [['a', 'b'], ['c', 'd'], false],
      [[], ['a'], false],
    ];
    for (const [a, b, want] of table) {
      it(`${JSON.stringify(a)} vs ${JSON.stringify(b)}: ${want ? 'overlap' : 'disjoint'}`, () => {
        assert.equal(hintsOverlap(a, b), want);
        assert.equal(hintsOverlap(b, a), want, 'symmetric');
      });
    }

    it('normalizeHint: globs count as their directory, "." as everything', () => {
      assert.equal(normalizeHint('src/auth/*.ts'), 'src/auth');
      assert.equal(normalizeHint('src/auth*'), 'src');
      assert.equal(normalizeHint('*.md'), '');
      assert.equal(normalizeHint('.'), '');
      assert.equal(normalizeHint(' ./src/a/ '), 'src/a');
    });
  });

  describe('analyzeTasks', () => {
    it('gives every task one state', () => {
      const tasks = [
        task('done', { status: 'completed' }),
        task('run', { status: 'in_progress' }),
        task('ready'),
        task('wait', { depends_on: ['ready'] }),
        task('noval', { validation: null }),
        task('retry', { status: 'failed', attempts: 1 }),
        exhausted('dead'),
        task('blocked', { depends_on: ['dead'] }),
        task('stored', { status: 'failed', error_log: ['[DEPENDENCY] Blocked by failed dead'], depends_on: ['dead'] }),
        task('cyc', { depends_on: ['cyc'] }),
      ];
      const { states, blockedReasons } = analyzeTasks(tasks);
      assert.deepEqual(Object.fromEntries(states), {
        done: 'completed',
        run: 'running',
        ready: 'ready',
        wait: 'waiting',
        noval: 'needs_validation',
        retry: 'retryable',
        dead: 'failed',
        blocked: 'blocked',
        stored: 'blocked',
        cyc: 'blocked',
      });
      assert.deepEqual(Object.fromEntries(blockedReasons), {
        blocked: '[DEPENDENCY] Blocked by failed dead',
        stored: '[DEPENDENCY] Blocked by failed dead',
        cyc: '[DEPENDENCY] Circular dependency detected: cyc -> cyc',
      });
    });

    it('is read-only: the tasks are not changed', () => {
      const tasks = [exhausted('a'), task('b', { depends_on: ['a'] })];
      const before = JSON.stringify(tasks);
      analyzeTasks(tasks);
      findDependencyFailures(tasks);
      eligibleTasks(tasks);
      selectBatch(eligibleTasks(tasks), [], 3);
      assert.equal(JSON.stringify(tasks), before);
    });
  });

  describe('scaling: nothing quadratic (no timing asserted; mocha times out at 30 s)', function () {
    this.timeout(30_000);
    const N = 20_000;

    function everything(tasks: Task[]) {
      const failures = findDependencyFailures(tasks);
      const eligible = eligibleTasks(tasks);
      const batch = selectBatch(eligible, [], 3);
      const missing = scanPool(tasks).missing;
      const { states } = analyzeTasks(tasks);
      const stats = computeStats(tasks);
      return { failures, eligible, batch, missing, states, stats };
    }

    it(`a ${N}-task cycle: every task is marked, with one shortened cycle standing for all`, () => {
      const tasks = Array.from({ length: N }, (_, i) => task(`task-${i}`, { depends_on: [`task-${(i + 1) % N}`] }));
      const failures = findDependencyFailures(tasks);
      assert.equal(failures.length, N);
      const [first, other] = [failures.find((f) => f.taskId === 'task-0')!, failures.find((f) => f.taskId === 'task-7')!];
      assert.match(
        first.entry,
        /^\[DEPENDENCY\] Circular dependency detected: task-0 -> task-1 -> .* -> task-0 \(20000 tasks depend on each other in a cycle\)$/,
      );
      assert.match(other.entry, /^\[DEPENDENCY\] Circular dependency detected: task-7 is part of task-0 -> /);
      assert.ok(first.entry.length < 300, 'the message stays short');
    });

    it(`a ${N}-task chain, listed leaf first, whose root failed for good`, () => {
      const tasks: Task[] = [];
      for (let i = N - 1; i >= 1; i--) tasks.push(task(`task-${i}`, { depends_on: [`task-${i - 1}`] }));
      tasks.push(exhausted('task-0'));
      const r = everything(tasks);
      assert.equal(r.failures.length, N - 1);
      assert.equal(r.stats.blocked, N - 1);
      assert.deepEqual(r.eligible, []);
    });

    it(`a ${N}-task chain all pending: one eligible task`, () => {
      const tasks = Array.from({ length: N }, (_, i) => task(`task-${i}`, { depends_on: i ? [`task-${i - 1}`] : [] }));
      const r = everything(tasks);
      assert.deepEqual(ids(r.batch), ['task-0']);
      assert.equal(r.states.get(`task-${N - 1}`), 'waiting');
    });

    it(`a ${N}-task wide DAG: one root, ${N - 2} independent middles, one task depending on all`, () => {
      const middles = Array.from({ length: N - 2 }, (_, i) => task(`m-${i}`, { depends_on: ['root'], files_hint: ['src/shared/'] }));
      const tasks = [task('root', { status: 'completed' }), ...middles, task('sink', { depends_on: middles.map((t) => t.id) })];
      const r = everything(tasks);
      assert.equal(r.eligible.length, N - 2);
      assert.deepEqual(ids(r.batch), ['m-0'], 'all middles share a hint: one at a time');
      assert.equal(r.states.get('sink'), 'waiting');
      // The same, with the root failed for good: everything below is blocked once.
      tasks[0] = exhausted('root');
      const blocked = everything(tasks);
      assert.equal(blocked.failures.length, N - 1);
    });

    it(`a ${N}-task pool with all-solo tasks and many running`, () => {
      const tasks = Array.from({ length: N }, (_, i) => task(`s-${i}`, { files_hint: i % 2 ? [] : ['src/same/'] }));
      const running = Array.from({ length: 50 }, (_, i) => task(`run-${i}`, { status: 'in_progress', files_hint: [`src/same/${i}/`] }));
      assert.deepEqual(selectBatch(eligibleTasks(tasks), running, 100), []);
    });
  });
});
