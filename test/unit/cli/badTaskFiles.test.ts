// The bad-input corpus (test/fixtures/bad-task-files/): every malformed task file through both
// `status` and `add`, exit 2 naming the file and the field, the file left byte for byte. Beside it:
// what is NOT a schema error (a cycle, an unknown dependency), the protocols' own examples, unknown
// fields kept on write, and a file over the size limit.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { tempDir } from '../helpers/tmp';
import { assertUnchanged, cli, FIXTURES, PROGRESS, progressEntries, rawTask, readTasks, snapshot, stateRoot, TASKS } from './util';

const CORPUS = join(FIXTURES, 'bad-task-files');

interface Case {
  file: string;
  problem: string;
  /** Strings stderr must contain; the first names the field or the position. */
  expect: string[];
}

const manifest = JSON.parse(readFileSync(join(CORPUS, 'manifest.json'), 'utf8')) as Case[];

function rootWith(fixture: string): string {
  const dir = tempDir('launchpad-bad-');
  copyFileSync(join(CORPUS, fixture), join(dir, TASKS));
  return dir;
}

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** Every key and value of `before` is still in `after` (which may have more: defaults, a new task). */
function assertKept(before: unknown, after: unknown, path = '(root)'): void {
  if (Array.isArray(before)) {
    assert.ok(Array.isArray(after), `${path}: was an array`);
    assert.equal(after.length, before.length, `${path}: length`);
    before.forEach((v, i) => assertKept(v, after[i], `${path}[${i}]`));
  } else if (before !== null && typeof before === 'object') {
    assert.ok(after !== null && typeof after === 'object' && !Array.isArray(after), `${path}: was an object`);
    for (const [k, v] of Object.entries(before)) {
      assert.ok(k in after, `${path}.${k} was dropped`);
      assertKept(v, (after as Record<string, unknown>)[k], `${path}.${k}`);
    }
  } else {
    assert.equal(after, before, path);
  }
}

describe('malformed task files (the bad-input corpus)', () => {
  it('has at least 30 cases, and the manifest and the folder list the same files', () => {
    assert.ok(manifest.length >= 30, `${manifest.length} cases`);
    const files = readdirSync(CORPUS).filter((f) => !f.startsWith('.') && f !== 'manifest.json' && f !== 'README.md');
    assert.deepEqual(files.sort(), manifest.map((c) => c.file).sort());
    for (const c of manifest) {
      assert.ok(c.problem && c.expect.length > 0, c.file);
      assert.ok(readFileSync(join(CORPUS, 'README.md'), 'utf8').includes(`\`${c.file}\``), `${c.file} missing from README.md`);
    }
  });

  for (const c of manifest) {
    describe(`${c.file}: ${c.problem}`, () => {
      it('status: exit 2 naming harness-tasks.json and the field; nothing written', () => {
        const dir = rootWith(c.file);
        const before = snapshot(dir);
        const r = cli(['status'], { cwd: dir }, 2);
        assert.match(r.stderr, /^launchpad: harness-tasks\.json: /);
        for (const e of c.expect) assert.ok(r.stderr.includes(e), `stderr lacks ${JSON.stringify(e)}:\n${r.stderr}`);
        assert.equal(r.stdout, '');
        assertUnchanged(before, dir, 'status');
        // --json: the same error as a JSON object on stdout, naming the file.
        const json = JSON.parse(cli(['status', '--json'], { cwd: dir }, 2).stdout) as {
          error: { code: number; message: string; file: string };
        };
        assert.equal(json.error.code, 2);
        assert.equal(json.error.file, 'harness-tasks.json');
        assert.equal(`launchpad: ${json.error.message}\n`, r.stderr);
      });

      it('add: exit 2 naming harness-tasks.json and the field; the file byte for byte, no .bak/.tmp, no log line', () => {
        const dir = rootWith(c.file);
        const original = readFileSync(join(dir, TASKS));
        const r = cli(['add', 'x', '--validate', 'true'], { cwd: dir }, 2);
        assert.match(r.stderr, /^launchpad: harness-tasks\.json: /);
        for (const e of c.expect) assert.ok(r.stderr.includes(e), `stderr lacks ${JSON.stringify(e)}:\n${r.stderr}`);
        assert.equal(r.stdout, '');
        assert.ok(readFileSync(join(dir, TASKS)).equals(original), 'harness-tasks.json changed');
        for (const left of [`${TASKS}.bak`, `${TASKS}.tmp`, PROGRESS, '.launchpad/state.lock']) {
          assert.ok(!existsSync(join(dir, left)), `${left} left behind`);
        }
      });
    });
  }

  it('a broken file beside a valid .bak: status points at the backup, add touches neither file', () => {
    const dir = rootWith('invalid-json-trailing-comma-in-array.json');
    writeFileSync(join(dir, `${TASKS}.bak`), JSON.stringify({ version: 3, tasks: [rawTask('task-001')] }));
    const before = snapshot(dir);
    const s = cli(['status'], { cwd: dir }, 2);
    assert.match(s.stderr, /harness-tasks\.json\.bak is valid/);
    assert.match(s.stderr, /harness-tasks\.json: invalid JSON at line 5, column 3/);
    cli(['add', 'x'], { cwd: dir }, 2);
    cli(['retry', 'task-001'], { cwd: dir }, 2);
    for (const f of [TASKS, `${TASKS}.bak`]) assert.equal(snapshot(dir).get(f), before.get(f), f);
  });

  describe('a file over the 32 MiB limit (generated here, not committed)', () => {
    it('33 MiB of valid JSON: refused with its size, by status and add, left as it was', function () {
      this.timeout(60_000);
      const dir = tempDir('launchpad-huge-');
      const file = join(dir, TASKS);
      const head = JSON.stringify({ version: 3, tasks: [rawTask('task-001')] }).slice(0, -1);
      writeFileSync(file, head + ' '.repeat(33 * 1024 * 1024) + '}\n');
      const size = statSync(file).size;
      const hash = sha256(file);
      for (const args of [['status'], ['add', 'x']]) {
        const r = cli(args, { cwd: dir }, 2);
        assert.match(r.stderr, /^launchpad: harness-tasks\.json: file is 33\.0 MiB, over the 32 MiB limit$/m);
      }
      assert.equal(statSync(file).size, size);
      assert.equal(sha256(file), hash);
      assert.ok(!existsSync(`${file}.bak`) && !existsSync(`${file}.tmp`));
    });

    it('a 3 GiB (sparse) file is refused from its size without being read', () => {
      const dir = tempDir('launchpad-huge-');
      const file = join(dir, TASKS);
      writeFileSync(file, '');
      truncateSync(file, 3 * 1024 ** 3);
      for (const args of [['status'], ['add', 'x'], ['retry', 'task-001']]) {
        const r = cli(args, { cwd: dir }, 2);
        assert.match(r.stderr, /harness-tasks\.json: file is 3072\.0 MiB, over the 32 MiB limit/);
        assert.doesNotMatch(r.stderr, /internal error/);
      }
      assert.equal(statSync(file).size, 3 * 1024 ** 3);
      assert.ok(!existsSync(`${file}.bak`));
    });
  });

  describe('not schema errors', () => {
    it('a cycle and an unknown dependency load: status exits 0 and shows them blocked with the reason', () => {
      const file = {
        version: 3,
        tasks: [
          rawTask('a', { depends_on: ['b'] }),
          rawTask('b', { depends_on: ['a'] }),
          rawTask('c', { depends_on: ['x'] }),
          rawTask('d', { depends_on: ['c'] }),
        ],
      };
      const dir = stateRoot(file);
      const text = readFileSync(join(dir, TASKS), 'utf8');
      const out = cli(['status'], { cwd: dir }).stdout;
      assert.match(out, /^\[blocked\] a: .*\[DEPENDENCY\] Circular dependency detected: a -> b -> a$/m);
      assert.match(out, /^\[blocked\] b: .*\[DEPENDENCY\] Circular dependency detected: b -> a -> b$/m);
      assert.match(out, /^\[blocked\] c: .*\[DEPENDENCY\] Unknown dependency x$/m);
      assert.match(out, /^\[blocked\] d: .*\[DEPENDENCY\] Blocked by failed c$/m);
      assert.equal(readFileSync(join(dir, TASKS), 'utf8'), text, 'status marked something');
      // And add works on it (depending on a blocked task is allowed).
      assert.equal(cli(['add', 'e', '--depends-on', 'a'], { cwd: dir }).stdout, 'task-001\n');
    });

    it('depends_on ids with shell characters are unknown dependencies, not schema errors', () => {
      const dir = stateRoot({ version: 3, tasks: [rawTask('a', { depends_on: ['$(rm -rf ~)'] })] });
      assert.match(cli(['status'], { cwd: dir }).stdout, /^\[blocked\] a: .*\[DEPENDENCY\] Unknown dependency \$\(rm -rf ~\)$/m);
    });

    it('ids at the edge of the rules load: 64 characters, dots, underscores, a leading digit', () => {
      const ids = ['t'.repeat(64), 'v1.2_fix-3', '0', 'a.b.c', 'A_Z'];
      const dir = stateRoot({ version: 3, tasks: ids.map((id) => rawTask(id)) });
      const s = JSON.parse(cli(['status', '--json'], { cwd: dir }).stdout) as { tasks: Array<{ id: string }> };
      assert.deepEqual(
        s.tasks.map((t) => t.id),
        ids,
      );
    });
  });

  describe("the protocols' example task files (test/fixtures/example-*.harness-tasks.json)", () => {
    const examples: Array<[string, number, string]> = [
      ['example-v3.harness-tasks.json', 3, '2025-07-01T10:12:03Z'],
      ['example-v2.harness-tasks.json', 2, '2025-07-01T10:20:02Z'],
    ];
    for (const [name, version, last] of examples) {
      it(`${name} (version ${version}) loads: status shows its three tasks`, () => {
        const dir = tempDir();
        copyFileSync(join(FIXTURES, name), join(dir, TASKS));
        const s = JSON.parse(cli(['status', '--json'], { cwd: dir }).stdout) as Record<string, unknown> & {
          tasks: Array<{ id: string; status: string; state: string; attempts: number; max_attempts: number }>;
        };
        assert.deepEqual(
          s.tasks.map((t) => [t.id, t.status, t.state, t.attempts, t.max_attempts]),
          [
            ['task-001', 'completed', 'completed', 1, 3],
            ['task-002', 'failed', 'retryable', 1, 3],
            ['task-003', 'pending', 'ready', 0, 3],
          ],
        );
        assert.deepEqual(
          [s.tasks_total, s.completed, s.retrying, s.failed, s.pending, s.blocked, s.session_count, s.last_session],
          [3, 1, 1, 0, 1, 0, 1, last],
        );
      });

      it(`${name}: add keeps the version and every field it had`, () => {
        const dir = tempDir();
        copyFileSync(join(FIXTURES, name), join(dir, TASKS));
        const before = JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as { tasks: unknown[] };
        assert.equal(cli(['add', 'Add audit logging', '--depends-on', 'task-003'], { cwd: dir }).stdout, 'task-004\n');
        const after = readTasks(dir);
        assert.equal(after.version, version);
        assertKept({ ...before, tasks: undefined }, { ...after, tasks: undefined });
        assertKept(before.tasks, after.tasks.slice(0, 3), 'tasks');
        assert.equal(after.tasks.length, 4);
        assert.ok(readFileSync(join(dir, `${TASKS}.bak`)).equals(readFileSync(join(FIXTURES, name))), '.bak is not the original');
        cli(['retry', 'task-002'], { cwd: dir });
        assertKept(before.tasks[0], readTasks(dir).tasks[0], 'tasks[0] after retry');
      });
    }
  });

  it('unknown fields (top level, session_config, a task, validation, deeper) survive add and retry untouched', () => {
    const extra = { nested: [1, 'two', { three: [null, true, 3.5] }], empty: {}, none: null };
    const file = {
      version: 3,
      x_owner: 'team-a',
      x_extra: extra,
      session_config: { max_parallel_agents: 2, x_cfg: { gpu: true }, x_list: [1, 2] },
      tasks: [
        rawTask('task-001', {
          status: 'failed',
          attempts: 3,
          error_log: ['[TEST_FAIL] x'],
          x_task: 'keep me',
          x_deep: extra,
          validation: { command: 'npm test', timeout_seconds: 30, x_val: ['--ci'], x_env: { CI: '1' } },
          on_failure: { cleanup: null, x_hook: 'notify' },
          checkpoints: [{ step: 1, total: 2, description: 'half', timestamp: '2025-07-01T10:05:00Z', x_cp: 7 }],
        }),
      ],
      x_tail: 'last',
    };
    const dir = stateRoot(file);
    cli(['add', 'second'], { cwd: dir });
    cli(['retry', 'task-001'], { cwd: dir });
    const after = readTasks(dir);
    const { tasks: beforeTasks, ...beforeTop } = file;
    const t = after.tasks[0]!;
    assertKept(beforeTop, after);
    // retry changed status/attempts on purpose; everything else of the task is as written.
    const { status: _s, attempts: _a, ...rest } = beforeTasks[0]!;
    assertKept(rest, t, 'tasks[0]');
    assert.equal(t.status, 'pending');
    assert.equal(after.tasks.length, 2);
    assert.equal(progressEntries(dir).length, 2);
  });
});
