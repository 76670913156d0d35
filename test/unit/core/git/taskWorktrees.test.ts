import assert from 'node:assert/strict';

import { taskWorktreesOf } from '../../../../src/core/git/taskWorktrees';
import { parseWorktreeList } from '../../../../src/core/git/worktreeParser';

const H = '00d7061f1226c9ae34ef4154a9d5f1eecf45aae5';

describe('core/git/taskWorktrees', () => {
  it('keeps the worktrees on a harness-<id> branch, with the short branch name and the task id', () => {
    const text = [
      `worktree /r\nHEAD ${H}\nbranch refs/heads/main\n`,
      `worktree /w1\nHEAD ${H}\nbranch refs/heads/harness-task-001\n`,
      // Detached: no branch, so no task, even in a folder named for one.
      `worktree /harness-task-002\nHEAD ${H}\ndetached\n`,
      // Not a valid task id after the prefix.
      `worktree /w3\nHEAD ${H}\nbranch refs/heads/harness-..x\n`,
      `worktree /w 4\nHEAD ${H}\nbranch refs/heads/harness-t4\nlocked\n`,
    ].join('\n');
    assert.deepEqual(taskWorktreesOf(parseWorktreeList(text)), [
      { path: '/w1', branch: 'harness-task-001', task: 'task-001' },
      { path: '/w 4', branch: 'harness-t4', task: 't4' },
    ]);
  });
});
