// Claims of one task share its worktree's path, so a removal acts only for the attempt that owns
// the worktree there (its owner mark), and decides that inside git's worktree lock: a worktree
// that another attempt made its own — even between the check and the removal — is left alone.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { markWorktreeOwner } from '../../../src/core/attempt/lifecycle';
import { createWorktree } from '../../../src/core/controller/taskRun';
import { acquireLock } from '../../../src/core/lock';
import { testSession } from '../helpers/session';
import { git, harness, tempDir } from './support';

describe('controller: a worktree removal is fenced by its owner mark', function () {
  this.timeout(60_000);

  it("a stale attempt's removal leaves the worktree another attempt marked, and says so; the owner's removal goes ahead", async () => {
    const root = harness({ tasks: [{ id: 'a' }] });
    const { s } = await testSession(root, { worktreeDir: tempDir() });
    const wt = s.worktreePath('a');
    const stale = { taskId: 'a', agentId: 'agent_old', generation: 1 };
    const owner = { taskId: 'a', agentId: 'agent_new', generation: 2 };
    await createWorktree(s, 'a', wt, 'harness-a', s.head, owner);

    await s.removeWorktree('a', stale);
    assert.ok(existsSync(join(wt, '.git')), "the stale attempt removed the owner's worktree");
    assert.match(
      readFileSync(s.paths.progress, 'utf8'),
      /WARN \[a\] worktree left alone: it belongs to the attempt of agent_new now, not to agent_old/,
    );

    await s.removeWorktree('a', owner);
    assert.ok(!existsSync(wt));
    assert.equal(git(root, 'branch', '--list', 'harness-a'), '');
  });

  it('decides inside the worktree lock: a mark that changes while the removal waits for the lock is the one obeyed', async () => {
    const root = harness({ tasks: [{ id: 'a' }] });
    const { s } = await testSession(root, { worktreeDir: tempDir() });
    const wt = s.worktreePath('a');
    const first = { taskId: 'a', agentId: 'agent_first' };
    await createWorktree(s, 'a', wt, 'harness-a', s.head, first);
    // Another process holds git's worktree lock (as while it makes a worktree there).
    const commonDir = git(root, 'rev-parse', '--path-format=absolute', '--git-common-dir');
    const lock = await acquireLock(join(commonDir, 'launchpad-worktrees.lock'), 'another worker', 1000);
    const removal = s.removeWorktree('a', first);
    // Until it lets go, the removal waits; meanwhile the worktree becomes another attempt's.
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(existsSync(join(wt, '.git')), 'removed while the lock was held');
    markWorktreeOwner(wt, { taskId: 'a', agentId: 'agent_second' });
    lock.release();
    await removal;
    assert.ok(existsSync(join(wt, '.git')), "the removal went by the mark it read before the lock, removing the second attempt's worktree");
  });
});
