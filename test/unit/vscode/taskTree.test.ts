// The Tasks view's shape as plain data: groups in order, the dependency tree with its roots and
// cycles, paging, and the path a reveal follows.
import assert from 'node:assert/strict';

import type { TaskState } from '../../../src/core/tasks/dag';
import {
  dependencyIndex,
  groupByState,
  limitShowing,
  page,
  PAGE_SIZE,
  pathTo,
  STATE_ORDER,
  type TaskLike,
} from '../../../src/vscode/views/taskTree';

const t = (id: string, state: TaskState, depends_on: string[] = []): TaskLike => ({ id, state, depends_on });

describe('tasks view shape', () => {
  it('groups by state in the view order, ids in natural order, empty states left out', () => {
    const groups = groupByState([t('task-10', 'ready'), t('task-9', 'ready'), t('a', 'completed'), t('b', 'running')]);
    assert.deepEqual([...groups.keys()], ['running', 'ready', 'completed']);
    assert.deepEqual(groups.get('ready'), ['task-9', 'task-10']);
    assert.equal(new Set(STATE_ORDER).size, 11);
  });

  it('shows the tasks that need a person (an answer, a review) after what moves, before what waits its turn', () => {
    const groups = groupByState([t('r', 'ready'), t('v', 'awaiting_review'), t('q', 'awaiting_answer'), t('b', 'running')]);
    assert.deepEqual([...groups.keys()], ['running', 'awaiting_answer', 'awaiting_review', 'ready']);
  });

  it('puts each task under every task it depends on; roots have no known dependency', () => {
    const idx = dependencyIndex([t('a', 'completed'), t('b', 'ready', ['a']), t('c', 'ready', ['a', 'b']), t('d', 'ready', ['gone'])]);
    assert.deepEqual(idx.roots, ['a', 'd']);
    assert.deepEqual(idx.dependents.get('a'), ['b', 'c']);
    assert.deepEqual(idx.dependents.get('b'), ['c']);
  });

  it('gives the join of a diamond one home, its first dependency, and a reveal goes there', () => {
    // a → b, a → c, b → d, c → d: d joins b and c.
    const idx = dependencyIndex([t('a', 'completed'), t('b', 'ready', ['a']), t('c', 'ready', ['a']), t('d', 'waiting', ['c', 'b'])]);
    assert.equal(idx.home.get('d'), 'b');
    assert.deepEqual(idx.dependents.get('c'), ['d'], 'c still lists d: its row there points to b');
    assert.deepEqual(pathTo(idx, 'd'), ['a', 'b', 'd']);
    assert.equal(idx.home.get('a'), undefined);
  });

  it('still shows tasks that only a cycle reaches, one of them as a root', () => {
    const idx = dependencyIndex([t('a', 'blocked', ['b']), t('b', 'blocked', ['a']), t('c', 'waiting', ['b']), t('r', 'ready')]);
    assert.deepEqual(idx.roots, ['r', 'a']);
    assert.deepEqual(pathTo(idx, 'c'), ['a', 'b', 'c']);
    const self = dependencyIndex([t('s', 'blocked', ['s'])]);
    assert.deepEqual(self.roots, ['s']);
  });

  it('finds a shortest path from a root for a reveal', () => {
    const idx = dependencyIndex([t('a', 'completed'), t('b', 'ready', ['a']), t('c', 'ready', ['b']), t('d', 'ready', ['a', 'c'])]);
    assert.deepEqual(pathTo(idx, 'd'), ['a', 'd']);
    assert.equal(pathTo(idx, 'nope'), undefined);
  });

  it('pages long lists and grows the page to reach an item', () => {
    const ids = Array.from({ length: PAGE_SIZE * 2 + 5 }, (_, i) => `t${i}`);
    assert.deepEqual(page(ids, PAGE_SIZE).hidden, PAGE_SIZE + 5);
    assert.equal(page(ids, PAGE_SIZE).shown.length, PAGE_SIZE);
    assert.equal(page(ids.slice(0, 3), PAGE_SIZE).hidden, 0);
    assert.equal(limitShowing(5, PAGE_SIZE), PAGE_SIZE);
    assert.equal(limitShowing(PAGE_SIZE, PAGE_SIZE), PAGE_SIZE * 2);
    assert.equal(limitShowing(PAGE_SIZE * 2 + 4, PAGE_SIZE), PAGE_SIZE * 3);
  });

  it('builds the dependency index of 10,000 tasks (nothing quadratic: mocha times it out otherwise)', () => {
    const tasks = Array.from({ length: 10_000 }, (_, i) =>
      t(`task-${i}`, 'ready', i ? [`task-${Math.floor(i / 2)}`, `task-${i - 1}`] : []),
    );
    const idx = dependencyIndex(tasks);
    assert.deepEqual(idx.roots, ['task-0']);
    const path = pathTo(idx, 'task-9999');
    assert.equal(path?.[0], 'task-0');
    assert.equal(path?.at(-1), 'task-9999');
  });
});
