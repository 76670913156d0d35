import assert from 'node:assert/strict';

import { assertFence, StaleAttemptError } from '../../../../src/core/attempt/lifecycle';
import type { Task, TaskFile } from '../../../../src/core/taskFile/schema';
import { blockedByOf, blockedDependents, findDependencyFailures } from '../../../../src/core/tasks/dag';
import { formatErrorEntry, MAX_REASON_CHARS, oneLineReason, parseErrorEntry } from '../../../../src/core/tasks/errorEntry';
import {
  claimLapsed,
  ClaimRefusedError,
  completeTask,
  dispatchTask,
  ERROR_TAIL_CHARS,
  failTask,
  markDependencyFailures,
  recordCheckpoint,
  recordOutOfScope,
  renewLease,
  restartTask,
  resumeTask,
  retryTask,
  takeOverClaim,
  TaskVanishedError,
  undoDispatch,
} from '../../../../src/core/tasks/transitions';
import { exhausted, task, taskFile } from '../fixtures';

/** logTimestamp's format: UTC, whole seconds. */
const UTC_SECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const NOW = '2025-07-01T10:00:00Z';

const claim = { agentId: 'agent_0001', branch: 'harness-a', baseCommit: 'abc1234' };
const byId = (file: TaskFile, id: string): Task => file.tasks.find((t) => t.id === id)!;

describe('core/tasks/transitions', () => {
  describe('dispatchTask', () => {
    it('claims the task: in_progress, one more attempt, agent, branch, base commit; checkpoints of earlier attempts kept', () => {
      const file = taskFile([
        task('a', { status: 'failed', attempts: 1, checkpoints: [{ step: 1, total: 2, description: 'old', timestamp: NOW }] }),
      ]);
      const { before, attempt } = dispatchTask(file, 'a', claim);
      const a = byId(file, 'a');
      assert.equal(attempt, 2);
      assert.equal(a.status, 'in_progress');
      assert.equal(a.attempts, 2);
      assert.equal(a.agent_id, 'agent_0001');
      assert.equal(a.worktree_branch, 'harness-a');
      assert.equal(a.started_at_commit, 'abc1234');
      assert.deepEqual(a.checkpoints, [{ step: 1, total: 2, description: 'old', timestamp: NOW }]);
      assert.equal(before.status, 'failed', 'the task as it was, for the prompt');
      assert.equal(before.attempts, 1);
      assert.notEqual(before, a);
    });

    it('throws TaskVanishedError for a task no longer in the file', () => {
      assert.throws(() => dispatchTask(taskFile([task('b')]), 'a', claim), TaskVanishedError);
    });
  });

  describe('undoDispatch (the machine failed the attempt: not charged)', () => {
    it('returns the task to its state before dispatch: status, attempts, claim, base commit, checkpoints', () => {
      const checkpoints = [{ step: 1, total: 2, description: 'old', timestamp: NOW }];
      const file = taskFile([
        task('a', { status: 'failed', attempts: 1, error_log: ['[TEST_FAIL] x'], started_at_commit: 'old0001', checkpoints }),
      ]);
      const { before } = dispatchTask(file, 'a', claim);
      undoDispatch(file, 'a', before);
      const a = byId(file, 'a');
      assert.deepEqual(a, before);
      assert.equal(a.status, 'failed');
      assert.equal(a.attempts, 1);
      assert.equal(a.agent_id, undefined);
      assert.equal(a.started_at_commit, 'old0001');
      assert.deepEqual(a.checkpoints, checkpoints);
      assert.deepEqual(a.error_log, ['[TEST_FAIL] x'], 'no error entry: nothing is charged');
    });

    it('a pending task goes back to pending with attempts 0, without fields it never had', () => {
      const file = taskFile([task('a')]);
      const { before } = dispatchTask(file, 'a', claim);
      undoDispatch(file, 'a', before);
      assert.equal(byId(file, 'a').status, 'pending');
      assert.equal(byId(file, 'a').attempts, 0);
      assert.equal('checkpoints' in byId(file, 'a'), false);
    });

    it('keepWork: stays in_progress with its claim and its count: the next run continues the same attempt on the work', () => {
      const file = taskFile([task('a', { attempts: 1, status: 'failed' })]);
      const { before } = dispatchTask(file, 'a', claim);
      undoDispatch(file, 'a', before, { keepWork: true });
      const a = byId(file, 'a');
      assert.equal(a.status, 'in_progress');
      assert.equal(a.attempts, 2);
      assert.equal(a.agent_id, 'agent_0001');
      assert.equal(a.worktree_branch, 'harness-a');
      assert.equal(a.started_at_commit, 'abc1234');
    });

    it('throws TaskVanishedError for a task no longer in the file', () => {
      assert.throws(() => undoDispatch(taskFile([]), 'a', task('a')), TaskVanishedError);
    });
  });

  describe('recordOutOfScope', () => {
    it('keeps the files merged outside files_hint; an empty list removes the field', () => {
      const file = taskFile([task('a')]);
      recordOutOfScope(file, 'a', ['shared.txt', 'docs/x.md']);
      assert.deepEqual(byId(file, 'a').out_of_scope, ['shared.txt', 'docs/x.md']);
      recordOutOfScope(file, 'a', []);
      assert.equal('out_of_scope' in byId(file, 'a'), false);
    });
  });

  describe('recordCheckpoint', () => {
    it('appends the step with the time it was seen, the attempt and the agent that reported it', () => {
      const file = taskFile([task('a', { status: 'in_progress', attempts: 2, agent_id: 'agent_0002' })]);
      recordCheckpoint(file, 'a', { step: 1, total: 3, description: 'schema' }, NOW);
      const written = recordCheckpoint(file, 'a', { step: 2, total: 3, description: 'routes' });
      assert.deepEqual(byId(file, 'a').checkpoints?.[0], {
        step: 1,
        total: 3,
        description: 'schema',
        timestamp: NOW,
        attempt: 2,
        agent_id: 'agent_0002',
      });
      assert.equal(byId(file, 'a').checkpoints?.[1], written);
      assert.match(written.timestamp, UTC_SECONDS);
    });
  });

  describe('resumeTask', () => {
    it('a new agent continues the same attempt in the same worktree: nothing more counted, branch, base and checkpoints kept', () => {
      const checkpoints = [{ step: 1, total: 2, description: 'half', timestamp: NOW, attempt: 1, agent_id: 'agent_0001' }];
      const file = taskFile([
        task('a', {
          status: 'in_progress',
          attempts: 1,
          agent_id: 'agent_0001',
          worktree_branch: 'harness-a',
          started_at_commit: 'abc1234',
          checkpoints,
        }),
      ]);
      const { before, attempt } = resumeTask(file, 'a', 'agent_0002');
      const a = byId(file, 'a');
      assert.equal(attempt, 1);
      assert.deepEqual(
        [a.status, a.attempts, a.agent_id, a.worktree_branch, a.started_at_commit],
        ['in_progress', 1, 'agent_0002', 'harness-a', 'abc1234'],
      );
      assert.deepEqual(a.checkpoints, checkpoints);
      assert.equal(before.agent_id, 'agent_0001');
    });

    it('throws TaskVanishedError for a task no longer in the file', () => {
      assert.throws(() => resumeTask(taskFile([task('b')]), 'a', 'agent_0002'), TaskVanishedError);
    });
  });

  describe('restartTask', () => {
    it('an interrupted attempt that left nothing: pending again, claim released, no error recorded, the attempt given back', () => {
      const file = taskFile([
        task('a', { status: 'in_progress', attempts: 2, agent_id: 'x', worktree_branch: 'harness-a', error_log: ['[TEST_FAIL] one'] }),
      ]);
      restartTask(file, 'a');
      const a = byId(file, 'a');
      assert.deepEqual([a.status, a.attempts, a.agent_id, a.worktree_branch], ['pending', 1, null, null]);
      assert.deepEqual(a.error_log, ['[TEST_FAIL] one']);
    });
  });

  describe('completeTask', () => {
    it('completed, completed_at stamped, claim and error tail released, error_log kept', () => {
      const file = taskFile([
        task('a', {
          status: 'in_progress',
          agent_id: 'x',
          worktree_branch: 'harness-a',
          error_tail: 'old',
          error_log: ['[TEST_FAIL] one'],
        }),
      ]);
      completeTask(file, 'a');
      const a = byId(file, 'a');
      assert.equal(a.status, 'completed');
      assert.match(a.completed_at!, UTC_SECONDS);
      assert.equal(a.agent_id, null);
      assert.equal(a.worktree_branch, null);
      assert.equal(a.error_tail, null);
      assert.deepEqual(a.error_log, ['[TEST_FAIL] one']);
    });
  });

  describe('failTask', () => {
    it('failed, `[CATEGORY] reason` appended on one line, tail kept, failed_at stamped, claim released', () => {
      const file = taskFile([
        task('a', { status: 'in_progress', agent_id: 'x', worktree_branch: 'harness-a', error_log: ['[AGENT_FAIL] before'] }),
      ]);
      const tail = 'x'.repeat(ERROR_TAIL_CHARS) + 'the end';
      const entry = failTask(file, 'a', { category: 'TEST_FAIL', reason: '  npm test exited with 1:\n   expected 2\n', tail });
      const a = byId(file, 'a');
      assert.equal(a.status, 'failed');
      assert.deepEqual(a.error_log, ['[AGENT_FAIL] before', '[TEST_FAIL] npm test exited with 1: expected 2']);
      assert.deepEqual(entry, { category: 'TEST_FAIL', reason: 'npm test exited with 1: expected 2' });
      assert.deepEqual(parseErrorEntry(a.error_log.at(-1)), entry);
      assert.equal(a.error_tail!.length, ERROR_TAIL_CHARS);
      assert.ok(a.error_tail!.endsWith('the end'));
      assert.match(a.failed_at!, UTC_SECONDS);
      assert.equal(a.agent_id, null);
      assert.equal(a.worktree_branch, null);
    });

    it('bounds the reason and clears an older tail when there is no output', () => {
      const file = taskFile([task('a', { status: 'in_progress', error_tail: 'older' })]);
      failTask(file, 'a', { category: 'AGENT_FAIL', reason: 'r'.repeat(MAX_REASON_CHARS * 2) });
      assert.equal(byId(file, 'a').error_log[0], `[AGENT_FAIL] ${'r'.repeat(MAX_REASON_CHARS)}`);
      assert.equal(byId(file, 'a').error_tail, null);
    });
  });

  describe('markDependencyFailures', () => {
    it('fails what the dependency rules find, with the entry and the blocking task as data', () => {
      const file = taskFile([
        exhausted('a'),
        task('b', { depends_on: ['a'], agent_id: 'stale', worktree_branch: 'harness-b' }),
        task('c', { depends_on: ['b'] }),
        task('d', { depends_on: ['nowhere'] }),
      ]);
      const failures = markDependencyFailures(file, NOW);
      assert.deepEqual(
        failures.map((f) => [f.taskId, f.reason, f.blockedBy]),
        [
          ['d', 'Unknown dependency nowhere', undefined],
          ['b', 'Blocked by failed a', 'a'],
          ['c', 'Blocked by failed b', 'b'],
        ],
      );
      for (const f of failures) {
        const t = byId(file, f.taskId);
        assert.equal(t.status, 'failed', f.taskId);
        assert.equal(t.error_log.at(-1), f.entry);
        assert.equal(f.entry, formatErrorEntry('DEPENDENCY', f.reason));
        assert.equal(t.failed_at, NOW);
        assert.equal(t.agent_id, null);
        assert.equal(t.worktree_branch, null);
        assert.equal(blockedByOf(t), f.blockedBy, 'the stored entry reads back as the same relation');
      }
      assert.deepEqual(markDependencyFailures(file), [], 'marked once');
    });
  });

  describe('retryTask', () => {
    it('unblocks, transitively, exactly the tasks markDependencyFailures blocked because of it', () => {
      const file = taskFile([
        exhausted('a'),
        task('b', { depends_on: ['a'], attempts: 1 }),
        task('c', { depends_on: ['b'] }),
        task('d', { depends_on: ['c', 'x'] }),
        exhausted('x'),
        task('y', { depends_on: ['x'] }),
      ]);
      markDependencyFailures(file);
      // d is blocked by whichever of c and x the walk reached first: x, a root.
      assert.equal(blockedByOf(byId(file, 'd')), 'x');
      assert.deepEqual(
        blockedDependents(file.tasks, 'a').map((t) => t.id),
        ['b', 'c'],
      );

      const reset = retryTask(file, 'a');
      assert.deepEqual(
        reset.map((t) => t.id),
        ['a', 'b', 'c'],
      );
      for (const t of reset) {
        assert.equal(t.status, 'pending', t.id);
        assert.equal(t.failed_at, null, t.id);
      }
      assert.equal(byId(file, 'a').attempts, 0, 'the retried task gets its budget back');
      assert.equal(byId(file, 'b').attempts, 1, 'a dependent keeps its own attempts');
      assert.equal(byId(file, 'a').error_log.length, 1, 'error_log kept for the next prompt');
      assert.equal(byId(file, 'd').status, 'failed', 'blocked by x: untouched');
      assert.equal(byId(file, 'y').status, 'failed');
      assert.deepEqual(findDependencyFailures(file.tasks), [], 'nothing left to mark: d and y stay blocked by x');
    });

    it('a blocked-by loop written by hand ends the walk', () => {
      const entry = (by: string) => formatErrorEntry('DEPENDENCY', `Blocked by failed ${by}`);
      const file = taskFile([
        exhausted('a'),
        task('b', { status: 'failed', error_log: [entry('c')] }),
        task('c', { status: 'failed', error_log: [entry('b')] }),
      ]);
      assert.deepEqual(
        blockedDependents(file.tasks, 'b').map((t) => t.id),
        ['c'],
      );
      assert.deepEqual(
        retryTask(file, 'b').map((t) => t.id),
        ['b', 'c'],
      );
    });
  });

  it('every timestamp a transition writes is UTC seconds', () => {
    const file = taskFile([task('a'), task('b'), exhausted('c'), task('d', { depends_on: ['c'] })]);
    dispatchTask(file, 'a', claim);
    const cp = recordCheckpoint(file, 'a', { step: 1, total: 1, description: 'x' });
    completeTask(file, 'a');
    dispatchTask(file, 'b', claim);
    failTask(file, 'b', { category: 'TIMEOUT', reason: 'slow' });
    markDependencyFailures(file);
    for (const stamp of [cp.timestamp, byId(file, 'a').completed_at, byId(file, 'b').failed_at, byId(file, 'd').failed_at]) {
      assert.match(String(stamp), UTC_SECONDS);
    }
  });
});

describe('core/tasks/errorEntry', () => {
  it('formats and parses `[CATEGORY] reason`', () => {
    assert.equal(
      formatErrorEntry('MERGE_CONFLICT', 'Out-of-scope file conflict: a.ts'),
      '[MERGE_CONFLICT] Out-of-scope file conflict: a.ts',
    );
    assert.deepEqual(parseErrorEntry('[MERGE_CONFLICT] Out-of-scope file conflict: a.ts'), {
      category: 'MERGE_CONFLICT',
      reason: 'Out-of-scope file conflict: a.ts',
    });
    assert.deepEqual(parseErrorEntry('[TIMEOUT]'), { category: 'TIMEOUT', reason: '' });
  });

  it('an entry without a known category has none', () => {
    for (const text of [undefined, '', 'no brackets', '[NOT_A_CATEGORY] x', '[test_fail] x', ' [TEST_FAIL] x']) {
      assert.equal(parseErrorEntry(text), undefined, String(text));
    }
  });

  it('a reason is one trimmed line of at most MAX_REASON_CHARS', () => {
    assert.equal(oneLineReason(' a\n  b \r\n c '), 'a b c');
    assert.equal(oneLineReason('z'.repeat(MAX_REASON_CHARS + 1)).length, MAX_REASON_CHARS);
  });
});

describe('core/tasks/transitions: concurrent claims', () => {
  const worker = { workerId: 'w1', leaseSeconds: 60 };
  const at = new Date('2025-07-01T10:00:00Z');

  it('a worker claim sets claimed_by, the lease and a new claim generation', () => {
    const file = taskFile([task('a', { claim_generation: 4 })]);
    const { token } = dispatchTask(file, 'a', { ...claim, worker }, at);
    const a = byId(file, 'a');
    assert.equal(a.claimed_by, 'w1');
    assert.equal(a.lease_expires_at, '2025-07-01T10:01:00Z');
    assert.equal(a.claim_generation, 5);
    assert.deepEqual(token, { taskId: 'a', workerId: 'w1', generation: 5 });
  });

  it('a worker cannot claim a task that is no longer eligible (another worker claimed it first), and nothing changes', () => {
    const file = taskFile([
      task('a', { status: 'in_progress', claimed_by: 'w2', lease_expires_at: '2025-07-01T10:05:00Z', claim_generation: 1 }),
    ]);
    const before = JSON.stringify(file);
    assert.throws(() => dispatchTask(file, 'a', { ...claim, worker }, at), ClaimRefusedError);
    assert.equal(JSON.stringify(file), before);
  });

  it('renewLease pushes the lease forward for the holder and reports "lost" to anyone else', () => {
    const file = taskFile([task('a')]);
    const { token } = dispatchTask(file, 'a', { ...claim, worker }, at);
    assert.equal(renewLease(file, token!, 60, new Date('2025-07-01T10:00:30Z')), 'renewed');
    assert.equal(byId(file, 'a').lease_expires_at, '2025-07-01T10:01:30Z');
    assert.equal(renewLease(file, { ...token!, generation: token!.generation - 1 }, 60, at), 'lost');
    assert.equal(renewLease(file, { ...token!, workerId: 'w2' }, 60, at), 'lost');
    assert.equal(byId(file, 'a').lease_expires_at, '2025-07-01T10:01:30Z', 'a lost renewal changes nothing');
  });

  it('a live lease of another worker cannot be taken over; a lapsed one can, and fences the old holder out', () => {
    const file = taskFile([task('a')]);
    const { token: old } = dispatchTask(file, 'a', { ...claim, worker }, at);
    const w2 = { workerId: 'w2', leaseSeconds: 30 };
    assert.equal(takeOverClaim(file, 'a', w2, new Date('2025-07-01T10:00:59Z')), undefined);
    assert.equal(claimLapsed(byId(file, 'a'), new Date('2025-07-01T10:00:59Z')), false);
    const later = new Date('2025-07-01T10:01:00Z');
    assert.equal(claimLapsed(byId(file, 'a'), later), true);
    const taken = takeOverClaim(file, 'a', w2, later)!;
    assert.deepEqual(taken.previous, { claimedBy: 'w1', leaseExpiresAt: '2025-07-01T10:01:00Z', generation: 1 });
    assert.deepEqual(taken.token, { taskId: 'a', workerId: 'w2', generation: 2 });
    const fence = (generation: number) => ({ taskId: 'a', agentId: claim.agentId, generation });
    assert.throws(() => assertFence(file, fence(old!.generation)), StaleAttemptError);
    assert.doesNotThrow(() => assertFence(file, fence(taken.token.generation)));
    assert.equal(byId(file, 'a').attempts, 1, 'a take-over is not a new attempt');
  });

  it('completing or failing releases the claim but keeps the generation count', () => {
    const file = taskFile([task('a'), task('b')]);
    dispatchTask(file, 'a', { ...claim, worker }, at);
    dispatchTask(file, 'b', { ...claim, worker }, at);
    completeTask(file, 'a');
    failTask(file, 'b', { category: 'TEST_FAIL', reason: 'x' });
    for (const id of ['a', 'b']) {
      assert.equal(byId(file, id).claimed_by, null);
      assert.equal(byId(file, id).lease_expires_at, null);
      assert.equal(byId(file, id).claim_generation, 1);
    }
  });

  it('a final failure (base commit gone) uses up the attempts', () => {
    const file = taskFile([task('a', { attempts: 1, max_attempts: 3 })]);
    failTask(file, 'a', { category: 'TASK_EXEC', reason: 'base gone', final: true });
    assert.equal(byId(file, 'a').attempts, 3);
  });
});
