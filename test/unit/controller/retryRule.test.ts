// The retry rule: a failed task is retried once the base branch has moved since its failed
// attempt started, or after its back-off (session_config.retry_backoff_seconds, doubling per
// attempt), whichever comes first; the loop wakes up for it. Orders of events, not durations.
import assert from 'node:assert/strict';

import { agentCmd, byTask, gates, harness, linesOf, logLines, show, startRun, taskById, waitForLog } from './support';

describe('controller: when a failed task is retried', function () {
  this.timeout(120_000);

  it("not on an unchanged base: the task that needed another one silently waits for that one's merge, then passes", async () => {
    // task-a's validation needs task-b's work, which nothing declares; task-b is held until
    // task-a has failed once. Retried at once, task-a would fail its three attempts meanwhile.
    const root = harness({
      sessionConfig: { retry_backoff_seconds: 600 },
      tasks: [{ id: 'task-a', validate: 'test -f src/task-a/done.txt && test -f src/task-b/done.txt' }, { id: 'task-b' }],
    });
    const g = gates();
    const started = startRun(
      root,
      byTask({ 'task-b': `${agentCmd('gate.sh')} ${agentCmd('writes-done.sh')}` }, agentCmd('writes-done.sh')),
      [],
      { GATE_DIR: g.dir },
    );
    await waitForLog(root, /ERROR \[task-a\] \[TEST_FAIL\]/);
    g.open('task-b');
    const r = await started.done;
    assert.equal(r.code, 0, show(r, root));

    const a = taskById(root, 'task-a');
    assert.equal(a.status, 'completed');
    assert.equal(a.attempts, 2);
    const lines = logLines(root);
    const mergedB = lines.findIndex((l) => l.type === 'MERGE' && l.task === 'task-b');
    const dispatchesA = lines.flatMap((l, i) => (l.type === 'DISPATCH' && l.task === 'task-a' ? [i] : []));
    assert.equal(dispatchesA.length, 2);
    assert.ok(dispatchesA[1]! > mergedB, `task-a was retried before the base moved:\n${lines.map((l) => l.raw).join('\n')}`);
  });

  it('alone on an unchanged base: retried once its back-off has passed (the loop waits for it instead of ending the session)', async () => {
    const root = harness({ sessionConfig: { retry_backoff_seconds: 1 }, tasks: [{ id: 'task-001' }] });
    const r = await startRun(root, agentCmd('fails-once.sh')).done;
    assert.equal(r.code, 0, show(r, root));
    const t = taskById(root, 'task-001');
    assert.equal(t.attempts, 2);
    // failed_at (kept after the completion) and the log are both to the second.
    const retriedAt = linesOf(root, 'DISPATCH', 'task-001')[1]!.raw.slice(1, 21);
    assert.ok(Date.parse(retriedAt) >= Date.parse(t.failed_at!) + 1000, `retried at ${retriedAt}, before its back-off from ${t.failed_at}`);
  });
});
