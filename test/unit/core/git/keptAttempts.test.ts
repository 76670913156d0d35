// Keeping attempts under refs/launchpad/attempts/ and the git operations it rests on, on real
// repositories: a snapshot of uncommitted work that touches nothing, keeping a branch only when it
// holds commits of its own (once), suffixes for a number used twice, stale locks, pruning.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Git } from '../../../../src/core/git/git';
import {
  keepAttempt,
  keptAttemptRef,
  keptAttemptsIn,
  keptByTask,
  listKeptAttempts,
  pruneKeptAttempts,
} from '../../../../src/core/git/keptAttempts';
import { InputError } from '../../../../src/core/inputError';
import { git, makeRepo, writeFiles } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/tmp';

async function repoWithWorktree() {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const g = new Git(repo);
  const wt = join(tempDir('launchpad-wt-'), 't1');
  await g.addWorktree(wt, 'harness-t1', 'main');
  return { repo, g, wt };
}

function commitIn(dir: string, files: Record<string, string>, message: string): string {
  writeFiles(dir, files);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', message);
  return git(dir, 'rev-parse', 'HEAD');
}

describe('core/git/keptAttempts', function () {
  this.timeout(30_000);

  it('snapshotChanges: every uncommitted change (untracked, staged, modified) as a commit on HEAD; worktree, index and branch untouched', async () => {
    const { g, wt } = await repoWithWorktree();
    const head = git(wt, 'rev-parse', 'HEAD');
    assert.equal(await g.snapshotChanges(wt, 'nothing'), undefined, 'a clean worktree has nothing to keep');
    writeFiles(wt, { 'new/untracked.txt': 'new\n', 'staged.txt': 'staged\n' });
    git(wt, 'add', 'staged.txt');
    writeFiles(wt, { 'a.txt': 'a, modified\n' });
    const status = git(wt, 'status', '--porcelain');
    const snap = (await g.snapshotChanges(wt, '[launchpad] snapshot'))!;
    assert.match(snap, /^[0-9a-f]{40}$/);
    assert.equal(git(wt, 'rev-parse', `${snap}^`), head);
    assert.equal(git(wt, 'show', `${snap}:new/untracked.txt`), 'new');
    assert.equal(git(wt, 'show', `${snap}:staged.txt`), 'staged');
    assert.equal(git(wt, 'show', `${snap}:a.txt`), 'a, modified');
    assert.equal(git(wt, 'log', '-1', '--format=%s', snap), '[launchpad] snapshot');
    assert.equal(git(wt, 'status', '--porcelain'), status, 'the worktree or its index changed');
    assert.equal(git(wt, 'rev-parse', 'HEAD'), head);
  });

  it('keepAttempt: nothing for a tip already in the base; the tip once; a second number-clash gets .2; a contained commit reuses the ref', async () => {
    const { repo, g, wt } = await repoWithWorktree();
    assert.equal(await keepAttempt(g, 't1', 1, git(wt, 'rev-parse', 'HEAD'), 'refs/heads/main'), undefined, 'no commits of its own');
    const first = commitIn(wt, { 'b.txt': 'b\n' }, '[t1] one');
    assert.equal(await keepAttempt(g, 't1', 1, first, 'refs/heads/main'), 'refs/launchpad/attempts/t1/1');
    assert.equal(await keepAttempt(g, 't1', 1, first, 'refs/heads/main'), 'refs/launchpad/attempts/t1/1', 'kept twice');
    // The same number again (after a retry), other work: beside it.
    git(wt, 'reset', '-q', '--hard', 'main');
    const other = commitIn(wt, { 'c.txt': 'c\n' }, '[t1] other');
    assert.equal(await keepAttempt(g, 't1', 1, other, 'refs/heads/main'), 'refs/launchpad/attempts/t1/1.2');
    // A snapshot on top of a kept tip is a new ref; the tip alone is then already kept.
    writeFiles(wt, { 'd.txt': 'd\n' });
    const snap = (await g.snapshotChanges(wt, 'snap'))!;
    assert.equal(await keepAttempt(g, 't1', 2, snap, 'refs/heads/main', { snapshot: true }), 'refs/launchpad/attempts/t1/2');
    assert.equal(await keepAttempt(g, 't1', 3, other, 'refs/heads/main'), 'refs/launchpad/attempts/t1/1.2');
    // The same uncommitted work snapshotted again (a second recovery): the first snapshot's ref.
    const again = (await g.snapshotChanges(wt, 'snap, later'))!;
    assert.notEqual(again, snap);
    assert.equal(await keepAttempt(g, 't1', 3, again, 'refs/heads/main', { snapshot: true }), 'refs/launchpad/attempts/t1/2');
    // An agent's commit equal in content to a kept one is still a commit of its own: kept.
    git(wt, 'reset', '-q', '--hard', 'main');
    const same = commitIn(wt, { 'c.txt': 'c\n' }, '[t1] other, again');
    assert.equal(await keepAttempt(g, 't1', 1, same, 'refs/heads/main'), 'refs/launchpad/attempts/t1/1.3');
    // Merged into the base: nothing to keep.
    git(repo, 'merge', '-q', '--no-ff', '-m', 'Merge [t2] x', first);
    assert.equal(await keepAttempt(g, 't2', 1, first, 'refs/heads/main'), undefined);

    const kept = await listKeptAttempts(g);
    assert.deepEqual(
      kept.map((k) => [k.ref, k.taskId, k.attempt, k.commit]),
      [
        ['refs/launchpad/attempts/t1/1', 't1', '1', first],
        ['refs/launchpad/attempts/t1/1.2', 't1', '1.2', other],
        ['refs/launchpad/attempts/t1/1.3', 't1', '1.3', same],
        ['refs/launchpad/attempts/t1/2', 't1', '2', snap],
      ],
    );
    assert.match(kept[0]!.committedAt, /^\d{4}-\d\d-\d\dT/);
    assert.deepEqual([...keptByTask(kept).keys()], ['t1']);
    assert.deepEqual(await keptAttemptsIn(tempDir('launchpad-nogit-')), []);
    assert.equal(keptAttemptRef('task-001', 3, 2), 'refs/launchpad/attempts/task-001/3.2');
  });

  it('removeStaleLocks: index.lock and HEAD.lock of the worktree and the branch lock, and only those', async () => {
    const { g, wt } = await repoWithWorktree();
    const path = (name: string) => git(wt, 'rev-parse', '--path-format=absolute', '--git-path', name);
    for (const name of ['index.lock', 'HEAD.lock', 'refs/heads/harness-t1.lock']) writeFileSync(path(name), '');
    writeFileSync(path('refs/heads/other.lock'), '');
    assert.deepEqual(await g.removeStaleLocks(wt, 'harness-t1'), ['index.lock', 'HEAD.lock', 'refs/heads/harness-t1.lock']);
    assert.ok(!existsSync(path('index.lock')));
    assert.ok(existsSync(path('refs/heads/other.lock')), 'a lock of another branch was removed');
    assert.deepEqual(await g.removeStaleLocks(wt, 'harness-t1'), []);
    commitIn(wt, { 'x.txt': 'x\n' }, '[t1] after the locks');
  });

  it('removeStaleLocks: a commit killed before it moved the branch is finished from the branch lock, not left unreachable', async () => {
    const { g, wt } = await repoWithWorktree();
    const path = (name: string) => git(wt, 'rev-parse', '--path-format=absolute', '--git-path', name);
    const before = git(wt, 'rev-parse', 'HEAD').trim();
    // What `git commit` had done when it was killed: the file staged, the commit written, the
    // branch's lock holding its new value.
    writeFileSync(join(wt, 'half.txt'), 'half\n');
    git(wt, 'add', 'half.txt');
    const tree = git(wt, 'write-tree').trim();
    const commit = git(wt, 'commit-tree', tree, '-p', before, '-m', '[t1] half').trim();
    writeFileSync(path('refs/heads/harness-t1.lock'), `${commit}\n`);
    writeFileSync(path('index.lock'), '');
    assert.deepEqual(await g.removeStaleLocks(wt, 'harness-t1'), [
      'index.lock',
      `refs/heads/harness-t1.lock (its commit ${commit.slice(0, 7)} completed)`,
    ]);
    assert.equal(git(wt, 'rev-parse', 'harness-t1').trim(), commit);
    assert.equal(git(wt, 'status', '--porcelain'), '', 'the tree and index agree with the finished commit');
    // A lock whose value is not a descendant of the branch (or no object at all) is only removed.
    writeFileSync(path('refs/heads/harness-t1.lock'), `${before}\n`);
    assert.deepEqual(await g.removeStaleLocks(wt, 'harness-t1'), ['refs/heads/harness-t1.lock']);
    assert.equal(git(wt, 'rev-parse', 'harness-t1').trim(), commit);
    writeFileSync(path('refs/heads/harness-t1.lock'), `${'f'.repeat(40)}\n`);
    assert.deepEqual(await g.removeStaleLocks(wt, 'harness-t1'), ['refs/heads/harness-t1.lock']);
  });

  it('pruneKeptAttempts: completed tasks by default, the named ones otherwise, older than a cutoff, dry run; an unknown id changes nothing', async () => {
    const { g, wt } = await repoWithWorktree();
    const keep = async (task: string, n: number) => {
      git(wt, 'reset', '-q', '--hard', 'main');
      const c = commitIn(wt, { [`${task}-${n}.txt`]: 'x\n' }, `[${task}] work`);
      return (await keepAttempt(g, task, n, c, 'refs/heads/main'))!;
    };
    await keep('done', 1);
    await keep('done', 2);
    await keep('failed', 1);
    await keep('gone', 1);
    const tasks = [
      { id: 'done', status: 'completed' as const },
      { id: 'failed', status: 'failed' as const },
    ];
    const refs = async () => (await listKeptAttempts(g)).map((k) => k.ref);
    const all = await refs();

    assert.deepEqual(
      (await pruneKeptAttempts(g, tasks, { dryRun: true })).map((k) => k.ref),
      ['refs/launchpad/attempts/done/1', 'refs/launchpad/attempts/done/2'],
    );
    assert.deepEqual(await refs(), all, 'a dry run deleted something');
    await assert.rejects(
      pruneKeptAttempts(g, tasks, { ids: ['failed', 'nope'] }),
      (err: Error) => err instanceof InputError && /no task "nope"/.test(err.message),
    );
    assert.deepEqual(await refs(), all);
    // Nothing is older than a day yet; everything is older than a day from tomorrow.
    assert.deepEqual(await pruneKeptAttempts(g, tasks, { olderThanDays: 1 }), []);
    const tomorrow = new Date(Date.now() + 2 * 86_400_000);
    assert.deepEqual(
      (await pruneKeptAttempts(g, tasks, { olderThanDays: 1, now: tomorrow })).map((k) => k.ref),
      ['refs/launchpad/attempts/done/1', 'refs/launchpad/attempts/done/2'],
    );
    assert.deepEqual(await refs(), ['refs/launchpad/attempts/failed/1', 'refs/launchpad/attempts/gone/1']);
    // Named: any state, and a task no longer in the file that still has kept attempts.
    assert.deepEqual(
      (await pruneKeptAttempts(g, tasks, { ids: ['gone', 'failed'] })).map((k) => k.ref),
      ['refs/launchpad/attempts/failed/1', 'refs/launchpad/attempts/gone/1'],
    );
    assert.deepEqual(await refs(), []);
  });
});
