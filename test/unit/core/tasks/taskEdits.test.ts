// A person's edits on a loaded task file: edit, remove, retry of several tasks, session_config.
import assert from 'node:assert/strict';

import { InputError } from '../../../../src/core/inputError';
import { parseTaskFile, serializeTaskFile } from '../../../../src/core/taskFile/parse';
import type { Task } from '../../../../src/core/taskFile/schema';
import { CONFIG_KEYS, configKey, readConfigValue, setConfigValue, unsetConfigValue } from '../../../../src/core/tasks/configOps';
import { findDependencyFailures } from '../../../../src/core/tasks/dag';
import { editTask, removeTask } from '../../../../src/core/tasks/taskOps';
import { canRetry, retryTasks } from '../../../../src/core/tasks/transitions';
import { exhausted, task, taskFile } from '../fixtures';

const blockedBy = (id: string, by: string, over: Partial<Task> = {}) =>
  task(id, {
    status: 'failed',
    depends_on: [by],
    error_log: [`[DEPENDENCY] Blocked by failed ${by}`],
    failed_at: '2025-07-01T10:00:00Z',
    ...over,
  });

function refused(fn: () => unknown, message: RegExp, field?: string): void {
  assert.throws(fn, (e: unknown) => e instanceof InputError && message.test(e.message) && (field === undefined || e.field === field));
}

describe("core: a person's edits", () => {
  describe('editTask', () => {
    it('changes the fields given, reports each with its value before, and the file stays valid', () => {
      const file = taskFile([task('a'), task('b', { context: 'old', validation: { command: 'true', timeout_seconds: 30 } })]);
      const { changed } = editTask(file, 'b', {
        title: ' New title ',
        priority: 'P0',
        dependsOn: ['a', 'a'],
        files: ['src/x/'],
        validate: 'npm test',
        maxAttempts: 5,
        context: null,
        timeoutSeconds: null,
      });
      const b = file.tasks[1]!;
      assert.equal(b.title, 'New title');
      assert.equal(b.priority, 'P0');
      assert.deepEqual(b.depends_on, ['a']);
      assert.deepEqual(b.files_hint, ['src/x/']);
      assert.deepEqual(b.validation, { command: 'npm test', timeout_seconds: null });
      assert.equal(b.max_attempts, 5);
      assert.equal(b.context, null);
      assert.deepEqual(
        changed.map((c) => [c.field, c.before, c.after]),
        [
          ['title', 'title of b', 'New title'],
          ['context', 'old', null],
          ['priority', 'P1', 'P0'],
          ['depends_on', [], ['a']],
          ['files_hint', ['src/b/'], ['src/x/']],
          ['validation.command', 'true', 'npm test'],
          ['validation.timeout_seconds', 30, null],
          ['max_attempts', 3, 5],
        ],
      );
      assert.ok(parseTaskFile(serializeTaskFile(file)).ok);
    });

    it('a value equal to the current one is no change', () => {
      const file = taskFile([task('a')]);
      assert.deepEqual(editTask(file, 'a', { priority: 'P1', files: ['src/a/'] }).changed, []);
    });

    it('refuses a task in progress, an unknown task, a cycle, a self-dependency, bad values; nothing changes', () => {
      const file = taskFile([
        task('a', { depends_on: ['b'] }),
        task('b', { depends_on: ['c'] }),
        task('c'),
        task('run', { status: 'in_progress' }),
      ]);
      const before = JSON.stringify(file);
      refused(() => editTask(file, 'run', { title: 'x' }), /task "run" is in progress/);
      refused(() => editTask(file, 'nope', { title: 'x' }), /no task "nope"/);
      refused(() => editTask(file, 'c', { dependsOn: ['a'] }), /--depends-on: would make a cycle: c -> a -> b -> c/, '--depends-on');
      refused(() => editTask(file, 'c', { dependsOn: ['c'] }), /cannot depend on itself/);
      refused(() => editTask(file, 'c', { dependsOn: ['zz'] }), /no task "zz"/);
      refused(() => editTask(file, 'c', { priority: 'P7' }), /--priority/, '--priority');
      refused(() => editTask(file, 'c', { title: '  ' }), /title: must not be empty/, 'title');
      refused(() => editTask(file, 'c', { timeoutSeconds: 0 }), /--timeout/);
      refused(() => editTask(file, 'c', { maxAttempts: 0 }), /--max-attempts/);
      assert.equal(JSON.stringify(file), before);
    });
  });

  describe('removeTask', () => {
    it('removes a task nothing depends on', () => {
      const file = taskFile([task('a'), task('b')]);
      const r = removeTask(file, 'a');
      assert.equal(r.task.id, 'a');
      assert.deepEqual(
        file.tasks.map((t) => t.id),
        ['b'],
      );
      assert.deepEqual([r.detached, r.unblocked], [[], []]);
    });

    it('refuses while others depend on it, naming them; --force takes it out of their depends_on and unblocks what it blocked', () => {
      const make = () =>
        taskFile([
          exhausted('a'),
          blockedBy('b', 'a'),
          blockedBy('c', 'b', { depends_on: ['b', 'x'] }),
          task('x'),
          task('d', { depends_on: ['a', 'x'] }),
        ]);
      const file = make();
      const before = JSON.stringify(file);
      refused(() => removeTask(file, 'a'), /b, d depend on "a": remove or edit them first, or use --force/);
      assert.equal(JSON.stringify(file), before);

      const r = removeTask(file, 'a', { force: true });
      assert.deepEqual(r.detached, ['b', 'd']);
      assert.deepEqual(r.unblocked, ['b', 'c']);
      const byId = new Map(file.tasks.map((t) => [t.id, t]));
      assert.equal(byId.has('a'), false);
      assert.deepEqual(byId.get('b')!.depends_on, []);
      assert.deepEqual(byId.get('d')!.depends_on, ['x']);
      assert.equal(byId.get('b')!.status, 'pending');
      assert.equal(byId.get('c')!.status, 'pending');
      assert.deepEqual(findDependencyFailures(file.tasks), [], 'no task is left depending on a task that is gone');
    });

    it('refuses a task in progress, even with --force', () => {
      const file = taskFile([task('a', { status: 'in_progress' })]);
      refused(() => removeTask(file, 'a', { force: true }), /in progress/);
      assert.equal(file.tasks.length, 1);
    });
  });

  describe('retryTasks and canRetry', () => {
    it('canRetry is every failed task, exhausted or not, blocked or not: what retry accepts', () => {
      const file = taskFile([exhausted('a'), task('b', { status: 'failed', attempts: 1 }), blockedBy('c', 'a')]);
      for (const t of file.tasks) assert.equal(canRetry(t), true, t.id);
      assert.doesNotThrow(() => retryTasks(file, ['a', 'b', 'c']));
      for (const status of ['pending', 'in_progress', 'completed'] as const) assert.equal(canRetry(task('x', { status })), false, status);
    });

    it('retries several at once; one it unblocks and also named gets its budget back too', () => {
      const file = taskFile([exhausted('a'), blockedBy('b', 'a', { attempts: 2 }), exhausted('c')]);
      const reset = retryTasks(file, ['a', 'b', 'c']);
      assert.deepEqual(
        reset.map((t) => [t.id, t.status, t.attempts]),
        [
          ['a', 'pending', 0],
          ['b', 'pending', 0],
          ['c', 'pending', 0],
        ],
      );
    });

    it('all or nothing: one id that cannot be retried changes nothing', () => {
      const file = taskFile([exhausted('a'), task('b')]);
      const before = JSON.stringify(file);
      refused(() => retryTasks(file, ['a', 'b']), /task "b" is pending, not failed/);
      assert.equal(JSON.stringify(file), before);
    });
  });

  describe('session_config', () => {
    it('knows every key of the schema, with its kind and default', () => {
      const byKey = new Map(CONFIG_KEYS.map((k) => [k.key, k]));
      assert.deepEqual([byKey.get('max_sessions')!.kind, byKey.get('max_sessions')!.defaultValue], ['integer', 50]);
      assert.deepEqual([byKey.get('agent_timeout_seconds')!.kind, byKey.get('agent_timeout_seconds')!.defaultValue], ['number', 3600]);
      assert.deepEqual([byKey.get('concurrency_mode')!.kind, byKey.get('concurrency_mode')!.values], ['enum', ['exclusive', 'concurrent']]);
      assert.equal(byKey.get('agent_args')!.kind, 'json');
      assert.equal(byKey.get('agent')!.defaultValue, undefined);
      for (const k of CONFIG_KEYS) assert.ok(k.description, `${k.key} has no description`);
    });

    it('sets a checked value and unsets back to the default', () => {
      const file = taskFile([]);
      const key = configKey('max_tasks_per_session');
      assert.equal(setConfigValue(file, key, readConfigValue(key, '40')), 20);
      assert.equal(file.session_config.max_tasks_per_session, 40);
      assert.equal(unsetConfigValue(file, key), 40);
      assert.equal(file.session_config.max_tasks_per_session, 20);
      const agent = configKey('agent');
      setConfigValue(file, agent, 'claude');
      unsetConfigValue(file, agent);
      assert.equal('agent' in file.session_config, false);
    });

    it('refuses what the schema or the agent settings refuse, naming the key; nothing changes', () => {
      const file = taskFile([], { session_config: { ...taskFile([]).session_config, agent_command: 'my-agent' } });
      const before = JSON.stringify(file);
      refused(() => configKey('max_session'), /unknown key "max_session"; keys: max_tasks_per_session, max_sessions/);
      refused(
        () => readConfigValue(configKey('max_sessions'), 'lots'),
        /max_sessions: expected a whole number, got "lots"/,
        'max_sessions',
      );
      refused(() => setConfigValue(file, configKey('max_sessions'), 0), /^max_sessions: must be at least 1, got 0$/, 'max_sessions');
      refused(() => setConfigValue(file, configKey('max_parallel_agents'), 2.5), /max_parallel_agents: expected a whole number/);
      refused(() => setConfigValue(file, configKey('agent_timeout_seconds'), 0), /greater than 0/);
      refused(() => setConfigValue(file, configKey('concurrency_mode'), 'both'), /"exclusive", "concurrent"/);
      refused(() => setConfigValue(file, configKey('agent_args'), { nope: [] }), /"nope" is not an agent preset/);
      refused(() => setConfigValue(file, configKey('agent_args'), ['x']), /agent_args: expected record/);
      refused(() => setConfigValue(file, configKey('agent'), 'claude'), /agent_command is set too.*--unset agent_command/);
      refused(() => readConfigValue(configKey('agent_args'), '{oops'), /expected JSON, e\.g\. \{"claude": \["--model", "sonnet"\]\}/);
      // The example has the key's own shape: a list for a list.
      refused(() => readConfigValue(configKey('protected_paths'), 'tests'), /protected_paths: expected JSON, e\.g\. \["tests\/", /);
      refused(() => readConfigValue(configKey('agent'), ' '), /--unset agent/);
      assert.equal(JSON.stringify(file), before);
    });
  });
});
