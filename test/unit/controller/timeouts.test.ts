// Timeouts and process groups ("every timeout ends the whole process group"), and
// on_failure.cleanup: an agent past agent_timeout_seconds and a validation past its
// timeout_seconds are TIMEOUT failures, and neither they nor their grandchildren survive.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  agentCmd,
  alive,
  assertAllGone,
  byTask,
  defaultWorktreeRoot,
  extraWorktrees,
  harness,
  harnessBranches,
  linesOf,
  pidsOf,
  read,
  run,
  show,
  shq,
  startRun,
  taskById,
  tempDir,
  waitFor,
} from './support';

describe('controller: timeouts, process groups, on_failure.cleanup', function () {
  this.timeout(120_000);

  it('an agent past agent_timeout_seconds: TIMEOUT, discarded, and the agent, its child and grandchild are all gone', async () => {
    const pids = tempDir();
    const root = harness({ tasks: [{ id: 'task-001', maxAttempts: 1 }], sessionConfig: { agent_timeout_seconds: 2 } });
    const r = await run(root, agentCmd('hangs.sh'), [], { PID_DIR: pids });
    assert.equal(r.code, 1, show(r, root));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed');
    assert.deepEqual(t.error_log, ['[TIMEOUT] Agent timed out after 2s']);
    assert.match(String(t.error_tail), /working on it/);
    assert.match(linesOf(root, 'AGENT_DONE', 'task-001')[0]!.message, /result=error$/);
    assert.equal(linesOf(root, 'DISCARD', 'task-001')[0]!.message, 'worktree=harness-task-001 reason="agent timed out"');
    assert.equal(linesOf(root, 'ERROR', 'task-001')[0]!.category, 'TIMEOUT');
    assert.equal(linesOf(root, 'VALIDATE').length, 0);
    await assertAllGone(await pidsOf(pids, 'task-001'), 'the timed-out agent, child or grandchild');
    assert.deepEqual(extraWorktrees(root), []);
    assert.deepEqual(harnessBranches(root), []);
  });

  it('an agent past agent_timeout_seconds whose processes left its group (setsid, set -m): all ended, and a WARN counts them', async () => {
    const pids = tempDir();
    const root = harness({ tasks: [{ id: 'task-001', maxAttempts: 1 }], sessionConfig: { agent_timeout_seconds: 2 } });
    const r = await run(root, agentCmd('escapes-group.sh'), [], { PID_DIR: pids });
    assert.equal(r.code, 1, show(r, root));
    assert.deepEqual(taskById(root, 'task-001').error_log, ['[TIMEOUT] Agent timed out after 2s']);
    assert.deepEqual(
      linesOf(root, 'WARN', 'task-001').map((l) => l.message),
      ['agent: ended 2 processes that had left its process group'],
    );
    await assertAllGone(await pidsOf(pids, 'task-001', ['agent', 'setsid', 'job']), 'the agent or a process that left its group');
  });

  it("a validation's setsid child is ended at the validation's time limit", async () => {
    const pids = tempDir();
    const validate = `setsid sleep 120 & echo $! > ${shq(join(pids, 'v.setsid'))}; wait`;
    const root = harness({ tasks: [{ id: 'task-001', validate, timeout: 2, maxAttempts: 1 }] });
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 1, show(r, root));
    assert.equal(linesOf(root, 'VALIDATE', 'task-001')[0]!.message, `command="${validate}" result=TIMEOUT`);
    assert.deepEqual(
      linesOf(root, 'WARN', 'task-001').map((l) => l.message),
      ['validation: ended 1 process that had left its process group'],
    );
    await assertAllGone(await pidsOf(pids, 'v', ['setsid']), "the validation's setsid child");
  });

  it('after the controller is killed with SIGKILL, its agent and the processes that left its group still end at the time limit', async () => {
    const pids = tempDir();
    const root = harness({ tasks: [{ id: 'task-001', maxAttempts: 1 }], sessionConfig: { agent_timeout_seconds: 4 } });
    const started = startRun(root, agentCmd('escapes-group.sh'), [], { PID_DIR: pids });
    const all = await pidsOf(pids, 'task-001', ['agent', 'setsid', 'job']);
    started.child.kill('SIGKILL');
    await started.done;
    assert.ok(all.every(alive), 'the processes outlive their controller until the time limit');
    await waitFor('the time limit to end them', () => all.every((p) => !alive(p)), 60_000);
  });

  it("after the controller is killed with SIGKILL, the next run's recovery ends its agent and counts the processes that left the group", async () => {
    const pids = tempDir();
    const root = harness({ tasks: [{ id: 'task-001' }], sessionConfig: { agent_timeout_seconds: 300 } });
    const agent = `if [ -e ${shq(join(pids, 'crashed'))} ]; then ${agentCmd('writes-done.sh')}; else ${agentCmd('escapes-group.sh')}; fi`;
    const started = startRun(root, agent, [], { PID_DIR: pids });
    const all = await pidsOf(pids, 'task-001', ['agent', 'setsid', 'job']);
    started.child.kill('SIGKILL');
    await started.done;
    writeFileSync(join(pids, 'crashed'), '');
    assert.ok(all.every(alive));
    const r = await run(root, agent, [], { PID_DIR: pids });
    assert.equal(r.code, 0, show(r, root));
    assert.deepEqual(
      linesOf(root, 'RECOVERY')
        .filter((l) => l.message.startsWith('action="ended orphaned process"'))
        .map((l) => l.message),
      ['action="ended orphaned process" reason="agent of task-001 outlived its controller" escaped=2'],
    );
    await assertAllGone(all, 'the agent of the killed controller or a process that left its group');
    assert.equal(taskById(root, 'task-001').status, 'completed');
  });

  it("a validation past the task's timeout_seconds: VALIDATE result=TIMEOUT, [TIMEOUT], and its background child is gone", async () => {
    const pids = tempDir();
    const validate = `sleep 120 & echo $! > ${shq(join(pids, 'v.grandchild'))}; echo $$ > ${shq(join(pids, 'v.agent'))}; wait`;
    const root = harness({ tasks: [{ id: 'task-001', validate, timeout: 2, maxAttempts: 1 }] });
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 1, show(r, root));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed');
    assert.deepEqual(t.error_log, [`[TIMEOUT] Validation timed out after 2s: ${validate}`]);
    assert.equal(linesOf(root, 'VALIDATE', 'task-001')[0]!.message, `command="${validate}" result=TIMEOUT`);
    assert.equal(
      linesOf(root, 'DISCARD', 'task-001')[0]!.message,
      'worktree=harness-task-001 reason="validation failed" kept=refs/launchpad/attempts/task-001/1',
    );
    assert.equal(linesOf(root, 'MERGE').length, 0);
    await assertAllGone(await pidsOf(pids, 'v', ['agent', 'grandchild']), 'the timed-out validation or its child');
  });

  it('an agent that exits leaving a child and grandchild running: its whole group is ended, the task still completes', async () => {
    const pids = tempDir();
    const root = harness({ tasks: [{ id: 'task-001' }] });
    const r = await run(root, agentCmd('spawns-children.sh'), [], { PID_DIR: pids });
    assert.equal(r.code, 0, show(r, root));
    assert.equal(taskById(root, 'task-001').status, 'completed');
    await assertAllGone(await pidsOf(pids, 'task-001', ['child', 'grandchild']), "the agent's leftover child or grandchild");
  });

  it('validation runs in the worktree; on_failure.cleanup runs there on each failure (never on success), its background child ended', async () => {
    const marks = tempDir();
    const cleanup = `pwd -P >> ${shq(join(marks, 'cleanup'))}; sleep 120 & echo $! > ${shq(join(marks, 'cleanup.grandchild'))}`;
    const root = harness({
      tasks: [
        { id: 'task-001', maxAttempts: 2, cleanup, validate: `pwd -P >> ${shq(join(marks, 'validation'))}; test -f src/task-001/done.txt` },
        { id: 'task-002', cleanup: `echo ran >> ${shq(join(marks, 'cleanup-of-passing-task'))}` },
      ],
    });
    const r = await run(root, byTask({ 'task-001': agentCmd('lazy-first.sh') }, agentCmd('writes-done.sh')), [], {});
    assert.equal(r.code, 0, show(r, root));
    const worktree = join(defaultWorktreeRoot(root), 'task-001');
    // Attempt 1 fails validation (cleanup runs), attempt 2 passes (no cleanup).
    assert.deepEqual(read(join(marks, 'validation')).trim().split('\n'), [worktree, worktree]);
    assert.deepEqual(read(join(marks, 'cleanup')).trim().split('\n'), [worktree]);
    assert.ok(!existsSync(join(marks, 'cleanup-of-passing-task')), 'cleanup ran for a task that passed');
    await assertAllGone([Number(read(join(marks, 'cleanup.grandchild')))], "the cleanup's background child");
    assert.equal(linesOf(root, 'WARN', 'task-001').length, 0);
  });

  it('a failing on_failure.cleanup is a WARN line and stops nothing', async () => {
    const root = harness({
      tasks: [
        { id: 'task-001', maxAttempts: 1, cleanup: 'echo "docker: not running" >&2; exit 7' },
        { id: 'task-002', dependsOn: ['task-003'] },
        { id: 'task-003' },
      ],
    });
    const r = await run(root, byTask({ 'task-001': agentCmd('fails.sh') }, agentCmd('writes-done.sh')));
    assert.equal(r.code, 1, show(r, root));
    assert.deepEqual(
      linesOf(root, 'WARN', 'task-001').map((l) => l.message),
      ['on_failure.cleanup exited with 7: echo "docker: not running" >&2; exit 7 (docker: not running)'],
    );
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed');
    assert.deepEqual(t.error_log, ['[AGENT_FAIL] could not resolve import errors']);
    assert.equal(taskById(root, 'task-002').status, 'completed');
    assert.equal(taskById(root, 'task-003').status, 'completed');
    await waitFor('worktrees removed', () => extraWorktrees(root).length === 0, 5000);
  });

  it('an on_failure.cleanup past cleanup_timeout_seconds is ended with its background child; a WARN says so and the run goes on', async () => {
    const pids = tempDir();
    const cleanup = `sleep 120 & echo $! > ${shq(join(pids, 'c.grandchild'))}; echo $$ > ${shq(join(pids, 'c.agent'))}; wait`;
    const root = harness({
      tasks: [{ id: 'task-001', maxAttempts: 1, cleanup }, { id: 'task-002' }],
      sessionConfig: { cleanup_timeout_seconds: 2 },
    });
    const r = await run(root, byTask({ 'task-001': agentCmd('fails.sh') }, agentCmd('writes-done.sh')));
    assert.equal(r.code, 1, show(r, root));
    assert.deepEqual(
      linesOf(root, 'WARN', 'task-001').map((l) => l.message),
      [`on_failure.cleanup timed out after 2s: ${cleanup}`],
    );
    assert.equal(taskById(root, 'task-001').status, 'failed');
    assert.equal(taskById(root, 'task-002').status, 'completed');
    await assertAllGone(await pidsOf(pids, 'c', ['agent', 'grandchild']), 'the timed-out cleanup or its child');
  });

  it('a harness-init.sh past health_check_timeout_seconds is ENV_SETUP twice, ended each time, nothing is dispatched, and the run stops with exit 2', async () => {
    const pids = tempDir();
    const root = harness({ tasks: [{ id: 'task-001' }], sessionConfig: { health_check_timeout_seconds: 1 } });
    const script = ['#!/bin/sh', `sleep 120 & echo $! >> ${shq(join(pids, 'h.grandchild'))}`, 'wait', ''].join('\n');
    writeFileSync(join(root, 'harness-init.sh'), script, { mode: 0o755 });
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 2, show(r, root));
    const errors = linesOf(root, 'ERROR').filter((l) => l.category === 'ENV_SETUP');
    // Twice, then the session's stop with what to do.
    assert.equal(errors.length, 3, show(r, root));
    assert.match(errors[0]!.message, /^harness-init\.sh timed out after 1s \(running it once more\)$/);
    assert.match(errors[2]!.message, /^session stopped \(no attempt was charged\)\. To fix: fix what it checks/);
    assert.equal(linesOf(root, 'DISPATCH').length, 0);
    assert.equal(taskById(root, 'task-001').status, 'pending');
    const grandchildren = read(join(pids, 'h.grandchild')).trim().split('\n').map(Number);
    assert.equal(grandchildren.length, 2);
    await assertAllGone(grandchildren, "the health check's background child");
  });
});
