// A person's stop: SIGINT or SIGTERM to a running `launchpad run` ends the agents and
// everything they started, leaves their tasks in_progress with their worktrees, logs STATS with
// a non-zero in_batch, releases the lock, exits 1; the next run recovers and completes them.
// A stop charges no attempt: an agent it interrupted gets its attempt back, and the next run
// resumes it (that resume is the attempt counted); nothing of it is logged as an ERROR.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import {
  agentCmd,
  assertAllGone,
  assertOrder,
  extraWorktrees,
  harness,
  harnessBranches,
  linesOf,
  logLines,
  merges,
  pidsOf,
  read,
  run,
  show,
  shq,
  startRun,
  stats,
  taskById,
  tempDir,
  waitFor,
  waitForLog,
} from './support';

async function stopWith(signal: NodeJS.Signals, ids: string[]) {
  const pids = tempDir();
  const root = harness({ tasks: ids.map((id) => ({ id })) });
  const started = startRun(root, agentCmd('commits-then-hangs.sh'), [], { PID_DIR: pids });
  await waitForLog(root, new RegExp(`DISPATCH \\[${ids.at(-1)}\\]`));
  // Each agent has committed its work and started its child and grandchild.
  const all = (await Promise.all(ids.map((id) => pidsOf(pids, id)))).flat();
  started.child.kill(signal);
  const r = await started.done;
  return { root, r, all };
}

function assertStopped(root: string, r: { code: number | null; stdout: string; stderr: string }, ids: string[], attempts = 1): void {
  assert.equal(r.code, 1, show(r as never, root));
  assert.match(r.stdout, /stopped by request/);
  // The summary names them as status will: interrupted, resumed by the next run.
  assert.match(r.stdout, new RegExp(`completed · ${ids.length} interrupted`));
  assert.match(r.stdout, new RegExp(`next: the next run resumes the ${ids.length} interrupted task\\(s\\)`));
  const lines = logLines(root);
  assert.equal(lines.at(-1)!.raw.replace(/^.*\] /, ''), 'LOCK released');
  assert.equal(lines.at(-2)!.type, 'STATS');
  assert.equal(stats(root).in_batch, ids.length);
  assert.ok(!existsSync(join(root, '.launchpad/session.lock')), 'the lock was not released');
  for (const id of ids) {
    const t = taskById(root, id);
    assert.equal(t.status, 'in_progress', id);
    assert.equal(t.worktree_branch, `harness-${id}`);
    assert.match(String(t.agent_id), /^agent_/);
    assert.equal(t.attempts, attempts, `${id}: the attempt in progress counts once`);
    assert.equal(linesOf(root, 'AGENT_DONE', id).length, 0, `${id} was collected as if it had finished`);
    assert.equal(linesOf(root, 'DISCARD', id).length, 0, `${id} was discarded`);
  }
  assert.equal(extraWorktrees(root).length, ids.length, 'worktrees were removed');
  assert.deepEqual(
    harnessBranches(root),
    ids.map((id) => `harness-${id}`),
  );
  assert.ok(existsSync(join(root, '.harness-active')));
  assert.equal(linesOf(root, 'ERROR').length, 0, 'a stop was logged as an error');
}

/**
 * The agents were stopped before their verdict: their work (committed) is never merged as it
 * is; the next run resumes each agent in its worktree, as the same (first) attempt.
 */
async function assertResumedByNextRun(root: string, ids: string[]): Promise<void> {
  // Finishes what the stopped agent left (its done.txt committed) with one more commit.
  const finish =
    'echo finished > "src/$LAUNCHPAD_TASK_ID/finished.txt" && git add -A && git commit -q -m "[$LAUNCHPAD_TASK_ID] finish" && echo RESULT:SUCCESS';
  const next = await run(root, finish);
  assert.equal(next.code, 0, show(next, root));
  for (const id of ids) {
    const t = taskById(root, id);
    assert.equal(t.status, 'completed');
    assert.equal(t.attempts, 1, `${id}: the stop cost an attempt`);
    assert.match(linesOf(root, 'RECOVERY', id)[0]!.message, /^action="resumed agent" reason="interrupted without a verdict: 1 commit\(s\)/);
    assert.match(linesOf(root, 'DISPATCH', id)[1]!.message, /resuming=attempt-1$/);
    assertOrder(root, id, ['RECOVERY', 'DISPATCH', 'AGENT_DONE', 'VALIDATE', 'MERGE', 'Completed']);
    assert.equal(read(join(root, `src/${id}/finished.txt`)), 'finished\n');
  }
  assert.equal(linesOf(root, 'ERROR').length, 0);
  assert.equal(merges(root).length, ids.length);
  assert.deepEqual(extraWorktrees(root), []);
}

/** The agent had reported success before the stop: the next run validates and merges, no agent runs. */
async function assertValidatedByNextRun(root: string, ids: string[]): Promise<void> {
  const next = await run(root, agentCmd('fails.sh'));
  assert.equal(next.code, 0, show(next, root));
  for (const id of ids) {
    assert.equal(taskById(root, id).status, 'completed');
    assert.match(linesOf(root, 'RECOVERY', id)[0]!.message, /^action="validated orphaned worktree"/);
    assert.equal(linesOf(root, 'DISPATCH', id).length, 1);
  }
  assert.equal(merges(root).length, ids.length);
  assert.deepEqual(extraWorktrees(root), []);
}

describe('controller: stop (SIGINT, SIGTERM)', function () {
  this.timeout(120_000);

  it('SIGINT: agents and their grandchildren end, tasks stay in_progress with worktrees, STATS in_batch=2, LOCK released, exit 1; the next run recovers them', async () => {
    const ids = ['task-001', 'task-002'];
    const { root, r, all } = await stopWith('SIGINT', ids);
    await assertAllGone(all, 'agents, children or grandchildren after SIGINT');
    assertStopped(root, r, ids);
    await assertResumedByNextRun(root, ids);
  });

  it('SIGTERM: the same', async () => {
    const ids = ['task-001'];
    const { root, r, all } = await stopWith('SIGTERM', ids);
    await assertAllGone(all, 'agent, child or grandchild after SIGTERM');
    assertStopped(root, r, ids);
    await assertResumedByNextRun(root, ids);
  });

  it('a stop while a validation runs: the validation ends, the task stays in_progress, and the next run validates it again', async () => {
    const dir = tempDir();
    const pidFile = join(dir, 'validation.pid');
    // Hangs the first time (recording its pid), passes the next.
    const validate = `if [ -e ${shq(join(dir, 'seen'))} ]; then test -f src/task-001/done.txt; else : > ${shq(join(dir, 'seen'))}; sleep 120 & echo $! > ${shq(pidFile)}; wait; fi`;
    const root = harness({ tasks: [{ id: 'task-001', validate }] });
    const started = startRun(root, agentCmd('writes-done.sh'));
    await waitFor('the validation to start', () => existsSync(pidFile) && Number(read(pidFile)) > 0);
    started.child.kill('SIGINT');
    const r = await started.done;
    await assertAllGone([Number(read(pidFile))], 'the validation');
    assert.equal(r.code, 1, show(r, root));
    assert.equal(stats(root).in_batch, 1);
    assert.equal(taskById(root, 'task-001').status, 'in_progress');
    // The agent's attempt had ended (its verdict recorded): it stays counted.
    assert.equal(taskById(root, 'task-001').attempts, 1);
    assert.equal(linesOf(root, 'VALIDATE').length, 0, 'an interrupted validation was logged as a verdict');
    await assertValidatedByNextRun(root, ['task-001']);
  });

  it('a second SIGINT exits at once (130), and still leaves nothing running, even an agent that ignores SIGTERM', async () => {
    const pids = tempDir();
    const root = harness({ tasks: [{ id: 'task-001' }] });
    const started = startRun(root, agentCmd('ignores-term.sh'), [], { PID_DIR: pids });
    const all = await pidsOf(pids, 'task-001', ['agent', 'grandchild']);
    try {
      started.child.kill('SIGINT');
      // The first stop is under way (its SIGTERM ignored, SIGKILL 2 s later); a person presses again.
      await waitFor('the first stop to be under way', () => /SIGINT: stopping/.test(started.output().stderr));
      started.child.kill('SIGINT');
      const r = await started.done;
      assert.equal(r.code, 130, show(r, root));
      await assertAllGone(all, 'an agent (or its grandchild) after a second SIGINT');
      // The lock the hurried exit left is stale: the next run takes it over and recovers the task.
      const next = await run(root, agentCmd('writes-done.sh'));
      assert.equal(next.code, 0, show(next, root));
      assert.equal(taskById(root, 'task-001').status, 'completed');
    } finally {
      for (const pid of all) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone, as it should be
        }
      }
    }
  });
});
