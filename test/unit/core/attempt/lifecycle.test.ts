// The attempt's lifecycle as data and rules: the recovery table decides one action per case (a
// crash is never the task's: no row counts another attempt, only the agent's own failure is
// recorded against it), the fence refuses a stale attempt's effects, and a worktree's owner mark
// keeps one attempt from removing another's worktree. The rows as executors run them are
// tested on real repositories in test/unit/controller/recoveryTable.test.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import {
  assertFence,
  type AttemptFacts,
  holdsFence,
  markWorktreeOwner,
  mayRemoveWorktree,
  RECOVERY_TABLE,
  recoveryRow,
  StaleAttemptError,
  worktreeOwner,
} from '../../../../src/core/attempt/lifecycle';
import { git, makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/tmp';
import { task, taskFile } from '../fixtures';

const interrupted: AttemptFacts = {
  verdict: 'none',
  workCommitted: false,
  merged: false,
  where: 'worktree',
  baseExists: true,
  progress: true,
};

describe('attempt/lifecycle', () => {
  describe('the recovery table', () => {
    const cases: Array<[string, Partial<AttemptFacts>, string, 'kept' | 'given back']> = [
      ["the agent's recorded failure, whatever else", { verdict: 'fail', merged: true, where: 'none' }, 'record-failure', 'kept'],
      ['merged already', { merged: true }, 'complete', 'kept'],
      ['neither worktree nor branch', { where: 'none', verdict: 'success' }, 'start-afresh', 'given back'],
      ['its base is gone', { baseExists: false, verdict: 'success' }, 'stop-base-gone', 'given back'],
      ['its agent asked a question', { verdict: 'question', progress: false }, 'await-answer', 'given back'],
      ['a verdict of success', { verdict: 'success', progress: false }, 'validate-and-merge', 'kept'],
      ['work committed without a verdict file', { workCommitted: true, where: 'branch' }, 'validate-and-merge', 'kept'],
      ['interrupted before any progress', { progress: false }, 'start-afresh', 'given back'],
      ['interrupted after some progress', {}, 'resume', 'kept'],
    ];
    for (const [what, facts, action, attempt] of cases) {
      it(`${what} → ${action} (the attempt ${attempt})`, () => {
        const row = recoveryRow({ ...interrupted, ...facts });
        assert.equal(row.action, action);
        assert.equal(row.attempt, attempt);
      });
    }

    it('every row is reachable and says when it applies', () => {
      const reached = new Set(cases.map(([, facts]) => recoveryRow({ ...interrupted, ...facts })));
      assert.equal(reached.size, RECOVERY_TABLE.length);
      for (const row of RECOVERY_TABLE) assert.ok(row.when.length > 10, 'each row says when it applies');
    });
  });

  it('ARCHITECTURE.md and docs/lifecycle.md show the recovery table as the code has it, row by row and in order', () => {
    const repo = resolve(__dirname, '../../../../..');
    const architecture = readFileSync(join(repo, 'ARCHITECTURE.md'), 'utf8');
    const rows = [...architecture.matchAll(/^\| ([^|]+) \| `([a-z-]+)` \| (kept|given back) \|$/gm)].map((m) => [m[1], m[2], m[3]]);
    assert.deepEqual(
      rows,
      RECOVERY_TABLE.map((r) => [r.when, r.action, r.attempt]),
    );
    const userDoc = readFileSync(join(repo, 'docs', 'lifecycle.md'), 'utf8');
    const whens = [...userDoc.matchAll(/^\| ([^|]+) \| [^|]+ \| (kept|given back) \|/gm)].map((m) => [m[1], m[2]]);
    assert.deepEqual(
      whens,
      RECOVERY_TABLE.map((r) => [r.when, r.attempt]),
    );
  });

  describe('the fence', () => {
    const running = (extra: Record<string, unknown> = {}) =>
      taskFile([task('a', { status: 'in_progress', agent_id: 'agent_1', claim_generation: 2, ...extra })]);

    it("holds while the task's record names the attempt: same agent, same claim (when the attempt has one)", () => {
      const file = running();
      assert.equal(holdsFence(file.tasks[0], { taskId: 'a', agentId: 'agent_1' }), true);
      assert.equal(holdsFence(file.tasks[0], { taskId: 'a', agentId: 'agent_1', generation: 2 }), true);
    });

    it('is lost to another agent, another claim, or an end of the task', () => {
      assert.equal(holdsFence(running().tasks[0], { taskId: 'a', agentId: 'agent_2' }), false);
      assert.equal(holdsFence(running().tasks[0], { taskId: 'a', agentId: 'agent_1', generation: 1 }), false);
      assert.equal(holdsFence(running({ status: 'failed' }).tasks[0], { taskId: 'a', agentId: 'agent_1' }), false);
      assert.equal(holdsFence(undefined, { taskId: 'a', agentId: 'agent_1' }), false);
    });

    it('assertFence refuses a stale attempt with StaleAttemptError naming who holds the task now', () => {
      const file = running({ claimed_by: 'w2' });
      assert.throws(
        () => assertFence(file, { taskId: 'a', agentId: 'agent_0', generation: 1 }),
        (err: unknown) =>
          err instanceof StaleAttemptError &&
          /the attempt of agent_0 on a is no longer the task's \(it is in progress, attempt of agent_1 claimed by w2\)/.test(err.message),
      );
      assert.doesNotThrow(() => assertFence(file, { taskId: 'a', agentId: 'agent_1', generation: 2 }));
    });
  });

  describe("the worktree's owner mark", () => {
    it('names the attempt that made the worktree its own; another attempt may not remove it', () => {
      const root = makeRepo();
      const wt = join(tempDir(), 'a');
      git(root, 'worktree', 'add', '-q', '-b', 'harness-a', wt, 'HEAD');
      assert.equal(worktreeOwner(wt), undefined);
      assert.equal(
        mayRemoveWorktree(wt, { taskId: 'a', agentId: 'agent_1' }),
        true,
        'an unmarked worktree (made before marks) is removable',
      );
      markWorktreeOwner(wt, { taskId: 'a', agentId: 'agent_2', generation: 3 });
      assert.deepEqual(worktreeOwner(wt), { agentId: 'agent_2', generation: 3 });
      assert.equal(mayRemoveWorktree(wt, { taskId: 'a', agentId: 'agent_2', generation: 3 }), true);
      assert.equal(mayRemoveWorktree(wt, { taskId: 'a', agentId: 'agent_1' }), false);
      assert.equal(
        mayRemoveWorktree(wt, { taskId: 'a', agentId: 'agent_2', generation: 2 }),
        false,
        'the same agent id under an older claim',
      );
      // The mark lives in git's admin folder for the worktree, not among the task's files.
      assert.equal(git(wt, 'status', '--porcelain'), '');
    });
  });
});
