import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

import { branchFor, compareIds, isValidTaskId, TASK_ID_PATTERN, taskIdOfBranch } from '../../../src/core/ids';
import { rng } from './fixtures';

const VALID = ['task-001', 'a', 'Z', '0', '9lives', 'A.b_c-9', 'task.v2', 'a-', 'a_', 'x.lockx', 'a.lock.b', 'a'.repeat(64)];
const INVALID = [
  '',
  '-a',
  '.a',
  '_a',
  'a'.repeat(65),
  'a..b',
  'a.',
  'task.lock',
  'a/b',
  'a b',
  ' a',
  'a\n',
  'a~b',
  'a^b',
  'a:b',
  'a?b',
  'a*b',
  'a[b',
  'a\\b',
  'a@{b}',
  '$(x)',
  'task-$(touch x)',
  'task-`id`',
  'a;b',
  'tâche',
  'a\u0000',
];

function gitAcceptsBranch(name: string): boolean {
  return spawnSync('git', ['check-ref-format', '--branch', name], { encoding: 'utf8' }).status === 0;
}

describe('core/ids', () => {
  describe('isValidTaskId', () => {
    for (const id of VALID) {
      it(`accepts ${JSON.stringify(id.length > 20 ? `${id.slice(0, 8)}…(${id.length})` : id)}`, () => {
        assert.equal(isValidTaskId(id), true);
      });
    }
    for (const id of INVALID) {
      it(`rejects ${JSON.stringify(id.length > 20 ? `${id.slice(0, 8)}…(${id.length})` : id)}`, () => {
        assert.equal(isValidTaskId(id), false);
      });
    }

    it('keeps the documented pattern: every accepted id also matches ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$', () => {
      const spec = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
      for (const id of [...VALID, ...INVALID]) if (isValidTaskId(id)) assert.match(id, spec);
      assert.equal(TASK_ID_PATTERN.test('task-001'), true);
    });

    it('every accepted id makes a branch name git accepts, and the git-ref exclusions are exactly what git refuses', () => {
      // Random ids over the id alphabet, biased towards the characters git cares about.
      const alphabet = 'ab1.._-.lock';
      const rand = rng(7);
      const ids = new Set<string>(['a.lock', 'a..', 'ab.', 'a.b.lock', 'x-.lock', 'a.-b']);
      while (ids.size < 60) {
        let id = 'abc1'[rand(4)]!;
        const len = rand(8);
        for (let i = 0; i < len; i++) id += alphabet[rand(alphabet.length)]!;
        ids.add(id);
      }
      for (const id of ids) {
        const specOk = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(id);
        if (!specOk) continue;
        assert.equal(isValidTaskId(id), gitAcceptsBranch(branchFor(id)), `id ${JSON.stringify(id)}`);
      }
    });
  });

  describe('branch names', () => {
    it('branchFor prefixes harness-', () => {
      assert.equal(branchFor('task-001'), 'harness-task-001');
    });

    it('taskIdOfBranch reverses branchFor, with or without refs/heads/', () => {
      assert.equal(taskIdOfBranch('harness-task-001'), 'task-001');
      assert.equal(taskIdOfBranch('refs/heads/harness-task-001'), 'task-001');
      assert.equal(taskIdOfBranch(branchFor('a.b_c-9')), 'a.b_c-9');
    });

    it('taskIdOfBranch says undefined for other branches and invalid ids', () => {
      assert.equal(taskIdOfBranch('main'), undefined);
      assert.equal(taskIdOfBranch('harness-'), undefined);
      assert.equal(taskIdOfBranch('harness-a..b'), undefined);
      assert.equal(taskIdOfBranch('feature/harness-task-001'), undefined);
      assert.equal(taskIdOfBranch('refs/remotes/origin/harness-task-001'), undefined);
    });
  });

  describe('compareIds', () => {
    it('orders digit runs by value: task-2 before task-10', () => {
      const ids = ['task-10', 'task-9', 'task-001', 'task-2', 'task-100', 'task-011'];
      assert.deepEqual([...ids].sort(compareIds), ['task-001', 'task-2', 'task-9', 'task-10', 'task-011', 'task-100']);
    });

    it('orders prefixes and letters deterministically, without locale', () => {
      assert.deepEqual(['b', 'a10', 'a2', 'a', 'a1', 'B', 'a-1'].sort(compareIds), ['B', 'a', 'a-1', 'a1', 'a2', 'a10', 'b']);
    });

    it('compares numbers longer than 2^53 exactly', () => {
      assert.ok(compareIds('t-9007199254740993', 't-9007199254740992') > 0);
      assert.ok(compareIds('t-99999999999999999999', 't-100000000000000000000') < 0);
    });

    it('is 0 only for equal ids; zero padding is a deterministic tie-break', () => {
      assert.equal(compareIds('task-7', 'task-7'), 0);
      assert.notEqual(compareIds('task-07', 'task-7'), 0);
      assert.ok(Math.sign(compareIds('task-07', 'task-7')) === -Math.sign(compareIds('task-7', 'task-07')));
    });

    it('is a consistent total order (antisymmetric and transitive) over random ids', () => {
      const alphabet = 'ab01239-.';
      const rand = rng(42);
      const ids: string[] = [];
      for (let k = 0; k < 250; k++) {
        let id = '';
        const len = 1 + rand(6);
        for (let i = 0; i < len; i++) id += alphabet[rand(alphabet.length)]!;
        ids.push(id);
      }
      for (const a of ids)
        for (const b of ids) {
          assert.ok(Math.sign(compareIds(a, b)) === -Math.sign(compareIds(b, a)), `${a} vs ${b}`);
          if (compareIds(a, b) === 0) assert.equal(a, b);
        }
      const sorted = [...ids].sort(compareIds);
      for (let i = 0; i < sorted.length; i++) {
        for (let j = i + 1; j < sorted.length; j++) {
          assert.ok(compareIds(sorted[i]!, sorted[j]!) <= 0, `${sorted[i]} should not come after ${sorted[j]}`);
        }
      }
    });
  });
});
