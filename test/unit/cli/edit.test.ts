// launchpad edit / remove / config: a person's changes without editing JSON by hand. Each is one
// transaction under the state lock and one log line; a refused change writes nothing.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { assertUnchanged, cli, progressEntries, rawTask, readTasks, snapshot, stateRoot, taskById, TASKS } from './util';

const blockedBy = (by: string) => [`[DEPENDENCY] Blocked by failed ${by}`];

function harness(): string {
  return stateRoot({
    version: 3,
    session_count: 2,
    tasks: [
      rawTask('task-001', { status: 'failed', attempts: 3, max_attempts: 3, error_log: ['[TEST_FAIL] boom'] }),
      rawTask('task-002', { depends_on: ['task-001'], status: 'failed', error_log: blockedBy('task-001') }),
      rawTask('task-003', { depends_on: ['task-002'], context: 'old context', validation: { command: 'npm test', timeout_seconds: 30 } }),
      rawTask('task-004', { status: 'in_progress', attempts: 1 }),
      rawTask('task-005', { status: 'completed', attempts: 1 }),
    ],
  });
}

/** A refused command: exit 2, the message, and not a byte changed. */
function refused(dir: string, args: string[], message: RegExp): void {
  const before = snapshot(dir);
  const r = cli(args, { cwd: dir }, 2);
  assert.match(r.stderr, message);
  assert.equal(r.stdout, '');
  for (const file of [TASKS, 'harness-progress.txt'])
    assert.equal(snapshot(dir).get(file), before.get(file), `${args.join(' ')} changed ${file}`);
  assert.ok(!existsSync(join(dir, `${TASKS}.tmp`)));
}

describe('launchpad edit', () => {
  it('changes the fields given, prints each change, logs one line, leaves the rest', () => {
    const dir = harness();
    const lines = progressEntries(dir).length;
    const r = cli(
      [
        'edit',
        'task-003',
        '--title',
        'Renamed',
        '--priority',
        'P0',
        '--files',
        'src/a/,src/b.ts',
        '--context',
        '',
        '--timeout',
        '',
        '--max-attempts',
        '5',
      ],
      { cwd: dir },
    );
    assert.equal(
      r.stdout,
      [
        'task-003: title "title of task-003" -> "Renamed"',
        'task-003: context "old context" -> (none)',
        'task-003: priority "P1" -> "P0"',
        'task-003: files_hint [] -> [src/a/, src/b.ts]',
        'task-003: validation.timeout_seconds 30 -> (none)',
        'task-003: max_attempts 3 -> 5',
        '',
      ].join('\n'),
    );
    const t = taskById(dir, 'task-003');
    assert.deepEqual([t.title, t.priority, t.context, t.max_attempts, t.depends_on], ['Renamed', 'P0', null, 5, ['task-002']]);
    assert.deepEqual(t.files_hint, ['src/a/', 'src/b.ts']);
    assert.deepEqual(t.validation, { command: 'npm test', timeout_seconds: null });
    const entries = progressEntries(dir);
    assert.equal(entries.length, lines + 1);
    const e = entries.at(-1)!;
    assert.deepEqual([e.type, e.taskId, e.session], ['INIT', 'task-003', 2]);
    assert.match(
      e.message,
      /^task edited: title="Renamed" \(was "title of task-003"\) .*priority="P0" \(was "P1"\).*max_attempts=5 \(was 3\)$/,
    );
  });

  it('a failed task is told how to run again; clearing --validate warns; the same values change nothing and log nothing', () => {
    const dir = harness();
    let r = cli(['edit', 'task-001', '--validate', ''], { cwd: dir });
    assert.equal(r.stdout, 'task-001: validation.command "true" -> (none)\n');
    assert.match(r.stderr, /task-001 has failed; to run it again: node .*cli\.js retry task-001/);
    assert.match(r.stderr, /no validation command now/);
    const before = snapshot(dir);
    r = cli(['edit', 'task-003', '--priority', 'P1', '--depends-on', 'task-002'], { cwd: dir });
    assert.equal(r.stdout, 'task-003: nothing changed (the values given are the ones it has)\n');
    assertUnchanged(before, dir, 'an edit to the same values');
  });

  it('--depends-on "" removes every dependency; new ones are checked as add checks them', () => {
    const dir = harness();
    cli(['edit', 'task-003', '--depends-on', ''], { cwd: dir });
    assert.deepEqual(taskById(dir, 'task-003').depends_on, []);
    cli(['edit', 'task-003', '--depends-on', 'task-005, task-001'], { cwd: dir });
    assert.deepEqual(taskById(dir, 'task-003').depends_on, ['task-005', 'task-001']);
  });

  it('--protect sets protected_paths, --protect "" removes them', () => {
    const dir = harness();
    const r = cli(['edit', 'task-003', '--protect', 'tests/, spec/a.py'], { cwd: dir });
    assert.equal(r.stdout, 'task-003: protected_paths [] -> [tests/, spec/a.py]\n');
    assert.deepEqual(taskById(dir, 'task-003').protected_paths, ['tests/', 'spec/a.py']);
    cli(['edit', 'task-003', '--protect', ''], { cwd: dir });
    assert.equal(taskById(dir, 'task-003').protected_paths, undefined);
  });

  const bad: Array<[string, string[], RegExp]> = [
    [
      'a protected path outside the state root',
      ['edit', 'task-003', '--protect', '../x'],
      /protected_paths\[0\]: a path relative to the state root, without "\.\."/,
    ],
    ['a task in progress', ['edit', 'task-004', '--title', 'x'], /task "task-004" is in progress/],
    ['an unknown task', ['edit', 'task-404', '--title', 'x'], /no task "task-404" in harness-tasks\.json/],
    [
      'a cycle',
      ['edit', 'task-001', '--depends-on', 'task-003'],
      /--depends-on: would make a cycle: task-001 -> task-003 -> task-002 -> task-001/,
    ],
    ['itself', ['edit', 'task-003', '--depends-on', 'task-003'], /cannot depend on itself/],
    ['an empty title', ['edit', 'task-003', '--title', ' '], /title: must not be empty/],
    ['a bad priority', ['edit', 'task-003', '--priority', 'high'], /--priority: expected P0, P1 or P2, got "high"/],
    ['a bad timeout', ['edit', 'task-003', '--timeout', '0'], /--timeout: expected a number greater than 0/],
    ['nothing to change', ['edit', 'task-003'], /edit: nothing to change; give one or more of --title, --context/],
    ['no id', ['edit', '--title', 'x'], /edit: expected 1 argument, got 0/],
  ];
  for (const [what, args, message] of bad) {
    it(`refuses ${what}: exit 2, nothing written`, () => refused(harness(), args, message));
  }
});

describe('launchpad remove', () => {
  it('removes a task nothing depends on; one log line; its history stays in the log', () => {
    const dir = harness();
    const r = cli(['remove', 'task-005'], { cwd: dir });
    assert.equal(r.stdout, 'task-005: removed ("title of task-005")\n');
    assert.deepEqual(
      readTasks(dir).tasks.map((t) => t.id),
      ['task-001', 'task-002', 'task-003', 'task-004'],
    );
    const e = progressEntries(dir).at(-1)!;
    assert.deepEqual([e.type, e.taskId, e.message], ['INIT', 'task-005', 'task removed: "title of task-005"']);
    // The removed task's lines are its history: log --task still prints them.
    assert.match(cli(['log', '--task', 'task-005'], { cwd: dir }).stdout, /task removed/);
  });

  it('refuses while others depend on it; --force takes it out of their depends_on, unblocks them, and says so', () => {
    const dir = harness();
    refused(
      dir,
      ['remove', 'task-001'],
      /task-002 depends on "task-001": remove or edit it first, or use --force to take "task-001" out of its depends_on/,
    );
    const r = cli(['remove', 'task-001', '--force'], { cwd: dir });
    assert.equal(
      r.stdout,
      'task-001: removed ("title of task-001")\ntask-002: no longer depends on task-001; pending again (was blocked by it)\n',
    );
    const t2 = taskById(dir, 'task-002');
    assert.deepEqual([t2.status, t2.depends_on], ['pending', []]);
    assert.match(
      progressEntries(dir).at(-1)!.message,
      /^task removed: "title of task-001"; removed from depends_on of task-002; unblocked task-002$/,
    );
    const status = JSON.parse(cli(['status', '--json'], { cwd: dir }).stdout) as { tasks: Array<{ id: string; state: string }> };
    assert.equal(status.tasks.find((t) => t.id === 'task-002')!.state, 'ready');
  });

  it('refuses a task in progress and an unknown id', () => {
    refused(harness(), ['remove', 'task-004', '--force'], /task "task-004" is in progress/);
    refused(harness(), ['remove', 'nope'], /no task "nope"/);
  });
});

describe('launchpad config', () => {
  it('lists every key with its value, default or not, and what it does', () => {
    const dir = harness();
    const out = cli(['config'], { cwd: dir }).stdout;
    assert.match(out, /^max_tasks_per_session +20 \(default\)\n +Dispatches one run makes/m);
    assert.match(out, /^agent +\(not set\)$/m);
    assert.match(out, /^concurrency_mode .*\n.*exclusive \| concurrent$/m);
    const json = JSON.parse(cli(['config', '--json'], { cwd: dir }).stdout) as Record<string, unknown>;
    assert.equal(json.max_sessions, 50);
    assert.equal(json.agent, null);
  });

  it('sets a value checked by the schema, reads it back, logs one line, and --unset restores the default', () => {
    const dir = harness();
    assert.equal(cli(['config', 'max_tasks_per_session', '40'], { cwd: dir }).stdout, 'max_tasks_per_session: 20 -> 40\n');
    assert.equal(cli(['config', 'max_tasks_per_session'], { cwd: dir }).stdout, '40\n');
    assert.equal((readTasks(dir).session_config as Record<string, unknown>).max_tasks_per_session, 40);
    let e = progressEntries(dir).at(-1)!;
    assert.deepEqual([e.type, e.message], ['INIT', 'session_config.max_tasks_per_session=40 (was 20)']);
    cli(['config', 'agent_args', '{"claude": ["--model", "sonnet"]}'], { cwd: dir });
    assert.equal(cli(['config', 'agent_args'], { cwd: dir }).stdout, '{"claude":["--model","sonnet"]}\n');
    assert.equal(cli(['config', '--unset', 'max_tasks_per_session'], { cwd: dir }).stdout, 'max_tasks_per_session: 40 -> 20 (default)\n');
    e = progressEntries(dir).at(-1)!;
    assert.equal(e.message, 'session_config.max_tasks_per_session unset (was 40, now the default 20)');
    cli(['config', 'agent', 'claude'], { cwd: dir });
    assert.equal(cli(['config', '--unset', 'agent'], { cwd: dir }).stdout, 'agent: "claude" -> (not set)\n');
    assert.equal(cli(['config', 'agent'], { cwd: dir }).stdout, '');
  });

  const bad: Array<[string[], RegExp]> = [
    [['config', 'max_sessions', '0'], /max_sessions: must be at least 1, got 0/],
    [['config', 'max_sessions', 'many'], /max_sessions: expected a whole number, got "many"/],
    [['config', 'max_parallel_agents', '1.5'], /max_parallel_agents: expected a whole number/],
    [['config', 'concurrency_mode', 'both'], /concurrency_mode: expected one of "exclusive", "concurrent"/],
    [['config', 'agent_args', '{"claud": []}'], /"claud" is not an agent preset/],
    [['config', 'max_session', '3'], /unknown key "max_session"; keys: /],
    [['config', '--unset', 'max_session'], /unknown key "max_session"/],
  ];
  for (const [args, message] of bad) {
    it(`${args.join(' ')}: exit 2 naming the key, nothing written`, () => refused(harness(), args, message));
  }

  it('agent and agent_command are one setting: setting the second while the first is set is refused with the way out', () => {
    const dir = harness();
    cli(['config', 'agent_command', './my-agent.sh'], { cwd: dir });
    refused(dir, ['config', 'agent', 'claude'], /agent_command is set too.*config --unset agent_command/);
  });
});
