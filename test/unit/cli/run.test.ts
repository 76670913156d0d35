// launchpad run as a person meets it: the summary at the end (each failure with its reason, its
// output file and the command that retries it, which works as printed), the limits it stops
// on and the command that lifts them, sessions counted only when they dispatch, -v and --json.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

import { git } from '../helpers/gitRepo';
import { agent, makeHarness, readLog, readTasks, runHarness, taskById } from '../helpers/harness';
import { cli } from './util';

/** A command line exactly as the CLI printed it, run by a shell in `cwd`. */
function paste(line: string, cwd: string): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync('sh', ['-c', line], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, HARNESS_STATE_ROOT: '', LAUNCHPAD_AGENT: '' },
    timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const show = (r: { stdout: string; stderr: string }) => `stdout:\n${r.stdout}\nstderr:\n${r.stderr}`;

describe('launchpad run: the person at the keyboard', function () {
  this.timeout(180_000);
  const writesDone = agent('writes-done.sh');

  it('ends with a summary: the failure, its reason line (not the npm footer), its output file, a retry command that works as printed; what it blocks', () => {
    const root = makeHarness({
      files: { 'README.md': '# p\n', 'package.json': '{ "name": "p", "version": "1.0.0", "scripts": {} }\n' },
      tasks: [
        { id: 'task-001' },
        { id: 'task-002', validate: 'npm run lint', maxAttempts: 1 },
        { id: 'task-003', dependsOn: ['task-002'] },
        { id: 'task-004', dependsOn: ['task-003'] },
      ],
    });
    const r = runHarness(root, writesDone);
    assert.equal(r.code, 1, show(r));
    const summary = r.stdout.slice(r.stdout.indexOf('\nSummary: '));
    assert.match(summary, /^\nSummary: 1\/4 completed · 1 failed · 2 blocked {2}\(session 1, \d+:\d\d\)\n/);
    assert.match(
      summary,
      /\n {2}failed {3}task-002 {2}Task task-002 {2}\(attempts 1\/1\)\n {11}\[TEST_FAIL\] npm run lint exited with 1: npm (error|ERR!) Missing script: "lint"\n/,
    );
    const output = /\n {11}output: (.*)\n/.exec(summary)![1]!;
    assert.equal(output, join(root, '.launchpad/runs/task-002/attempt-1/validation.log'));
    assert.ok(existsSync(output));
    assert.match(summary, /\n {2}blocked {2}task-003 {2}Task task-003 {2}\(Blocked by failed task-002; retrying task-002 unblocks it\)\n/);
    // Down a chain, the retry named is the task that failed on its own.
    assert.match(summary, /\n {2}blocked {2}task-004 {2}Task task-004 {2}\(Blocked by failed task-003; retrying task-002 unblocks it\)\n/);
    assert.match(summary, /\nstopped: nothing left that can run/);

    const retry = /\n {11}retry: {2}(.*)\n/.exec(summary)![1]!;
    assert.match(retry, /^node \S+cli\.js retry task-002$/);
    const pasted = paste(retry, root);
    assert.equal(pasted.code, 0, show(pasted));
    assert.equal(taskById(root, 'task-002').status, 'pending');
    assert.equal(taskById(root, 'task-003').status, 'pending');
  });

  it('stops on max_tasks_per_session saying what to do; the --max-tasks command it prints finishes the work', () => {
    const root = makeHarness({
      tasks: [{ id: 'task-001' }, { id: 'task-002' }, { id: 'task-003' }],
      sessionConfig: { max_tasks_per_session: 1, max_parallel_agents: 1 },
    });
    const r = runHarness(root, writesDone);
    assert.equal(r.code, 1, show(r));
    assert.match(
      r.stdout,
      /\nnext: 2 task\(s\) still to run; this run stopped after 1 dispatches \(max_tasks_per_session\)\. Continue: node \S+ run --agent \S+\n/,
    );
    const more = /\nnext: or allow more dispatches per run: (.*?) {3}\(for good: (.*)\)\n/.exec(r.stdout)!;
    assert.match(more[1]!, / run --agent \S+ --max-tasks 2$/);
    assert.match(more[2]!, / config max_tasks_per_session 2$/);
    const pasted = paste(more[1]!, root);
    assert.equal(pasted.code, 0, show(pasted));
    assert.match(pasted.stdout, /all 3 tasks completed\n$/);
  });

  it('only runs that dispatch count toward max_sessions; the others log under the next number without taking it', () => {
    const root = makeHarness({ tasks: [{ id: 'task-001' }, { id: 'task-002', validate: null }], sessionConfig: { max_sessions: 2 } });
    assert.equal(runHarness(root, writesDone).code, 1);
    assert.equal(readTasks(root).session_count, 1);
    const stamp = readTasks(root).last_session;
    for (let i = 0; i < 3; i++)
      assert.equal(runHarness(root, writesDone).code, 1, 'nothing to dispatch: task-002 has no validation command');
    assert.equal(readTasks(root).session_count, 1, 'three runs that dispatched nothing are not sessions');
    assert.equal(readTasks(root).last_session, stamp);
    const sessions = readLog(root)
      .map((l) => /\[SESSION-(\d+)\]/.exec(l)?.[1])
      .filter(Boolean);
    assert.deepEqual([...new Set(sessions)], ['1', '2']);

    cli(['edit', 'task-002', '--validate', 'test -f src/task-002/done.txt'], { cwd: root });
    assert.equal(runHarness(root, writesDone).code, 0);
    assert.equal(readTasks(root).session_count, 2, 'the run that dispatched took number 2');
  });

  it('max_sessions reached: refused without counting, with the commands that lift it; --max-sessions lifts it for one run', () => {
    const root = makeHarness({ tasks: [{ id: 'task-001' }], sessionConfig: { max_sessions: 1 } });
    const first = runHarness(root, writesDone);
    assert.equal(first.code, 0, show(first));
    cli(['add', 'more', '--validate', 'test -f src/task-002/done.txt', '--files', 'src/task-002/'], { cwd: root });
    const refused = runHarness(root, writesDone);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stdout,
      /\nnext: 1 of 1 sessions used \(max_sessions; only runs that dispatch count\): node \S+ config max_sessions 11 {3}\(or once: node \S+ run --agent \S+ --max-sessions 11\)\n/,
    );
    assert.equal(readTasks(root).session_count, 1);
    const once = runHarness(root, writesDone, ['--max-sessions', '2']);
    assert.equal(once.code, 0, show(once));
    assert.equal(readTasks(root).session_count, 2);
    assert.equal(readTasks(root).session_config.max_sessions, 1, 'the flag is for one run');
  });

  it('--agent-timeout applies to this run only', () => {
    const root = makeHarness({ tasks: [{ id: 'task-001', maxAttempts: 1 }] });
    const r = runHarness(root, agent('hangs.sh'), ['--agent-timeout', '1'], { PID_DIR: root });
    assert.equal(r.code, 1, show(r));
    assert.deepEqual(taskById(root, 'task-001').error_log, ['[TIMEOUT] Agent timed out after 1s']);
    assert.equal(readTasks(root).session_config.agent_timeout_seconds, 3600);
  });

  it('a preset whose program is not installed is refused before anything changes; no agent at all is told how to set one', () => {
    const root = makeHarness({ tasks: [{ id: 'task-001' }] });
    const before = readLog(root).length;
    const missing = cli(['run', '--agent', 'claude'], { cwd: root, env: { PATH: dirname(process.execPath) } }, 2);
    assert.match(
      missing.stderr,
      /--agent: the claude preset runs "claude", which is not on PATH; install Claude Code, or choose another agent/,
    );
    assert.equal(readLog(root).length, before);
    assert.equal(taskById(root, 'task-001').attempts, 0);

    // A mistyped program: refused before the lock, the session or a worktree, with the preset it resembles.
    const typo = cli(['run', '--agent', 'claud --verbose'], { cwd: root }, 2);
    assert.match(typo.stderr, /--agent: "claud" is not an agent preset, and no program of that name is on PATH; did you mean "claude"\?/);
    assert.equal(readLog(root).length, before);
    assert.equal(git(root, 'branch', '--list', 'harness-*'), '');

    const none = cli(['run'], { cwd: root }, 2);
    assert.match(
      none.stdout,
      /\nnext: no agent is set: node \S+ run --agent claude {3}\(node \S+ agents lists the presets; for good: node \S+ config agent claude\)\n/,
    );
  });

  it('leaves no empty <repo>.launchpad-worktrees folder beside the repository', () => {
    const root = makeHarness({ tasks: [{ id: 'task-001' }] });
    assert.equal(runHarness(root, writesDone).code, 0);
    assert.ok(!readdirSync(dirname(root)).includes(`${basename(root)}.launchpad-worktrees`));
  });

  it('the first run names the files it adds to the repository; the next one does not', () => {
    const root = makeHarness({ tasks: [{ id: 'task-001' }, { id: 'task-002' }] });
    assert.ok(!existsSync(join(root, '.agent-os')) && !existsSync(join(root, 'harness-tasks.json.bak')));
    const first = runHarness(root, writesDone, ['--max-tasks', '1']);
    assert.deepEqual(
      first.stderr.split('\n').filter((l) => l.startsWith('note: created')),
      [
        "note: created .agent-os/: the journal of this project's sessions (docs/journal.md); commit it or add it to .gitignore",
        'note: created harness-tasks.json.bak: the task file as it was before each write, kept by Launchpad to restore from',
      ],
    );
    const second = runHarness(root, writesDone);
    assert.equal(second.code, 0, show(second));
    assert.doesNotMatch(second.stderr, /note: created/);
  });

  it('-v: each output line once, prefixed by its task, without carriage returns or empty lines', () => {
    const root = makeHarness({ tasks: [{ id: 'task-001' }, { id: 'task-002' }] });
    const r = runHarness(root, agent('checkpoints.sh'), ['-v']);
    assert.ok(!r.stdout.includes('\r'), JSON.stringify(r.stdout));
    const prefixed = r.stdout.split('\n').filter((l) => /^ {2}task-00\d \|/.test(l));
    assert.ok(prefixed.length >= 4, r.stdout);
    for (const l of prefixed) assert.match(l, /^ {2}task-00\d \| \S/, `an empty or broken line: ${JSON.stringify(l)}`);
    assert.ok(
      prefixed.some((l) => / \| \$ test -f src\/task-00\d\/done\.txt$/.test(l)),
      'the validation command is shown',
    );
  });

  it('--json: the outcome, a summary with the counts status shows, the status with its recent log', () => {
    const root = makeHarness({ tasks: [{ id: 'task-001' }, { id: 'task-002', validate: 'false', maxAttempts: 1 }] });
    const r = runHarness(root, writesDone, ['--json']);
    const out = JSON.parse(r.stdout) as {
      exit_code: number;
      summary: { counts: Record<string, number>; failed: Array<{ id: string; error: string; retry: string | null }> };
      status: Record<string, unknown> & { recent_log: string[] };
    };
    assert.equal(out.exit_code, 1);
    assert.equal(out.summary.counts.completed, 1);
    // One source for every count: the summary's are the ones status gives for the same file.
    assert.deepEqual(out.summary.counts, Object.fromEntries(Object.keys(out.summary.counts).map((k) => [k, out.status[k]])));
    assert.deepEqual(
      out.summary.failed.map((f) => f.id),
      ['task-002'],
    );
    assert.match(out.summary.failed[0]!.retry!, /retry task-002$/);
    assert.equal(out.status.recent_log.length, 5);
    assert.match(out.status.recent_log.at(-1)!, /LOCK released$/);
  });
});
