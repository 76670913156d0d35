import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Git, GitError, parsePorcelainPaths } from '../../../../src/core/git/git';
import { git, makeRepo, writeFiles } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/tmp';

/** A repository on main with one worktree `harness-t1` at a fresh path. */
async function repoWithWorktree(files: Record<string, string> = { 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'b\n' }) {
  const repo = makeRepo(files);
  const g = new Git(repo);
  const wt = join(tempDir('launchpad-wt-'), 'harness-t1');
  await g.addWorktree(wt, 'harness-t1', 'main');
  return { repo, g, wt };
}

function commitIn(dir: string, files: Record<string, string>, message: string): void {
  writeFiles(dir, files);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', message);
}

describe('core/git/git against real repositories', function () {
  this.timeout(30_000);

  it('reads toplevel, head and current branch; undefined outside a repository', async () => {
    const repo = makeRepo();
    const g = new Git(join(repo));
    assert.equal(await g.toplevel(), git(repo, 'rev-parse', '--show-toplevel'));
    assert.equal(await g.head(), git(repo, 'rev-parse', 'HEAD'));
    assert.equal(await g.currentBranch(), 'main');
    git(repo, 'checkout', '-q', '--detach');
    assert.equal(await g.currentBranch(), undefined);

    const outside = new Git(tempDir('launchpad-nogit-'));
    assert.equal(await outside.toplevel(), undefined);
    assert.equal(await outside.head(), undefined);
  });

  it('head is undefined in a repository without commits', async () => {
    const dir = tempDir('launchpad-empty-');
    git(dir, 'init', '-q', '-b', 'main');
    assert.equal(await new Git(dir).head(), undefined);
  });

  describe('worktrees and branches', () => {
    it('adds, moves, removals and listings started at once all succeed, and a removal leaves no folder behind', async () => {
      const repo = makeRepo({ 'a.txt': 'a\n' });
      const g = new Git(repo);
      const root = tempDir('launchpad-wts-');
      const ids = Array.from({ length: 12 }, (_, i) => `c${i}`);
      await Promise.all(
        ids.map(async (id, i) => {
          await g.addWorktree(join(root, id), `harness-${id}`, 'main');
          await g.listWorktrees();
          if (i % 3 === 0) await g.moveWorktree(join(root, id), join(root, `${id}-moved`));
          else if (i % 3 === 1) await g.removeWorktree(join(root, id));
          await g.deleteBranch(`harness-${id}`).catch(() => undefined);
        }),
      );
      const left = (await g.listWorktrees()).map((w) => w.path).filter((p) => p !== git(repo, 'rev-parse', '--show-toplevel'));
      assert.equal(left.length, 8, left.join(', '));
      assert.deepEqual(
        readdirSync(root).filter((n) => n.startsWith('.removing-')),
        [],
        'removed folders deleted',
      );
    });

    it('addWorktree creates the branch and the worktree; listWorktrees shows it', async () => {
      const { repo, g, wt } = await repoWithWorktree();
      assert.ok(existsSync(join(wt, 'a.txt')));
      assert.equal(await g.branchExists('harness-t1'), true);
      assert.equal(await g.branchExists('harness-t2'), false);
      assert.deepEqual(await g.branches('harness-'), ['harness-t1']);
      const list = await g.listWorktrees();
      assert.equal(list.length, 2);
      assert.equal(list[0]!.branch, 'refs/heads/main');
      assert.equal(list[0]!.path, git(repo, 'rev-parse', '--show-toplevel'));
      assert.equal(list[1]!.branch, 'refs/heads/harness-t1');
      assert.equal(list[1]!.head, git(repo, 'rev-parse', 'main'));
    });

    it('removeWorktree removes it even with changes; deleteBranch then removes the branch', async () => {
      const { g, wt } = await repoWithWorktree();
      writeFileSync(join(wt, 'a.txt'), 'dirty\n');
      writeFileSync(join(wt, 'untracked.txt'), 'x\n');
      await g.removeWorktree(wt);
      assert.equal(existsSync(wt), false);
      assert.equal((await g.listWorktrees()).length, 1);
      await g.deleteBranch('harness-t1');
      assert.equal(await g.branchExists('harness-t1'), false);
      await g.deleteBranch('harness-t1'); // already gone: no throw
    });

    it("removeWorktree of a worktree deleted from disk prunes git's record of it", async () => {
      const { g, wt } = await repoWithWorktree();
      rmSync(wt, { recursive: true, force: true });
      assert.equal((await g.listWorktrees())[1]!.prunable, true);
      await g.removeWorktree(wt);
      assert.equal((await g.listWorktrees()).length, 1);
    });

    it('addWorktree fails with a GitError naming the command when the branch exists', async () => {
      const { g } = await repoWithWorktree();
      await assert.rejects(g.addWorktree(join(tempDir(), 'again'), 'harness-t1', 'main'), (e: unknown) => {
        assert.ok(e instanceof GitError);
        assert.match(e.message, /^git worktree add -b harness-t1 -- .* main failed \(exit \d+\): .*already exists/);
        return true;
      });
    });

    it('passes arguments without a shell: a path with $(…), quotes and spaces is taken literally', async () => {
      const repo = makeRepo();
      const g = new Git(repo);
      const parent = tempDir('launchpad-wt-');
      const wt = join(parent, 'odd $(touch pwned) `touch pwned2` "q" \'s\'');
      await g.addWorktree(wt, 'harness-odd', 'main');
      assert.ok(existsSync(join(wt, 'README.md')));
      assert.deepEqual(readdirSync(parent), [wt.slice(parent.length + 1)]);
      assert.equal(existsSync(join(repo, 'pwned')), false);
      assert.equal((await g.listWorktrees())[1]!.path, wt);
      await g.removeWorktree(wt);
      assert.equal(existsSync(wt), false);
    });

    it('addWorktreeForBranch checks out an existing branch', async () => {
      const { g, wt } = await repoWithWorktree();
      commitIn(wt, { 'c.txt': 'c\n' }, 'work');
      await g.removeWorktree(wt);
      const again = join(tempDir(), 'again');
      await g.addWorktreeForBranch(again, 'harness-t1');
      assert.equal(readFileSync(join(again, 'c.txt'), 'utf8'), 'c\n');
    });
  });

  describe('commits', () => {
    it('countCommits, isAncestor, commitExists, changedFiles', async () => {
      const { g, wt } = await repoWithWorktree();
      assert.equal(await g.countCommits('main..harness-t1'), 0);
      commitIn(wt, { 'c.txt': 'c\n' }, 'one');
      commitIn(wt, { 'a.txt': 'changed\n' }, 'two');
      assert.equal(await g.countCommits('main..harness-t1'), 2);
      assert.equal(await g.isAncestor('main', 'harness-t1'), true);
      assert.equal(await g.isAncestor('harness-t1', 'main'), false);
      const head = (await g.head(wt))!;
      assert.equal(await g.commitExists(head), true);
      assert.equal(await g.commitExists('0123456789abcdef0123456789abcdef01234567'), false);
      assert.equal(await g.commitExists('no-such-ref'), false);
      assert.deepEqual((await g.changedFiles('main', 'harness-t1')).sort(), ['a.txt', 'c.txt']);
    });

    it('commitAll commits modified, new and deleted files, skipping hooks', async () => {
      const { g, wt } = await repoWithWorktree();
      writeFileSync(join(wt, 'a.txt'), 'modified\n');
      writeFileSync(join(wt, 'new.txt'), 'new\n');
      rmSync(join(wt, 'b.txt'));
      const hooks = git(wt, 'rev-parse', '--path-format=absolute', '--git-common-dir') + '/hooks';
      writeFileSync(join(hooks, 'pre-commit'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
      assert.deepEqual((await g.anyChanges(wt)).sort(), ['a.txt', 'b.txt', 'new.txt']);
      await g.commitAll(wt, '[t1] leftovers');
      assert.deepEqual(await g.anyChanges(wt), []);
      assert.equal(await g.countCommits('main..harness-t1'), 1);
      assert.equal(git(wt, 'log', '-1', '--format=%s'), '[t1] leftovers');
    });
  });

  describe('trackedChanges', () => {
    it('lists modified, staged, deleted and renamed tracked files, and ignores untracked ones', async () => {
      const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n', 'd.txt': 'd\n' });
      const g = new Git(repo);
      assert.deepEqual(await g.trackedChanges(), []);
      writeFileSync(join(repo, 'untracked.txt'), 'u\n');
      assert.deepEqual(await g.trackedChanges(), [], 'untracked files are not tracked changes');
      writeFileSync(join(repo, 'a.txt'), 'a2\n');
      writeFileSync(join(repo, 'staged.txt'), 's\n');
      git(repo, 'add', 'staged.txt');
      rmSync(join(repo, 'b.txt'));
      git(repo, 'mv', 'c.txt', 'c renamed.txt');
      assert.deepEqual((await g.trackedChanges()).sort(), ['a.txt', 'b.txt', 'c renamed.txt', 'staged.txt']);
    });

    it('parsePorcelainPaths reads -z output, renames included', () => {
      assert.deepEqual(parsePorcelainPaths(' M a.txt\0R  new name.txt\0old.txt\0?? u.txt\0A  s.txt\0'), [
        'a.txt',
        'new name.txt',
        'u.txt',
        's.txt',
      ]);
      assert.deepEqual(parsePorcelainPaths(''), []);
    });
  });

  describe('mergeNoFf', () => {
    it('merges a branch with a merge commit and the message given', async () => {
      const { repo, g, wt } = await repoWithWorktree();
      commitIn(wt, { 'c.txt': 'c\n' }, 'work');
      const outcome = await g.mergeNoFf('harness-t1', 'Merge [t1] title');
      assert.deepEqual({ ...outcome, output: '' }, { ok: true, conflicts: [], blockedBy: [], output: '' });
      assert.equal(git(repo, 'log', '-1', '--format=%s'), 'Merge [t1] title');
      assert.equal(git(repo, 'log', '-1', '--format=%p').split(' ').length, 2, 'a real merge commit, not a fast-forward');
      assert.equal(readFileSync(join(repo, 'c.txt'), 'utf8'), 'c\n');
    });

    it('lists the conflicting files, and mergeAbort restores a clean tree', async () => {
      const { repo, g, wt } = await repoWithWorktree();
      commitIn(wt, { 'a.txt': 'one\nTWO from the task\nthree\n', 'c.txt': 'clean\n' }, 'task');
      commitIn(repo, { 'a.txt': 'one\nTWO from main\nthree\n' }, 'main moved');
      const before = git(repo, 'rev-parse', 'HEAD');
      const outcome = await g.mergeNoFf('harness-t1', 'Merge [t1]');
      assert.equal(outcome.ok, false);
      assert.deepEqual(outcome.conflicts, ['a.txt']);
      assert.deepEqual(outcome.blockedBy, []);
      assert.match(outcome.output, /CONFLICT/);
      assert.ok(existsSync(await g.gitPath('MERGE_HEAD')));
      await g.mergeAbort();
      assert.equal(existsSync(await g.gitPath('MERGE_HEAD')), false);
      assert.deepEqual(await g.trackedChanges(), []);
      assert.equal(git(repo, 'rev-parse', 'HEAD'), before);
    });

    it('reports local changes the merge would overwrite in blockedBy, and changes nothing', async () => {
      const { repo, g, wt } = await repoWithWorktree();
      commitIn(wt, { 'a.txt': 'task version\n' }, 'task');
      writeFileSync(join(repo, 'a.txt'), 'uncommitted local edit\n');
      const before = git(repo, 'rev-parse', 'HEAD');
      const outcome = await g.mergeNoFf('harness-t1', 'Merge [t1]');
      assert.equal(outcome.ok, false);
      assert.deepEqual(outcome.blockedBy, ['a.txt']);
      assert.deepEqual(outcome.conflicts, []);
      assert.equal(readFileSync(join(repo, 'a.txt'), 'utf8'), 'uncommitted local edit\n');
      assert.equal(git(repo, 'rev-parse', 'HEAD'), before);
      assert.equal(existsSync(await g.gitPath('MERGE_HEAD')), false);
    });

    it('reports an untracked file the merge would overwrite in blockedBy', async () => {
      const { repo, g, wt } = await repoWithWorktree();
      commitIn(wt, { 'new.txt': 'from the task\n' }, 'task');
      writeFileSync(join(repo, 'new.txt'), 'a local untracked file\n');
      const outcome = await g.mergeNoFf('harness-t1', 'Merge [t1]');
      assert.equal(outcome.ok, false);
      assert.deepEqual(outcome.blockedBy, ['new.txt']);
      assert.equal(readFileSync(join(repo, 'new.txt'), 'utf8'), 'a local untracked file\n');
    });

    it('throws a GitError for a failure that is neither (an unknown branch)', async () => {
      const repo = makeRepo();
      await assert.rejects(new Git(repo).mergeNoFf('harness-nope', 'x'), GitError);
    });
  });

  describe('rebase', () => {
    it('rebases the worktree branch onto main when they touch different files', async () => {
      const { repo, g, wt } = await repoWithWorktree();
      commitIn(wt, { 'c.txt': 'c\n' }, 'task');
      commitIn(repo, { 'b.txt': 'main moved\n' }, 'main moved');
      assert.equal(await g.isAncestor('main', 'harness-t1'), false);
      assert.equal(await g.rebase(wt, 'main'), true);
      assert.equal(await g.isAncestor('main', 'harness-t1'), true);
      assert.equal(await g.countCommits('main..harness-t1'), 1);
      assert.equal(readFileSync(join(wt, 'b.txt'), 'utf8'), 'main moved\n');
    });

    it('on a conflict: aborts, returns false and leaves the branch as it was', async () => {
      const { repo, g, wt } = await repoWithWorktree();
      commitIn(wt, { 'a.txt': 'task\n' }, 'task');
      commitIn(repo, { 'a.txt': 'main\n' }, 'main moved');
      const before = git(wt, 'rev-parse', 'HEAD');
      assert.equal(await g.rebase(wt, 'main'), false);
      assert.equal(git(wt, 'rev-parse', 'HEAD'), before);
      assert.equal(git(wt, 'symbolic-ref', '--short', 'HEAD'), 'harness-t1', 'not left detached mid-rebase');
      assert.equal(existsSync(await g.gitPath('rebase-merge', wt)), false);
      assert.equal(existsSync(await g.gitPath('rebase-apply', wt)), false);
      assert.deepEqual(await g.anyChanges(wt), []);
    });
  });
});
