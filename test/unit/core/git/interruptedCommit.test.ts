// A `git commit` killed after it created its branch's lock but before it wrote the new id into
// it, built for real: the commit object written, the branch lock and HEAD.lock empty. The
// recovery's removeStaleLocks must finish that commit, and take nothing else for it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Git } from '../../../../src/core/git/git';
import { git, makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/tmp';

async function repoWithWorktree() {
  const repo = makeRepo({ 'a.txt': 'a\n' });
  const g = new Git(repo);
  const wt = join(tempDir('launchpad-wt-'), 'harness-t1');
  await g.addWorktree(wt, 'harness-t1', 'main');
  const path = (name: string) => git(wt, 'rev-parse', '--path-format=absolute', '--git-path', name);
  /** A commit of the worktree's files as they are (through a private index), on `parent`. */
  const commitTree = (parent: string, message: string): string => {
    const index = join(tempDir('launchpad-index-'), 'index');
    const env = { ...process.env, LC_ALL: 'C', GIT_INDEX_FILE: index };
    execFileSync('git', ['add', '-A'], { cwd: wt, env });
    const tree = execFileSync('git', ['write-tree'], { cwd: wt, env, encoding: 'utf8' }).trim();
    return git(wt, 'commit-tree', tree, '-p', parent, '-m', message);
  };
  /** Sets the mtime of a loose object, `secondsAgo` before now. */
  const age = (oid: string, secondsAgo: number) => {
    const t = new Date(Date.now() - secondsAgo * 1000);
    utimesSync(path(`objects/${oid.slice(0, 2)}/${oid.slice(2)}`), t, t);
  };
  /** What the killed `git commit` left: every lock it held, the ref locks empty. */
  const killedCommitLocks = () => {
    for (const name of ['index.lock', 'HEAD.lock', 'refs/heads/harness-t1.lock']) writeFileSync(path(name), '');
  };
  return { g, wt, path, commitTree, age, killedCommitLocks };
}

describe('core/git/interruptedCommit: a commit killed before its branch lock held its id', function () {
  this.timeout(30_000);

  it('removeStaleLocks finishes it (branch, index), and not a snapshot kept under refs/launchpad/ on the same parent', async () => {
    const { g, wt, path, commitTree, age, killedCommitLocks } = await repoWithWorktree();
    const tip = git(wt, 'rev-parse', 'HEAD');
    writeFileSync(join(wt, 'a.txt'), 'changed by the agent\n');
    writeFileSync(join(wt, 'new.txt'), 'new\n');
    const commit = commitTree(tip, '[t1] the agent commit');
    age(commit, 5);
    // Newer than the agent's commit, so only the ref it is kept under tells it apart.
    writeFileSync(join(wt, 'scratch.txt'), 'snapshot only\n');
    const snapshot = commitTree(tip, '[launchpad] uncommitted work of t1 attempt 1, kept by a recovery');
    rmSync(join(wt, 'scratch.txt'));
    git(wt, 'update-ref', 'refs/launchpad/attempts/t1/1', snapshot);
    age(snapshot, 2);
    killedCommitLocks();

    assert.deepEqual(await g.removeStaleLocks(wt, 'harness-t1'), [
      'index.lock',
      'HEAD.lock',
      `refs/heads/harness-t1.lock (its commit ${commit.slice(0, 7)} completed)`,
    ]);
    assert.equal(git(wt, 'rev-parse', 'harness-t1'), commit);
    for (const name of ['index.lock', 'HEAD.lock', 'refs/heads/harness-t1.lock']) assert.ok(!existsSync(path(name)), `${name} left`);
    assert.equal(git(wt, 'diff', '--cached', '--name-only', commit), '', 'the index is the finished commit');
    assert.equal(git(wt, 'status', '--porcelain'), '', 'the files agree with the finished commit');
    assert.equal(git(wt, 'rev-parse', 'refs/launchpad/attempts/t1/1'), snapshot);
    // The worktree works again.
    writeFileSync(join(wt, 'after.txt'), 'after\n');
    git(wt, 'add', 'after.txt');
    git(wt, 'commit', '-q', '-m', '[t1] after the recovery');
    assert.equal(git(wt, 'rev-parse', 'harness-t1~1'), commit);
  });

  it('with no candidate (a snapshot under refs/launchpad/, a commit a reset dropped, one older than the window) the locks are removed and the branch stays', async () => {
    const { g, wt, path, commitTree, age, killedCommitLocks } = await repoWithWorktree();
    const tip = git(wt, 'rev-parse', 'HEAD');
    writeFileSync(join(wt, 'a.txt'), 'dropped\n');
    git(wt, 'commit', '-q', '-am', '[t1] dropped by a reset');
    const dropped = git(wt, 'rev-parse', 'HEAD');
    git(wt, 'reset', '-q', '--hard', tip);
    age(dropped, 3);
    writeFileSync(join(wt, 'a.txt'), 'old\n');
    const old = commitTree(tip, 'made long before the lock');
    age(old, 11 * 60);
    writeFileSync(join(wt, 'a.txt'), 'snapshot\n');
    const snapshot = commitTree(tip, '[launchpad] uncommitted work of t1 attempt 1, kept by a recovery');
    git(wt, 'update-ref', 'refs/launchpad/attempts/t1/1', snapshot);
    age(snapshot, 2);
    writeFileSync(join(wt, 'a.txt'), 'uncommitted\n');
    killedCommitLocks();

    assert.deepEqual(await g.removeStaleLocks(wt, 'harness-t1'), ['index.lock', 'HEAD.lock', 'refs/heads/harness-t1.lock']);
    assert.equal(git(wt, 'rev-parse', 'harness-t1'), tip);
    for (const name of ['index.lock', 'HEAD.lock', 'refs/heads/harness-t1.lock']) assert.ok(!existsSync(path(name)), `${name} left`);
    assert.equal(git(wt, 'status', '--porcelain'), 'M a.txt', 'the uncommitted change is left as it was');
  });
});
