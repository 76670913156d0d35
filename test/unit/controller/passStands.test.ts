// passStands: when the pass a task's completion ran may stand for the loop's own, so the loop
// does not read the task file again; each condition that makes it stale, alone.
import assert from 'node:assert/strict';

import { passStands, type PoolPass, recordPass } from '../../../src/core/controller/poolPass';
import type { Session } from '../../../src/core/controller/session';
import type { Task } from '../../../src/core/taskFile/schema';

const task = (id: string) => ({ id }) as Task;
const pool = (batch: string[], retryAt?: number): PoolPass => ({
  overCost: [],
  failures: [],
  eligible: 0,
  retryAt,
  missing: [],
  allCompleted: false,
  elsewhere: 0,
  heldBack: [],
  noAgent: false,
  batch: batch.map(task),
  claims: [],
  next: null,
});
/** A session whose latest transaction is `latest`. */
const session = (latest: number) => ({ isLatestTransaction: (mark: number) => mark === latest }) as unknown as Session;
const input = (running: string[]) => ({ running: running.map(task), budget: 10, hold: false, durations: new Map() });

describe('controller: passStands', () => {
  // c completed and its pass claimed d, beside a and b.
  const pass = recordPass(pool(['d']), 7, input(['a', 'b']), 'c');

  it('stands while nothing changed: the completed task still ending or gone, its claim running', () => {
    assert.equal(passStands(session(7), pass, ['a', 'b', 'c', 'd']), true);
    assert.equal(passStands(session(7), pass, ['a', 'b', 'd']), true);
  });

  it('not after another transaction was asked for', () => {
    assert.equal(passStands(session(8), pass, ['a', 'b', 'd']), false);
  });

  it('not when a task it counted ended without one (a task removed from the file while it ran)', () => {
    assert.equal(passStands(session(7), pass, ['a', 'd']), false);
  });

  it('not when a task it did not count runs', () => {
    assert.equal(passStands(session(7), pass, ['a', 'b', 'd', 'e']), false);
  });

  it('not once a retry it waits for is due', () => {
    const waiting = recordPass(pool([], 1_000), 7, input(['a']), 'c');
    assert.equal(passStands(session(7), waiting, ['a'], 999), true);
    assert.equal(passStands(session(7), waiting, ['a'], 1_000), false);
  });
});
