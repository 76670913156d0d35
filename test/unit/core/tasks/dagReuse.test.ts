// The dependency rules keep the last id positions and dependents they built and reuse them
// while the tasks' ids and dependency lists are the same, and the last state they found
// nothing to mark in while it stays settled: whatever changed between two calls (a list
// changed in place, a task added, removed or moved, frozen tasks shared between calls, a
// status changed), every answer is the one a fresh computation gives.
import assert from 'node:assert/strict';

import type { Task } from '../../../../src/core/taskFile/schema';
import { analyzeTasks, eligibleTasks, findDependencyFailures, scanPool } from '../../../../src/core/tasks/dag';
import { exhausted, rng, task } from '../fixtures';

const clock = { head: 'h', now: 0, backoffSeconds: 0 };

/** Every answer, as plain data. */
function answers(tasks: readonly Task[]) {
  const a = analyzeTasks(tasks);
  return {
    states: [...a.states],
    blocked: [...a.blockedReasons],
    failures: findDependencyFailures(tasks),
    eligible: eligibleTasks(tasks, clock).map((t) => t.id),
    missing: scanPool(tasks).missing.map((t) => t.id),
    retryAt: scanPool(tasks, { ...clock, backoffSeconds: 60 }).retryAt,
  };
}

/** The same answers from nothing kept: another list first puts both caches aside. */
function fresh(tasks: readonly Task[]) {
  findDependencyFailures([task('other', { depends_on: ['x'] })]);
  return answers(structuredClone(tasks));
}

describe('core/dag: reused positions and dependents', () => {
  it('a dependency list changed in place between two calls is seen', () => {
    const tasks = [exhausted('a'), task('b', { depends_on: ['a'] })];
    assert.deepEqual(
      findDependencyFailures(tasks).map((f) => f.taskId),
      ['b'],
    );
    tasks[1]!.depends_on.pop();
    assert.deepEqual(findDependencyFailures(tasks), []);
    assert.deepEqual(
      eligibleTasks(tasks).map((t) => t.id),
      ['b'],
    );
  });

  it('over random edits, with frozen tasks shared between calls as a session does, every answer is a fresh one', () => {
    const rand = rng(11);
    let tasks: Task[] = Array.from({ length: 30 }, (_, i) =>
      task(`t${i}`, { depends_on: i ? [`t${rand(i)}`] : [], ...(rand(6) === 0 ? { validation: { command: null } } : {}) }),
    );
    for (let n = 0; n < 400; n++) {
      const i = rand(tasks.length);
      const t = tasks[i]!;
      const writable = () => (Object.isFrozen(t) ? (tasks[i] = structuredClone(t)) : t);
      switch (rand(8)) {
        case 0:
          writable().status = (['pending', 'in_progress', 'completed', 'failed'] as const)[rand(4)]!;
          break;
        case 1: {
          const w = writable();
          w.status = 'failed';
          w.attempts = w.max_attempts;
          w.error_log = [rand(2) ? '[TEST_FAIL] no' : '[DEPENDENCY] Blocked by failed t0'];
          break;
        }
        case 2:
          // In place, on a task the caller owns.
          if (!Object.isFrozen(t)) t.depends_on.push(`t${rand(tasks.length + 3)}`);
          break;
        case 3:
          writable().depends_on = rand(2) ? [] : [`t${rand(tasks.length)}`];
          break;
        case 4:
          tasks.push(task(`n${n}`, { depends_on: [`t${rand(tasks.length)}`] }));
          break;
        case 5:
          tasks.splice(i, 1);
          break;
        case 6:
          // A new array of the same tasks, frozen: what the next transaction's draft holds.
          tasks = tasks.map((x) => Object.freeze({ ...x, depends_on: Object.freeze([...x.depends_on]) as string[] }));
          break;
        default:
          [tasks[0], tasks[i]] = [tasks[i]!, tasks[0]!];
      }
      assert.deepEqual(answers(tasks), fresh(tasks), `edit ${n}`);
    }
  });

  it('over random runs with their dependency failures marked, every answer is a fresh one', () => {
    // A second copy of the module and of its indexes, whose caches the calls on the first never
    // touch: the run's copy keeps its settled state from one step to the next, as a session's
    // passes do.
    const paths = ['dag', 'taskIndex'].map((m) => require.resolve(`../../../../src/core/tasks/${m}`));
    const kept = paths.map((p) => require.cache[p]);
    for (const p of paths) delete require.cache[p];
    const reference = require(paths[0]!) as typeof import('../../../../src/core/tasks/dag');
    paths.forEach((p, i) => (require.cache[p] = kept[i]));
    const freshFailures = (tasks: readonly Task[]) => {
      reference.findDependencyFailures([task('other', { depends_on: ['x'] })]);
      return reference.findDependencyFailures(structuredClone(tasks));
    };

    const rand = rng(23);
    const id = (i: number) => `t${i}`;
    let tasks: Task[] = Array.from({ length: 40 }, (_, i) => task(id(i), { depends_on: i ? [id(rand(i))] : [] }));
    let settledSteps = 0;
    for (let n = 0; n < 1500; n++) {
      const i = rand(tasks.length);
      const t = tasks[i]!;
      const w = Object.isFrozen(t) ? (tasks[i] = structuredClone(t)) : t;
      const failed = (entry: string) => ((w.status = 'failed'), w.error_log.push(entry));
      switch (rand(12)) {
        case 0:
        case 1:
          if (w.status === 'pending' || w.status === 'failed') w.status = 'in_progress';
          break;
        case 2:
        case 3:
          w.status = 'completed';
          break;
        case 4:
          w.attempts++;
          failed('[TEST_FAIL] no');
          break;
        case 5:
          // A person's retry, or a reset of a completed task.
          w.status = 'pending';
          w.attempts = 0;
          break;
        case 6:
          w.max_attempts = w.attempts;
          failed('[AGENT_ERROR] gave up');
          break;
        case 7:
          if (rand(4) === 0) w.depends_on = [id(rand(tasks.length + 2))];
          break;
        case 8:
          // A cycle through a task that already ran.
          if (rand(4) === 0) w.depends_on = [...w.depends_on, id(rand(tasks.length))];
          break;
        case 9:
          failed('[COST_LIMIT] over');
          break;
        case 10:
          // A new array of the same tasks, frozen: what the next transaction's draft holds.
          tasks = tasks.map((x) => Object.freeze({ ...x, depends_on: Object.freeze([...x.depends_on]) as string[] }));
          break;
        default:
          w.status = rand(2) ? 'in_progress' : 'failed';
      }
      const expected = freshFailures(tasks);
      const found = findDependencyFailures(tasks);
      assert.deepEqual(found, expected, `step ${n}`);
      if (!found.length) settledSteps++;
      // Marked as a run marks them, so the next step starts from a settled state.
      for (const f of found) {
        const j = tasks.findIndex((x) => x.id === f.taskId);
        const m = (tasks[j] = structuredClone(tasks[j]!));
        m.status = 'failed';
        m.error_log.push(f.entry);
      }
    }
    assert.ok(settledSteps > 300, `${settledSteps} steps found a settled state`);
  });
});
