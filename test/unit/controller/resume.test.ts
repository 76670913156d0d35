// An attempt interrupted half-way — the controller killed (SIGKILL), or a person's stop — is
// resumed by the next run in the worktree it left, never merged as it was: an interruption is
// never charged, what the resumed agent is told, and that a crash loop still ends (per session). Then the other
// half of "no work is lost": every discarded attempt's commits stay reachable under
// refs/launchpad/attempts/, `status` names them and `prune-attempts` deletes them.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import {
  agent,
  agentCmd,
  assertOrder,
  git,
  harness,
  launchpad,
  launchpadRefs,
  linesOf,
  merges,
  read,
  run,
  show,
  shq,
  startRun,
  taskById,
  tempDir,
  treeFiles,
  unreachableAgentCommits,
  waitFor,
  waitForLog,
} from './support';

/** Starts a run whose agent commits half its task and hangs, and waits until it has. */
async function halfWay(root: string, gates: string) {
  const started = startRun(root, agentCmd('half-then-hangs.sh'), [], { GATE_DIR: gates });
  await waitFor('the agent to be half-way', () => existsSync(join(gates, 'task-001.half')));
  await waitForLog(root, /CHECKPOINT \[task-001\]/);
  return started;
}

const HALF = { id: 'task-001', validate: 'test -f src/task-001/part1.txt' };

describe('controller: an interrupted attempt is resumed, never merged', function () {
  this.timeout(120_000);

  it('SIGKILL of the controller half-way through a multi-commit change → the next run resumes the agent there, as the same attempt: a crash is not charged', async () => {
    const gates = tempDir();
    const root = harness({ tasks: [HALF] });
    const started = await halfWay(root, gates);
    started.child.kill('SIGKILL');
    await started.done;
    assert.equal(taskById(root, 'task-001').attempts, 1);
    const prompt = join(tempDir(), 'prompt.md');
    const r = await run(root, agentCmd('finishes-work.sh'), [], { PROMPT_COPY: prompt });
    assert.equal(r.code, 0, show(r, root));
    const ref = 'refs/launchpad/attempts/task-001/1';
    assert.equal(
      linesOf(root, 'RECOVERY', 'task-001').at(-1)!.message,
      `action="resumed agent" reason="interrupted without a verdict: 1 commit(s), 1 uncommitted change(s), 1 checkpoint(s)" kept=${ref}`,
    );
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'completed');
    assert.equal(t.attempts, 1, 'the killed attempt and its resume are one attempt');
    assert.deepEqual(
      t.checkpoints?.map((c) => [c.attempt, c.description]),
      [[1, 'part 1 committed']],
    );
    // Only the finished work was merged, once; the unfinished half is kept as it was left.
    assert.deepEqual(merges(root).length, 1);
    assert.deepEqual(treeFiles(root, 'main', 'src/task-001'), {
      'src/task-001/part1.txt': 'part1 by attempt 1',
      'src/task-001/part2.txt': 'part2 by attempt 1',
    });
    assert.equal(git(root, 'show', `${ref}:src/task-001/part2.txt`), 'part2, unfinished');
    const text = read(prompt);
    assert.match(text, /Attempt 1 of this task was interrupted/);
    assert.match(text, /- attempt 1, step 1\/2: "part 1 committed"/);
    assert.match(text, /\[task-001\] part 1/);
    assert.match(text, /- src\/task-001\/part2\.txt/);
    assert.match(linesOf(root, 'STATS').at(-1)!.message, / checkpoints=1 batches_dispatched=1$/, 'the resumed dispatch is a batch');
    assert.deepEqual(
      linesOf(root, 'BATCH').map((l) => l.message),
      ['dispatching 1 task: [task-001]', 'dispatching 1 resumed task: [task-001]'],
    );
    assert.deepEqual(unreachableAgentCommits(root), []);
  });

  it("a person's stop (SIGINT) half-way → no ERROR, and the next run resumes it as the same attempt 1", async () => {
    const gates = tempDir();
    const root = harness({ tasks: [HALF] });
    const started = await halfWay(root, gates);
    started.child.kill('SIGINT');
    const stopped = await started.done;
    assert.equal(stopped.code, 1, show(stopped, root));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'in_progress');
    assert.equal(t.attempts, 1, 'the attempt in progress counts once');
    const r = await run(root, agentCmd('finishes-work.sh'));
    assert.equal(r.code, 0, show(r, root));
    assert.equal(taskById(root, 'task-001').attempts, 1);
    assert.match(linesOf(root, 'DISPATCH', 'task-001')[1]!.message, /resuming=attempt-1$/);
    assert.equal(linesOf(root, 'ERROR').length, 0);
    assertOrder(root, 'task-001', ['DISPATCH', 'CHECKPOINT', 'RECOVERY', 'DISPATCH', 'AGENT_DONE', 'VALIDATE', 'MERGE', 'Completed']);
  });

  it('killed mid-change in five sessions in a row, progress each time: never charged, never failed; the sixth run finishes it as attempt 1', async () => {
    const gates = tempDir();
    const root = harness({
      tasks: [
        { id: 'task-001', validate: 'test -f src/task-001/done.txt', maxAttempts: 2 },
        { id: 'task-002', dependsOn: ['task-001'] },
      ],
    });
    // Each session's agent commits one more file, says so, then hangs until the controller is killed.
    const oneMore = `n=$(ls src/task-001 2>/dev/null | wc -l); mkdir -p src/task-001; echo "$n" > src/task-001/part$n.txt; git add -A; git commit -qm "part $n"; : > ${shq(gates)}/session$n; exec sleep 120`;
    for (let i = 0; i < 5; i++) {
      const started = startRun(root, oneMore);
      await waitFor(`session ${i + 1}'s commit`, () => existsSync(join(gates, `session${i}`)));
      started.child.kill('SIGKILL');
      await started.done;
      const t = taskById(root, 'task-001');
      assert.deepEqual([t.status, t.attempts, t.error_log], ['in_progress', 1, []], `after kill ${i + 1}`);
    }
    const r = await run(
      root,
      `${shq(agent('writes-done.sh'))} >/dev/null; : > src/task-001/done.txt; git add -A; git commit -qm done; echo RESULT:SUCCESS`,
    );
    assert.equal(r.code, 0, show(r, root));
    const t = taskById(root, 'task-001');
    assert.deepEqual([t.status, t.attempts, t.error_log], ['completed', 1, []]);
    assert.equal(taskById(root, 'task-002').status, 'completed');
    assert.deepEqual(treeFiles(root, 'main', 'src/task-001'), {
      'src/task-001/done.txt': '',
      'src/task-001/part0.txt': '0',
      'src/task-001/part1.txt': '1',
      'src/task-001/part2.txt': '2',
      'src/task-001/part3.txt': '3',
      'src/task-001/part4.txt': '4',
    });
    assert.equal(linesOf(root, 'ERROR').length, 0);
    assert.deepEqual(unreachableAgentCommits(root), []);
  });

  it('a crash loop ends per session, not by charging the task: three sessions killed without progress, then the run stops with exit 2 and says so', async () => {
    const gates = tempDir();
    const root = harness({ tasks: [{ id: 'task-001', maxAttempts: 1 }] });
    // An agent that does nothing before the controller dies: no commit, no change, no checkpoint.
    const idle = `: > ${shq(gates)}/started.$$; exec sleep 120`;
    for (let i = 0; i < 3; i++) {
      const before = readdirSync(gates).length;
      const started = startRun(root, idle);
      await waitFor(`agent ${i + 1} to start`, () => readdirSync(gates).length > before);
      started.child.kill('SIGKILL');
      await started.done;
    }
    const stopped = await run(root, idle);
    assert.equal(stopped.code, 2, show(stopped, root));
    assert.match(stopped.stdout + stopped.stderr, /the last 3 sessions \(SESSION-\d+, SESSION-\d+, SESSION-\d+\) each ended in a crash/);
    assert.match(stopped.stdout + stopped.stderr, /to fix: find why launchpad run dies/);
    const error = linesOf(root, 'ERROR').find((l) => /each ended in a crash/.test(l.message));
    assert.ok(error && error.category === 'ENV_SETUP', show(stopped, root));
    // Nothing was dispatched by the session that stopped, and nothing was charged: its recovery
    // gave the interrupted attempt back (it had made no progress).
    assert.equal(linesOf(root, 'DISPATCH').length, 3);
    let t = taskById(root, 'task-001');
    assert.deepEqual([t.status, t.attempts, t.error_log], ['pending', 0, []]);
    // That session ended properly: the next run starts a new count, and finishes the task.
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 0, show(r, root));
    t = taskById(root, 'task-001');
    assert.deepEqual([t.status, t.attempts, t.error_log], ['completed', 1, []]);
  });

  it('the verdict is recorded in the attempt folder as the agent ends: success, or fail with its category and reason', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }, { id: 'task-002', maxAttempts: 1 }] });
    const failing = `${shq(agent('writes-done.sh'))} >/dev/null && echo "RESULT:FAIL could not finish"`;
    const r = await run(root, `if [ "$LAUNCHPAD_TASK_ID" = task-002 ]; then ${failing}; else ${shq(agent('writes-done.sh'))}; fi`);
    assert.equal(r.code, 1, show(r, root));
    const agentOf = (id: string) => /agent=(\S+)/.exec(linesOf(root, 'DISPATCH', id)[0]!.message)![1];
    assert.equal(read(join(root, '.launchpad/runs/task-001/attempt-1/verdict')), `success\nagent=${agentOf('task-001')}\n`);
    assert.equal(
      read(join(root, '.launchpad/runs/task-002/attempt-1/verdict')),
      `fail [AGENT_FAIL] could not finish\nagent=${agentOf('task-002')}\n`,
    );
  });
});

describe('controller: no agent commit becomes unreachable', function () {
  this.timeout(120_000);

  it('after a RESULT:FAIL and after a failing validation, the commits are kept (DISCARD kept=…); status and status --json list them', async () => {
    const root = harness({
      tasks: [
        { id: 'task-001', maxAttempts: 1 },
        { id: 'task-002', maxAttempts: 1, validate: 'false' },
      ],
    });
    const failing = `${shq(agent('writes-done.sh'))} >/dev/null && echo "RESULT:FAIL gave up"`;
    const r = await run(root, `if [ "$LAUNCHPAD_TASK_ID" = task-001 ]; then ${failing}; else ${shq(agent('writes-done.sh'))}; fi`);
    assert.equal(r.code, 1, show(r, root));
    assert.match(
      linesOf(root, 'DISCARD', 'task-001')[0]!.message,
      / reason="agent reported failure" kept=refs\/launchpad\/attempts\/task-001\/1$/,
    );
    assert.match(
      linesOf(root, 'DISCARD', 'task-002')[0]!.message,
      / reason="validation failed" kept=refs\/launchpad\/attempts\/task-002\/1$/,
    );
    assert.deepEqual(launchpadRefs(root), ['refs/launchpad/attempts/task-001/1', 'refs/launchpad/attempts/task-002/1']);
    for (const id of ['task-001', 'task-002']) {
      assert.equal(git(root, 'log', '-1', '--format=%s', `refs/launchpad/attempts/${id}/1`), `[${id}] Task ${id}`);
    }
    assert.deepEqual(unreachableAgentCommits(root), []);

    const text = (await launchpad(root, ['status'])).stdout;
    assert.match(text, /^\[failed\] task-001: .*\n {4}kept attempts: refs\/launchpad\/attempts\/task-001\/1$/m);
    const json = JSON.parse((await launchpad(root, ['status', '--json'])).stdout) as {
      tasks: Array<{ id: string; kept_attempts: string[] }>;
    };
    assert.deepEqual(
      json.tasks.map((t) => [t.id, t.kept_attempts]),
      [
        ['task-001', ['refs/launchpad/attempts/task-001/1']],
        ['task-002', ['refs/launchpad/attempts/task-002/1']],
      ],
    );
  });

  it('a second attempt of the same number (after a retry) is kept beside the first (<attempt>.2)', async () => {
    const root = harness({ tasks: [{ id: 'task-001', maxAttempts: 1, validate: 'false' }] });
    await run(root, agentCmd('writes-done.sh'));
    assert.equal((await launchpad(root, ['retry', 'task-001'])).code, 0);
    // Git dates are in seconds: an attempt committed in the same second as the first, with the same
    // content and parent, would be the very same commit (kept once). The next second, it is not.
    await sleep(1000 - (Date.now() % 1000) + 20);
    await run(root, agentCmd('writes-done.sh'));
    assert.deepEqual(launchpadRefs(root), ['refs/launchpad/attempts/task-001/1', 'refs/launchpad/attempts/task-001/1.2']);
    assert.deepEqual(unreachableAgentCommits(root), []);
  });
});
