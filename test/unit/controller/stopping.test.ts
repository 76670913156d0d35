// Stopping conditions: all completed → exit 0; only failed/blocked left → exit 1;
// max_tasks_per_session → stop, the next run continues; STATS adds up; .harness-active is there
// while work remains and gone when none is left.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import {
  agentCmd,
  batches,
  byTask,
  gates,
  harness,
  launchpad,
  linesOf,
  readTasks,
  run,
  show,
  startRun,
  stats,
  taskById,
  waitFor,
} from './support';

const active = (root: string) => existsSync(join(root, '.harness-active'));

describe('controller: stopping conditions', function () {
  this.timeout(120_000);

  it('all tasks completed → exit 0; .harness-active present while the run works, removed at the end', async () => {
    const g = gates();
    const root = harness({ tasks: [{ id: 'task-001' }, { id: 'task-002' }] });
    const started = startRun(root, `${agentCmd('gate.sh')} ${agentCmd('writes-done.sh')}`, [], { GATE_DIR: g.dir });
    await waitFor('both agents to start', () => g.waiting('task-001') && g.waiting('task-002'));
    assert.ok(active(root), '.harness-active missing while tasks run');
    g.open('task-001');
    g.open('task-002');
    const r = await started.done;
    assert.equal(r.code, 0, show(r, root));
    assert.match(r.stdout, /all 2 tasks completed\n$/);
    assert.ok(!active(root), '.harness-active left behind with nothing left to do');
  });

  it('only failed and blocked tasks left → exit 1, nothing left to run, no .harness-active', async () => {
    const root = harness({ tasks: [{ id: 'task-001', maxAttempts: 1 }, { id: 'task-002', dependsOn: ['task-001'] }, { id: 'task-003' }] });
    const r = await run(root, byTask({ 'task-001': agentCmd('fails.sh') }, agentCmd('writes-done.sh')));
    assert.equal(r.code, 1, show(r, root));
    assert.match(r.stdout, /stopped: nothing left that can run \(1\/3 completed · 1 failed · 1 blocked\)/);
    assert.ok(!active(root));
  });

  it('max_tasks_per_session: stops after N dispatches with exit 1 (.harness-active kept); the next run continues', async () => {
    const root = harness({
      tasks: [{ id: 'task-001' }, { id: 'task-002' }, { id: 'task-003' }],
      sessionConfig: { max_tasks_per_session: 2, max_parallel_agents: 3 },
    });
    const r1 = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r1.code, 1, show(r1, root));
    assert.match(r1.stdout, /max_tasks_per_session reached/);
    assert.deepEqual(batches(root), [['task-001', 'task-002']]);
    assert.equal(taskById(root, 'task-003').status, 'pending');
    assert.ok(active(root), '.harness-active removed although task-003 is left');

    const r2 = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r2.code, 0, show(r2, root));
    assert.deepEqual(batches(root), [['task-001', 'task-002'], ['task-003']]);
    assert.equal(linesOf(root, 'DISPATCH', 'task-003')[0]!.session, 2);
    assert.ok(!active(root));
  });

  it('retries count against max_tasks_per_session (attempts are counted at dispatch)', async () => {
    const root = harness({ tasks: [{ id: 'task-001', maxAttempts: 5 }], sessionConfig: { max_tasks_per_session: 2 } });
    const r = await run(root, agentCmd('fails.sh'));
    assert.equal(r.code, 1, show(r, root));
    assert.match(r.stdout, /max_tasks_per_session reached/);
    assert.deepEqual(batches(root), [['task-001'], ['task-001']]);
    const t = taskById(root, 'task-001');
    assert.equal(t.attempts, 2);
    assert.equal(t.status, 'failed');
    assert.ok(active(root));
  });

  it('the STATS line: its fields add up to tasks_total, attempts_total and batches_dispatched match, and status agrees', async () => {
    const root = harness({
      tasks: [
        { id: 'task-001' },
        { id: 'task-002', maxAttempts: 1 },
        { id: 'task-003', dependsOn: ['task-002'] },
        { id: 'task-004', validate: null },
        { id: 'task-005' },
      ],
    });
    const r = await run(
      root,
      byTask({ 'task-002': agentCmd('fails.sh'), 'task-005': agentCmd('fails-once.sh') }, agentCmd('writes-done.sh')),
    );
    assert.equal(r.code, 1, show(r, root));
    const st = stats(root);
    assert.deepEqual(st, {
      tasks_total: 5,
      completed: 2,
      failed: 1,
      in_batch: 0,
      pending: 1,
      blocked: 1,
      attempts_total: 4,
      checkpoints: 0,
      batches_dispatched: linesOf(root, 'BATCH').length,
    });
    assert.equal(st.completed! + st.failed! + st.in_batch! + st.pending! + st.blocked!, st.tasks_total);
    assert.equal(
      readTasks(root).tasks.reduce((n, t) => n + t.attempts, 0),
      st.attempts_total,
    );
    const status = JSON.parse((await launchpad(root, ['status', '--json'])).stdout);
    for (const k of ['tasks_total', 'completed', 'failed', 'pending', 'blocked'] as const) assert.equal(status[k], st[k], k);
    assert.equal(status.in_progress, 0);
  });
});
