import assert from 'node:assert/strict';

import { InputError } from '../../../../src/core/inputError';
import { parseTaskFile, serializeTaskFile } from '../../../../src/core/taskFile/parse';
import type { Task } from '../../../../src/core/taskFile/schema';
import { findDependencyFailures } from '../../../../src/core/tasks/dag';
import { addTask, nextTaskId } from '../../../../src/core/tasks/taskOps';
import { retryTask } from '../../../../src/core/tasks/transitions';
import { exhausted, task, taskFile } from '../fixtures';

const blockedBy = (id: string, by: string, over: Partial<Task> = {}) =>
  task(id, {
    status: 'failed',
    depends_on: [by],
    error_log: [`[DEPENDENCY] Blocked by failed ${by}`],
    failed_at: '2025-07-01T10:00:00Z',
    ...over,
  });

function inputError(fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (e: unknown) => e instanceof InputError && message.test(e.message));
}

describe('core/taskOps', () => {
  describe('nextTaskId', () => {
    it('is task-001 for an empty file', () => {
      assert.equal(nextTaskId(taskFile([])), 'task-001');
    });

    it('follows the highest task-NNN, ignoring other ids and gaps', () => {
      assert.equal(
        nextTaskId(taskFile([task('task-001'), task('task-007'), task('task-003'), task('setup'), task('task-01a'), task('task-9x')])),
        'task-008',
      );
    });

    it('grows past three digits', () => {
      assert.equal(nextTaskId(taskFile([task('task-999')])), 'task-1000');
      assert.equal(nextTaskId(taskFile([task('task-1234')])), 'task-1235');
    });

    it('never goes below last_task_number nor the number the log says was issued', () => {
      assert.equal(nextTaskId(taskFile([task('task-001')], { last_task_number: 2 })), 'task-003');
      assert.equal(nextTaskId(taskFile([task('task-005')], { last_task_number: 2 })), 'task-006');
      assert.equal(nextTaskId(taskFile([]), 4), 'task-005');
      assert.equal(nextTaskId(taskFile([task('task-001')], { last_task_number: 2 }), 7), 'task-008');
    });
  });

  describe('addTask', () => {
    it('keeps the highest number it handed out, so a task removed by hand does not give its id again', () => {
      const file = taskFile([]);
      addTask(file, { title: 'First' });
      addTask(file, { title: 'Second' });
      assert.equal(file.last_task_number, 2);
      file.tasks.pop();
      assert.equal(addTask(file, { title: 'Third' }).id, 'task-003');
      assert.equal(addTask(taskFile([]), { title: 'after a restore' }, 5).id, 'task-006');
    });

    it('appends a pending task with the defaults, trimmed title, and returns it', () => {
      const file = taskFile([task('task-001')]);
      const added = addTask(file, { title: '  Add rate limiting  ' });
      assert.equal(file.tasks.at(-1), added);
      assert.equal(added.id, 'task-002');
      assert.equal(added.title, 'Add rate limiting');
      assert.equal(added.status, 'pending');
      assert.equal(added.priority, 'P1');
      assert.deepEqual(added.depends_on, []);
      assert.equal(added.attempts, 0);
      assert.equal(added.max_attempts, 3);
      assert.deepEqual(added.files_hint, []);
      assert.deepEqual(added.error_log, []);
      assert.equal(added.validation?.command, null, 'no validation command unless given');
    });

    it('takes every option, and the result survives a write and a read', () => {
      const file = taskFile([task('task-001'), task('task-002')]);
      const added = addTask(file, {
        title: 'OAuth',
        context: 'passport.js',
        priority: 'P0',
        dependsOn: ['task-001', 'task-002'],
        files: ['src/auth/oauth/'],
        validate: 'npm test -- oauth',
        timeoutSeconds: 180,
        maxAttempts: 5,
      });
      const parsed = parseTaskFile(serializeTaskFile(file));
      assert.ok(parsed.ok);
      assert.deepEqual(parsed.file.tasks.at(-1), added);
      assert.equal(added.context, 'passport.js');
      assert.deepEqual(added.validation, { command: 'npm test -- oauth', timeout_seconds: 180 });
      assert.equal(added.max_attempts, 5);
    });

    const bad: Array<[string, Parameters<typeof addTask>[1], RegExp]> = [
      ['an empty title', { title: '   ' }, /^title: must not be empty/],
      ['an unknown priority', { title: 't', priority: 'P3' }, /--priority: expected P0, P1 or P2, got "P3"/],
      ['an invalid dependency id', { title: 't', dependsOn: ['a b'] }, /--depends-on: "a b" is not a valid task id/],
      ['an unknown dependency', { title: 't', dependsOn: ['task-404'] }, /--depends-on: no task "task-404"/],
      ['a zero timeout', { title: 't', timeoutSeconds: 0 }, /--timeout/],
      ['a negative timeout', { title: 't', timeoutSeconds: -5 }, /--timeout/],
      ['a NaN timeout', { title: 't', timeoutSeconds: Number.NaN }, /--timeout/],
      ['max attempts 0', { title: 't', maxAttempts: 0 }, /--max-attempts/],
      ['fractional max attempts', { title: 't', maxAttempts: 1.5 }, /--max-attempts/],
      ['a 501-character title', { title: 'x'.repeat(501) }, /^title: at most 500 characters, got 501$/],
      ['a 1 MiB title', { title: 'x'.repeat(1 << 20) }, /^title: at most 500 characters, got 1048576$/],
      ['a timeout a timer cannot hold', { title: 't', timeoutSeconds: 2_147_484 }, /^--timeout: at most 604800 seconds, got 2147484$/],
      ['a context over its limit', { title: 't', context: 'c'.repeat(100_001) }, /^--context: at most 100000 characters, got 100001$/],
      ['a validation command over its limit', { title: 't', validate: 'v'.repeat(16_385) }, /^--validate: at most 16384 characters/],
      ['a files entry over its limit', { title: 't', files: ['f'.repeat(4097)] }, /^--files: at most 4096 characters/],
    ];
    for (const [name, input, message] of bad) {
      it(`refuses ${name} and changes nothing`, () => {
        const file = taskFile([task('task-001')]);
        inputError(() => addTask(file, input), message);
        assert.equal(file.tasks.length, 1);
      });
    }
  });

  describe('retryTask', () => {
    it('resets a failed task: pending, attempts 0, failed_at cleared, error_log kept', () => {
      const file = taskFile([exhausted('a', { failed_at: '2025-07-01T10:00:00Z', error_log: ['[TEST_FAIL] one', '[TEST_FAIL] two'] })]);
      const reset = retryTask(file, 'a');
      const a = file.tasks[0]!;
      assert.deepEqual(reset, [a]);
      assert.equal(a.status, 'pending');
      assert.equal(a.attempts, 0);
      assert.equal(a.failed_at, null);
      assert.deepEqual(a.error_log, ['[TEST_FAIL] one', '[TEST_FAIL] two']);
    });

    it('unblocks the dependents it blocked, transitively, and nothing else', () => {
      const file = taskFile([
        blockedBy('d', 'c'),
        blockedBy('c', 'b'),
        blockedBy('b', 'a', { attempts: 1 }),
        exhausted('a'),
        exhausted('x'),
        blockedBy('y', 'x'),
        task('z', { status: 'failed', attempts: 1, error_log: ['[DEPENDENCY] Blocked by failed a', '[TEST_FAIL] own failure'] }),
      ]);
      const reset = retryTask(file, 'a');
      assert.deepEqual(
        reset.map((t) => t.id),
        ['a', 'b', 'c', 'd'],
      );
      const byId = new Map(file.tasks.map((t) => [t.id, t]));
      for (const id of ['b', 'c', 'd']) {
        assert.equal(byId.get(id)!.status, 'pending', id);
        assert.equal(byId.get(id)!.failed_at, null, id);
      }
      assert.equal(byId.get('b')!.attempts, 1, 'a dependent keeps its own attempts');
      assert.equal(byId.get('y')!.status, 'failed', 'blocked by another task: untouched');
      assert.equal(byId.get('z')!.status, 'failed', 'failed on its own since: untouched');
      assert.deepEqual(findDependencyFailures(file.tasks), [], 'nothing is blocked by the retried task any more');
    });

    for (const status of ['pending', 'in_progress', 'completed'] as const) {
      it(`refuses a ${status} task and changes nothing`, () => {
        const file = taskFile([task('a', { status, attempts: 2 })]);
        const before = JSON.stringify(file);
        inputError(() => retryTask(file, 'a'), new RegExp(`task "a" is ${status.replace('_', ' ')}, not failed`));
        assert.equal(JSON.stringify(file), before);
      });
    }

    it('refuses an unknown id', () => {
      inputError(() => retryTask(taskFile([]), 'nope'), /no task "nope"/);
    });

    it('a long chain of blocked tasks listed leaf first is unblocked without a pass per link', function () {
      this.timeout(30_000);
      const N = 20_000;
      const tasks: Task[] = [];
      for (let i = N - 1; i >= 1; i--) tasks.push(blockedBy(`t-${i}`, `t-${i - 1}`));
      tasks.push(exhausted('t-0'));
      const reset = retryTask(taskFile(tasks), 't-0');
      assert.equal(reset.length, N);
      assert.ok(tasks.every((t) => t.status === 'pending'));
    });
  });
});
