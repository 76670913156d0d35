// The one-at-a-time rule for worktree commands, with a task's commands ahead of the worktree
// pool's background ones that are waiting.
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { Git } from '../../../../src/core/git/git';
import { oneAtATime } from '../../../../src/core/git/worktreeCommands';
import { makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/tmp';

/** A job that runs until `finish` is called, noting when it starts. */
function held(order: string[], name: string): { run: () => Promise<string>; finish: () => void; started: Promise<void> } {
  let finish!: () => void;
  let started!: () => void;
  const startedP = new Promise<void>((r) => (started = r));
  const done = new Promise<void>((r) => (finish = r));
  return {
    run: async () => {
      order.push(name);
      started();
      await done;
      return name;
    },
    finish,
    started: startedP,
  };
}

describe('core/git/worktreeCommands', () => {
  it('runs one command at a time; a waiting task command goes before waiting background ones, each kind in order', async () => {
    const order: string[] = [];
    const first = held(order, 'pool-1');
    const running = oneAtATime(first.run, true);
    await first.started;
    const jobs = [
      oneAtATime(async () => void order.push('pool-2'), true),
      oneAtATime(async () => void order.push('pool-3'), true),
      oneAtATime(async () => void order.push('task-1')),
      oneAtATime(async () => void order.push('task-2')),
    ];
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(order, ['pool-1'], 'nothing starts while a command runs');
    first.finish();
    assert.equal(await running, 'pool-1');
    await Promise.all(jobs);
    assert.deepEqual(order, ['pool-1', 'task-1', 'task-2', 'pool-2', 'pool-3']);
  });

  it('a command that fails passes its error on and the next one still runs', async () => {
    const failing = oneAtATime(async () => {
      throw new Error('git refused');
    }, true);
    const after = oneAtATime(async () => 'ran');
    await assert.rejects(failing, /git refused/);
    assert.equal(await after, 'ran');
  });

  it("Git.run: the pool's worktree add (background) waits behind a task's worktree list queued after it", async () => {
    const repo = makeRepo();
    const g = new Git(repo);
    const order: string[] = [];
    const blocker = held(order, 'running');
    const running = oneAtATime(blocker.run);
    await blocker.started;
    const slot = join(tempDir('launchpad-queue-'), 'slot');
    const added = g.addDetachedWorktree(slot, 'main', { background: true });
    const listed = g.listWorktrees();
    blocker.finish();
    await running;
    const [list] = await Promise.all([listed, added]);
    assert.equal(list.length, 1, `the list ran before the background add: ${list.map((w) => w.path).join(', ')}`);
    assert.equal((await g.listWorktrees()).length, 2);
  });
});
