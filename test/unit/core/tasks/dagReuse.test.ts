// The dependency rules keep the last id positions and dependents they built and reuse them
// while the tasks' ids and dependency lists are the same: whatever changed between two calls
// (a list changed in place, a task added, removed or moved, frozen tasks shared between
// calls), every answer is the one a fresh computation gives.
import assert from 'node:assert/strict';

import type { Task } from '../../../../src/core/taskFile/schema';
import { analyzeTasks, eligibleTasks, findDependencyFailures, nextRetryTime, tasksMissingValidation } from '../../../../src/core/tasks/dag';
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
    missing: tasksMissingValidation(tasks).map((t) => t.id),
    retryAt: nextRetryTime(tasks, { ...clock, backoffSeconds: 60 }),
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
});
