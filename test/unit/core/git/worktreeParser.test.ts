import assert from 'node:assert/strict';

import { parseWorktreeList, type WorktreeInfo } from '../../../../src/core/git/worktreeParser';

const H = '00d7061f1226c9ae34ef4154a9d5f1eecf45aae5';
const flags = { bare: false, detached: false, locked: false, prunable: false };

// What git 2.39 prints for a main tree, a harness worktree, a path with a space, a detached
// worktree whose directory was deleted (prunable) and a locked one with a reason.
const PORCELAIN = `worktree /tmp/wtp/r
HEAD ${H}
branch refs/heads/main

worktree /tmp/wtp/w 4
HEAD ${H}
branch refs/heads/b4

worktree /tmp/wtp/w1
HEAD ${H}
branch refs/heads/harness-task-001

worktree /tmp/wtp/w2
HEAD ${H}
detached
prunable gitdir file points to non-existent location

worktree /tmp/wtp/w3
HEAD ${H}
branch refs/heads/b3
locked on a stick

`;

const EXPECTED: WorktreeInfo[] = [
  { path: '/tmp/wtp/r', head: H, branch: 'refs/heads/main', ...flags },
  { path: '/tmp/wtp/w 4', head: H, branch: 'refs/heads/b4', ...flags },
  { path: '/tmp/wtp/w1', head: H, branch: 'refs/heads/harness-task-001', ...flags },
  { path: '/tmp/wtp/w2', head: H, ...flags, detached: true, prunable: true },
  { path: '/tmp/wtp/w3', head: H, branch: 'refs/heads/b3', ...flags, locked: true },
];

describe('core/git/worktreeParser', () => {
  it('parses `git worktree list --porcelain`', () => {
    assert.deepEqual(parseWorktreeList(PORCELAIN), EXPECTED);
  });

  it('parses the same list with -z (NUL-terminated lines, an empty field between records)', () => {
    const z = PORCELAIN.replace(/\n/g, '\0');
    assert.ok(z.includes('\0\0'));
    assert.deepEqual(parseWorktreeList(z), EXPECTED);
  });

  it('with -z, a path may hold a newline and a lock reason may span lines', () => {
    const z = `worktree /tmp/odd\nname\0HEAD ${H}\0branch refs/heads/harness-x\0locked line one\nline two\0\0`;
    assert.deepEqual(parseWorktreeList(z), [{ path: '/tmp/odd\nname', head: H, branch: 'refs/heads/harness-x', ...flags, locked: true }]);
  });

  it('a bare main repository', () => {
    const text = `worktree /srv/repo.git\nbare\n\nworktree /srv/wt\nHEAD ${H}\nbranch refs/heads/main\n\n`;
    assert.deepEqual(parseWorktreeList(text), [
      { path: '/srv/repo.git', ...flags, bare: true },
      { path: '/srv/wt', head: H, branch: 'refs/heads/main', ...flags },
    ]);
  });

  it('locked and prunable without a reason', () => {
    const text = `worktree /a\nHEAD ${H}\ndetached\nlocked\nprunable\n`;
    assert.deepEqual(parseWorktreeList(text), [{ path: '/a', head: H, ...flags, detached: true, locked: true, prunable: true }]);
  });

  it('tolerates CRLF, a missing final blank line, and lines it does not know', () => {
    const text = `worktree /a\r\nHEAD ${H}\r\nbranch refs/heads/x\r\nfuture-field 1\r\n\r\nworktree /b\r\nbare`;
    assert.deepEqual(parseWorktreeList(text), [
      { path: '/a', head: H, branch: 'refs/heads/x', ...flags },
      { path: '/b', ...flags, bare: true },
    ]);
  });

  it('a record without a separating blank line still starts a new worktree', () => {
    assert.deepEqual(
      parseWorktreeList(`worktree /a\nHEAD ${H}\nworktree /b\nHEAD ${H}\n`).map((w) => w.path),
      ['/a', '/b'],
    );
  });

  it('nothing, or lines before any worktree, give nothing', () => {
    assert.deepEqual(parseWorktreeList(''), []);
    assert.deepEqual(parseWorktreeList('\0'), []);
    assert.deepEqual(parseWorktreeList(`HEAD ${H}\nbranch refs/heads/x\n`), []);
  });
});
