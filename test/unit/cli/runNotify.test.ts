// `launchpad run --notify CMD` and the terminal bell, end to end: the command runs when a task has
// used all its attempts, when an agent asks a question and when the run ends, with the facts in
// its environment; its failure is a warning; its time limit ends it. The bell rings on a terminal
// (a real pseudo-terminal, through util-linux `script`) at the end and at a question, unless
// --no-bell or session_config.bell is false, never into a pipe.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { runNotifyCommand } from '../../../src/core/runNotices';
import { agentCmd, alive, git, harness, run, show, shq, taskById, tempDir, waitFor } from '../controller/support';
import { CLI } from '../helpers/cli';

const OUTCOME = {
  exitCode: 1,
  reason: 'nothing-runnable',
  message: 'stopped: nothing left',
  session: 4,
  stats: { tasks_total: 2, completed: 1, failed: 1, in_batch: 0, pending: 0, blocked: 0, attempts_total: 2, checkpoints: 0 },
} as const;

function twoTasks(sessionConfig: Record<string, unknown> = {}): string {
  return harness({
    tasks: [{ id: 'task-001' }, { id: 'task-002', title: 'Parse it', validate: 'echo "expected 4, got 5" >&2; exit 1', maxAttempts: 1 }],
    sessionConfig,
  });
}

describe('launchpad run --notify and the bell', function () {
  this.timeout(60_000);

  it('runs the command when a task has used all its attempts, then when the run ends, with the facts in its environment', async () => {
    const out = join(tempDir('launchpad-notify-'), 'events');
    const notify = `printf '%s|%s|%s|%s|%s|%s|%s|%s\\n' "$LAUNCHPAD_EVENT" "$LAUNCHPAD_TASK_ID" "$LAUNCHPAD_ERROR" "$LAUNCHPAD_COMPLETED" "$LAUNCHPAD_FAILED" "$LAUNCHPAD_TOTAL" "$LAUNCHPAD_EXIT_CODE" "$LAUNCHPAD_SUMMARY" >> ${shq(out)}`;
    const root = twoTasks();
    const r = await run(root, agentCmd('writes-done.sh'), ['--notify', notify]);
    assert.equal(r.code, 1, show(r, root));
    assert.equal(taskById(root, 'task-002').status, 'failed');
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    assert.equal(lines.length, 2, lines.join('\n'));
    const error = '[TEST_FAIL] echo "expected 4, got 5" >&2; exit 1 exited with 1: expected 4, got 5';
    const [event, id, lastError, , failed, total, exitCode, summary] = lines[0]!.split('|');
    // (task-001 may or may not be completed yet when task-002 fails: they run side by side.)
    assert.deepEqual([event, id, lastError, failed, total, exitCode], ['attempts-exhausted', 'task-002', error, '1', '2', '']);
    assert.equal(summary, `"Parse it" failed its only attempt (task-002): ${error}`);
    assert.equal(lines[1], 'run-ended|||1|1|2|1|stopped: nothing left that can run (1/2 completed · 1 failed)');
    // Nothing on stderr but the first run's notes of the files it created.
    assert.equal(r.stderr.replace(/^note: created .*\n/gm, ''), '');
  });

  it("an agent's question: the command runs with LAUNCHPAD_EVENT=question, and on a terminal the bell rings as it is asked", () => {
    const out = join(tempDir('launchpad-notify-'), 'events');
    const notify = `printf '%s|%s|%s|%s\\n' "$LAUNCHPAD_EVENT" "$LAUNCHPAD_TASK_ID" "$LAUNCHPAD_QUESTION" "$LAUNCHPAD_SUMMARY" >> ${shq(out)}`;
    const root = harness({ tasks: [{ id: 'task-001', title: 'Serve it' }] });
    const cmd = [process.execPath, CLI, 'run', '--agent', agentCmd('asks-question.sh'), '--notify', notify].map(shq).join(' ');
    const r = spawnSync('script', ['-qec', cmd, '/dev/null'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 50_000,
    });
    assert.equal(r.status, 8, r.stdout + r.stderr);
    // The QUESTION line, the command that answers it, then the bell, before the run's end (and its own bell).
    const asked = r.stdout.indexOf('answer task-001 "…"');
    const bell = r.stdout.indexOf('\x07', asked);
    assert.ok(asked > 0 && bell > asked && bell < r.stdout.indexOf('STATS'), JSON.stringify(r.stdout));
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    assert.deepEqual(lines, [
      'question|task-001|Which port?|task-001 asks: Which port? ("Serve it")',
      `run-ended|||waiting for people: task-001 asked a question (launchpad answer ID "…") (0/1 completed · 1 awaiting an answer); then run again`,
    ]);
  });

  it('a change awaiting review: the command runs with LAUNCHPAD_EVENT=review and the commit, and the bell rings', () => {
    const out = join(tempDir('launchpad-notify-'), 'events');
    const notify = `printf '%s|%s|%s|%s\\n' "$LAUNCHPAD_EVENT" "$LAUNCHPAD_TASK_ID" "$LAUNCHPAD_REVIEW_COMMIT" "$LAUNCHPAD_SUMMARY" >> ${shq(out)}`;
    const root = harness({ tasks: [{ id: 'task-001', title: 'Serve it', review: 'manual' }] });
    const cmd = [process.execPath, CLI, 'run', '--agent', agentCmd('writes-done.sh'), '--notify', notify].map(shq).join(' ');
    const r = spawnSync('script', ['-qec', cmd, '/dev/null'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 50_000,
    });
    assert.equal(r.status, 8, r.stdout + r.stderr);
    const said = r.stdout.indexOf('review task-001');
    const bell = r.stdout.indexOf('\x07', said);
    assert.ok(said > 0 && bell > said && bell < r.stdout.indexOf('STATS'), JSON.stringify(r.stdout));
    const commit = git(root, 'rev-parse', 'harness-task-001');
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    assert.equal(lines[0], `review|task-001|${commit}|task-001 awaits review (round 1, ${commit.slice(0, 7)}) ("Serve it")`);
    assert.match(lines[1]!, /^run-ended\|\|\|waiting for people: task-001 awaits review/);
  });

  it('a failing command is a warning: the run and its exit code are not affected', async () => {
    const root = twoTasks();
    const r = await run(root, agentCmd('writes-done.sh'), ['--notify', 'echo "no display" >&2; exit 4']);
    assert.equal(r.code, 1, show(r, root));
    assert.match(r.stderr, /^warning: --notify \(attempts-exhausted\) exited with 4: no display$/m);
    assert.match(r.stderr, /^warning: --notify \(run-ended\) exited with 4: no display$/m);
  });

  it('ends a command that outlives its time limit, whole process group, and says so', async () => {
    const pidFile = join(tempDir('launchpad-notify-'), 'pid');
    const warning = await runNotifyCommand(
      `sh -c 'echo $$ > ${pidFile}; exec sleep 60' & wait`,
      tempDir(),
      { event: 'run-ended', outcome: OUTCOME },
      2000,
    );
    assert.equal(warning, '--notify (run-ended) timed out after 2s');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await waitFor(`the notify command's background child (pid ${pid}) to end`, () => !alive(pid), 10_000);
  });

  it('rings the bell on a terminal at the end, unless --no-bell or session_config.bell is false; never into a pipe', () => {
    const onTerminal = (root: string, ...extra: string[]) => {
      const cmd = [process.execPath, CLI, 'run', '--agent', agentCmd('writes-done.sh'), ...extra].map(shq).join(' ');
      const r = spawnSync('script', ['-qec', cmd, '/dev/null'], {
        cwd: root,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 50_000,
      });
      assert.equal(r.status, 0, r.stdout + r.stderr);
      return r.stdout;
    };
    const single = () => harness({ tasks: [{ id: 'task-001' }] });
    // The summary's last line (coloured on a terminal), then the bell.
    assert.match(onTerminal(single()), /all 1 tasks completed(\x1b\[\d+m)?\r?\n\x07$/);
    assert.doesNotMatch(onTerminal(single(), '--no-bell'), /\x07/);
    assert.doesNotMatch(onTerminal(harness({ tasks: [{ id: 'task-001' }], sessionConfig: { bell: false } })), /\x07/);
    const piped = spawnSync(process.execPath, [CLI, 'run', '--agent', agentCmd('writes-done.sh')], { cwd: single(), encoding: 'utf8' });
    assert.doesNotMatch(piped.stdout, /\x07/);
  });
});
