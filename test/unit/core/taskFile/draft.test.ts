import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { StatePaths } from '../../../../src/core/statePaths';
import { writableTask } from '../../../../src/core/taskFile/draft';
import type { TaskFile } from '../../../../src/core/taskFile/schema';
import { StateStore } from '../../../../src/core/taskFile/store';
import { isRetryable } from '../../../../src/core/tasks/dag';
import * as tr from '../../../../src/core/tasks/transitions';
import { tempDir } from '../../helpers/tmp';
import { exhausted, rng, task, taskFile } from '../fixtures';

function newStore(): { store: StateStore; paths: StatePaths } {
  const paths = new StatePaths(tempDir('launchpad-draft-'));
  return { store: new StateStore(paths, 'launchpad test'), paths };
}

const claim = (id: string, n: number) => ({ agentId: `agent_${n}`, branch: `harness-${id}`, baseCommit: 'abc1234' });
const worker = { workerId: 'w1', leaseSeconds: 60 };
const NOW = '2025-07-01T10:00:00Z';

/** One transition of each kind the controller and a person's commands make, on task `id`. */
function transition(f: TaskFile, id: string, kind: number, n: number): void {
  const t = f.tasks.find((x) => x.id === id)!;
  switch (kind) {
    case 0:
      if (t.status === 'pending' || isRetryable(t)) tr.dispatchTask(f, id, claim(id, n));
      break;
    case 1:
      if (t.status === 'in_progress') tr.recordCheckpoint(f, id, { step: 1, total: 2, description: `step ${n}` }, NOW);
      break;
    case 2:
      tr.recordCost(f, id, { costUsd: 0.25, tokens: { input: n, output: 2 } });
      break;
    case 3:
      if (t.status === 'in_progress') tr.completeTask(f, id, NOW);
      break;
    case 4:
      if (t.status === 'in_progress') tr.failTask(f, id, { category: 'TEST_FAIL', reason: `run ${n}`, tail: 'out' }, NOW);
      break;
    case 5:
      tr.markDependencyFailures(f, NOW);
      break;
    case 6:
      if (t.status === 'failed') tr.retryTask(f, id);
      break;
    case 7:
      if (t.status === 'in_progress') tr.restartTask(f, id);
      break;
    case 8:
      tr.recordOutOfScope(f, id, n % 2 ? ['README.md'] : []);
      break;
    case 9:
      if (t.status === 'in_progress') tr.resumeTask(f, id, `agent_${n}`);
      break;
    case 10:
      if (t.status === 'in_progress') {
        const token = tr.takeOverClaim(f, id, worker, new Date(NOW))?.token;
        if (token) tr.renewLease(f, token, 60, new Date(NOW));
      }
      break;
    case 11:
      if (t.status === 'in_progress' && t.agent_id) tr.recordQueueRunner(f, id, t.agent_id, 'runner-1');
      break;
    default:
      if (t.status === 'failed') tr.unfailTask(f, id);
      break;
  }
}

describe('core/taskFile draft (a transaction that shares unchanged tasks)', () => {
  it('hands out the snapshot’s tasks frozen: a write that skips writableTask throws, and nothing is written', async () => {
    const { store, paths } = newStore();
    store.save(taskFile([task('a'), task('b')]));
    const text = readFileSync(paths.tasks, 'utf8');
    await assert.rejects(
      store.transact(
        (f) => {
          f.tasks[0]!.status = 'completed';
        },
        { sharedTasks: true },
      ),
      TypeError,
    );
    await assert.rejects(
      store.transact((f) => void f.tasks[1]!.error_log.push('[TEST_FAIL] x'), { sharedTasks: true }),
      TypeError,
    );
    assert.equal(readFileSync(paths.tasks, 'utf8'), text);
    assert.equal(store.load().file.tasks[0]!.status, 'pending');
  });

  it('writableTask puts a private copy in the draft; the snapshot and what others hold keep the state before', async () => {
    const { store } = newStore();
    store.save(taskFile([task('a'), task('b')]));
    const seen = store.peek();
    const { before, after, same } = await store.transact(
      (f) => {
        const before = f.tasks[0]!;
        const after = writableTask(f, before);
        after.status = 'in_progress';
        after.error_log.push('[TEST_FAIL] x');
        return { before, after, same: writableTask(f, after) === after && f.tasks[0] === after };
      },
      { sharedTasks: true },
    );
    assert.ok(same, 'a task already copied is not copied again');
    assert.notEqual(before, after);
    assert.equal(before.status, 'pending');
    assert.deepEqual(before.error_log, []);
    assert.equal(seen.tasks[0]!.status, 'pending', 'an earlier peek is not changed');
    assert.equal(store.peek().tasks[0]!.status, 'in_progress');
    // What a transaction returned is not the store's: changing it changes nothing there.
    after.status = 'failed';
    assert.equal(store.peek().tasks[0]!.status, 'in_progress');
    // The draft's top level and its tasks array are its own.
    await store.transact((f) => void (f.session_config.max_parallel_agents = 5), { sharedTasks: true });
    assert.equal(seen.session_config.max_parallel_agents, 3);
    await store.transact(
      (f) => {
        f.session_count = 7;
        f.tasks.push(task('c'));
      },
      { sharedTasks: true },
    );
    assert.equal(seen.tasks.length, 2);
    assert.deepEqual(
      store.load().file.tasks.map((t) => t.id),
      ['a', 'b', 'c'],
    );
    assert.equal(store.load().file.session_count, 7);
  });

  it('every transition writes the same bytes through a shared draft as through a whole copy', async () => {
    const shared = newStore();
    const copied = newStore();
    const start = taskFile([
      task('a'),
      task('b', { depends_on: ['a'] }),
      task('c', { depends_on: ['b'] }),
      task('d'),
      exhausted('e'),
      task('f', { depends_on: ['e'] }),
      task('g', { depends_on: ['f'] }),
      task('h', { depends_on: ['zz'] }),
    ]);
    shared.store.save(start);
    copied.store.save(start);
    const rand = rng(11);
    const ids = start.tasks.map((t) => t.id);
    for (let n = 0; n < 300; n++) {
      const id = ids[rand(ids.length)]!;
      const kind = rand(13);
      const mutate = (f: TaskFile) => transition(f, id, kind, n);
      const errors = await Promise.all([
        shared.store.transact(mutate, { sharedTasks: true }).then(
          () => undefined,
          (e: Error) => e.message,
        ),
        copied.store.transact(mutate).then(
          () => undefined,
          (e: Error) => e.message,
        ),
      ]);
      assert.equal(errors[0], errors[1], `transition ${kind} on ${id} (${n})`);
      assert.equal(
        readFileSync(shared.paths.tasks, 'utf8'),
        readFileSync(copied.paths.tasks, 'utf8'),
        `transition ${kind} on ${id} (${n})`,
      );
    }
    assert.deepEqual(shared.store.load().file, new StateStore(shared.paths, 'launchpad test', false).load().file);
  });
});
