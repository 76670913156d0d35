// The pool pass in a task's completion: the write that records a task completed also claims the
// next batch (one write of the task file per task, not two; the loop reads the file no more),
// and a stop that comes before the loop dispatches that claim undoes it. In process (the Controller itself), on real repositories,
// each write of harness-tasks.json read back as it lands.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { Controller } from '../../../src/core/controller/controller';
import type { RunOutcome, TaskEvent } from '../../../src/core/controller/types';
import { Emitter } from '../../../src/core/events';
import { attachJournal } from '../../../src/core/journal/attach';
import { StatePaths } from '../../../src/core/statePaths';
import { StateStore } from '../../../src/core/taskFile/store';
import { journalEntries } from '../journal/support';
import { agentCmd, editTaskFile, harness, readLog, taskById } from './support';

type Statuses = Record<string, string>;

/** Every write of the task file during `body`, as the statuses it left on disk, and how many transactions it took. */
async function watchWrites<T>(root: string, body: () => Promise<T>): Promise<{ result: T; writes: Statuses[]; transactions: number }> {
  const proto = StateStore.prototype as unknown as { write: (...args: unknown[]) => void; transact: (...args: unknown[]) => unknown };
  const { write, transact } = proto;
  const writes: Statuses[] = [];
  let transactions = 0;
  proto.write = function (this: unknown, ...args: unknown[]) {
    write.apply(this, args);
    const file = JSON.parse(readFileSync(join(root, 'harness-tasks.json'), 'utf8')) as { tasks: Array<{ id: string; status: string }> };
    writes.push(Object.fromEntries(file.tasks.map((t) => [t.id, t.status])));
  };
  proto.transact = function (this: unknown, ...args: unknown[]) {
    transactions++;
    return transact.apply(this, args);
  };
  try {
    return { result: await body(), writes, transactions };
  } finally {
    Object.assign(proto, { write, transact });
  }
}

function controllerFor(root: string): Controller {
  return new Controller({ paths: new StatePaths(root), settings: { cliAgent: agentCmd('writes-done.sh'), maxParallel: 1, env: {} } });
}

describe('controller: the pool pass in a completion', function () {
  this.timeout(120_000);

  it('records a task completed and claims the next one in the same write: a chain of four writes the file once per task', async () => {
    const root = harness({
      tasks: [{ id: 'a' }, { id: 'b', dependsOn: ['a'] }, { id: 'c', dependsOn: ['b'] }, { id: 'd', dependsOn: ['c'] }],
    });
    const watched = await watchWrites(root, () => controllerFor(root).run());
    const { result, writes } = watched;
    assert.equal(result.exitCode, 0, result.message);
    const shown = writes.map((w) => JSON.stringify(w)).join('\n');
    // Each completion's write shows the next task claimed already.
    for (const [done, next] of [
      ['a', 'b'],
      ['b', 'c'],
      ['c', 'd'],
    ]) {
      const first = writes.findIndex((w) => w[done] === 'completed');
      assert.ok(first >= 0, `${done} completed\n${shown}`);
      assert.equal(writes[first]![next], 'in_progress', `the write that completes ${done} claims ${next}\n${shown}`);
    }
    // The first claim, one write per task, and the session's end; and no pass of the loop's
    // own reads the file again when it wakes for the end of a task whose completion ran one.
    assert.equal(writes.length, 4 + 2, shown);
    assert.equal(watched.transactions, 4 + 2, 'transactions');
    const log = readLog(root);
    for (const id of ['a', 'b', 'c', 'd']) assert.ok(log.some((l) => l.includes(`Completed [${id}]`)));
    // The log still tells it in order: a task's Completed line before the next BATCH.
    const completedA = log.findIndex((l) => l.includes('Completed [a]'));
    const batchB = log.findIndex((l) => /BATCH dispatching 1 task: \[b\]/.test(l));
    assert.ok(completedA >= 0 && batchB > completedA, log.join('\n'));
  });

  it('a stop after a completion claimed the next task, before it was dispatched: the claim is undone, nothing charged', async () => {
    const root = harness({ tasks: [{ id: 'a' }, { id: 'b', dependsOn: ['a'] }] });
    const controller = controllerFor(root);
    // Fired inside the completion, once its write (which claimed b) is done, before the loop wakes.
    controller.onDidChangeTask((e) => e.kind === 'completed' && e.taskId === 'a' && controller.stop());
    const { result, writes } = await watchWrites(root, () => controller.run());
    assert.equal(taskById(root, 'a').status, 'completed');
    assert.ok(
      writes.some((w) => w.a === 'completed' && w.b === 'in_progress'),
      `b was claimed with a's completion: ${JSON.stringify(writes)}`,
    );
    const b = taskById(root, 'b');
    assert.equal(b.status, 'pending', JSON.stringify(b));
    assert.equal(b.attempts, 0, 'the undone claim is not charged');
    assert.equal(b.agent_id ?? null, null);
    assert.ok(!readLog(root).some((l) => l.includes('[b]')), readLog(root).join('\n'));
    assert.equal(result.reason, 'stopped');
  });

  it("names the task its pass found next, first in the pool's order among those it did not start; the journal's entry shows it", async () => {
    // a goes first (d waits for it); then b, c, d in the order of their ids.
    const root = harness({ tasks: [{ id: 'a' }, { id: 'b' }, { id: 'c' }, { id: 'd', dependsOn: ['a'] }] });
    const controller = controllerFor(root);
    const named: Array<[string, string | null | undefined]> = [];
    controller.onDidChangeTask((e) => e.kind === 'completed' && named.push([e.taskId, e.next]));
    const journal = attachJournal(controller, new StatePaths(root));
    const result = await journal.track(controller.run());
    journal.dispose();
    assert.equal(result.exitCode, 0, result.message);
    // Each completion's pass claimed the task after it and names the one after that.
    assert.deepEqual(named, [
      ['a', 'c'],
      ['b', 'd'],
      ['c', null],
      ['d', null],
    ]);
    const completed = journalEntries(root).filter((e) => e.type === 'task_completed');
    assert.deepEqual(
      completed.map((e) => [e.task_id, e.next_task]),
      [
        ['a', 'c'],
        ['b', 'd'],
        ['c', undefined],
        ['d', undefined],
      ],
    );
  });

  it('the journal takes the next task from the completion, not from a pass of its own', async () => {
    // x completed; y would come first in a pass over the file as it is now.
    const root = harness({ tasks: [{ id: 'x' }, { id: 'y' }, { id: 'z' }] });
    editTaskFile(root, (file) => (file.tasks[0].status = 'completed'));
    const events = new Emitter<TaskEvent>();
    const journal = attachJournal({ onDidChangeTask: events.event }, new StatePaths(root));
    events.fire({ taskId: 'x', kind: 'completed', next: 'z' });
    events.fire({ taskId: 'x', kind: 'completed', next: null });
    events.fire({ taskId: 'x', kind: 'completed' });
    await journal.track(Promise.resolve({ exitCode: 0, reason: 'all-completed', message: '', session: 1 } as RunOutcome));
    journal.dispose();
    const completed = journalEntries(root).filter((e) => e.type === 'task_completed');
    assert.deepEqual(
      completed.map((e) => e.next_task),
      ['z', undefined, 'y'],
    );
  });
});
