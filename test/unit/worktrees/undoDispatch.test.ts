// transitions.undoDispatch: an attempt that is not the task's to pay for (its worktree could not
// be set up) leaves the task as dispatchTask found it.
import assert from 'node:assert/strict';

import { taskFileSchema } from '../../../src/core/taskFile/schema';
import { dispatchTask, undoDispatch } from '../../../src/core/tasks/transitions';

function file(task: Record<string, unknown>) {
  return taskFileSchema.parse({ tasks: [{ id: 'task-001', title: 'T', status: 'pending', ...task }] });
}

describe('tasks/transitions: undoDispatch', () => {
  it('undoes a dispatch of a pending task: status, attempts, claim, base commit, checkpoints', () => {
    const f = file({});
    const untouched = structuredClone(f.tasks[0]);
    const { before } = dispatchTask(f, 'task-001', { agentId: 'agent_1', branch: 'harness-task-001', baseCommit: 'abc' });
    assert.equal(f.tasks[0]!.attempts, 1);
    undoDispatch(f, 'task-001', before);
    assert.deepEqual(f.tasks[0], untouched);
  });

  it('undoes a dispatch of a retried task and leaves its error_log and checkpoints as they were', () => {
    const f = file({
      status: 'failed',
      attempts: 1,
      error_log: ['[TEST_FAIL] npm test exited with 1'],
      checkpoints: [{ step: 1, total: 2, description: 'half', timestamp: '2025-01-01T00:00:00Z' }],
      started_at_commit: 'old',
      failed_at: '2025-01-01T00:00:01Z',
    });
    const untouched = structuredClone(f.tasks[0]);
    const { before } = dispatchTask(f, 'task-001', { agentId: 'agent_2', branch: 'harness-task-001', baseCommit: 'new' });
    undoDispatch(f, 'task-001', before);
    assert.deepEqual(f.tasks[0], untouched);
    assert.equal(f.tasks[0]!.attempts, 1, 'not charged');
  });

  it('throws for a task that is gone from the file', () => {
    const f = file({});
    const { before } = dispatchTask(f, 'task-001', { agentId: 'a', branch: 'b', baseCommit: 'c' });
    f.tasks = [];
    assert.throws(() => undoDispatch(f, 'task-001', before), /no longer in harness-tasks.json/);
  });
});
