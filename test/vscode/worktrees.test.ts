import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { COMMANDS } from '../../src/vscode/contributions';
import type { LaunchpadApi } from '../../src/vscode/extension';
import type { WorktreeNode } from '../../src/vscode/views/worktreesProvider';
import { answeringPicks, eventually, git, launchpad, workspaceRoot } from './launchpad';

describe('worktrees view', function () {
  this.timeout(60_000);
  let api: LaunchpadApi;
  const wt = () => path.join(path.dirname(workspaceRoot()), 'removal-task-005');
  const branch = 'harness-task-005';
  let real = '';

  before(async () => {
    api = await launchpad();
    await api.model.whenLoaded();
    // A worktree of task-005 with a commit of its own on its branch, as a run leaves one.
    git('worktree', 'add', '-q', '-b', branch, wt(), 'main');
    fs.writeFileSync(path.join(wt(), 'docs.md'), '# docs\n');
    execIn(wt(), 'add', 'docs.md');
    execIn(wt(), 'commit', '-q', '-m', '[task-005] docs');
    real = fs.realpathSync(wt()); // as git lists it
    assert.ok(listed());
  });
  after(() => {
    if (fs.existsSync(wt())) git('worktree', 'remove', '--force', wt());
    git('branch', '-D', branch);
  });

  const node = () =>
    eventually('the worktree in the Worktrees view', async () => {
      await api.model.refresh();
      return (await api.views.worktrees.getChildren()).find((n): n is WorktreeNode => n.kind === 'worktree' && n.taskId === 'task-005');
    });
  const listed = () => git('worktree', 'list', '--porcelain').includes(`worktree ${real}\n`);

  it('asks in a quick pick before removing a worktree: Esc keeps it', async () => {
    const n = await node();
    await answeringPicks(() => vscode.commands.executeCommand(COMMANDS.removeWorktree, n), 'esc');
    assert.ok(listed(), 'the worktree is still there');
    assert.ok(fs.existsSync(path.join(wt(), 'docs.md')));
  });

  it('removes the worktree on "Remove" and keeps its branch and commits', async () => {
    const n = await node();
    const head = git('rev-parse', branch).trim();
    await answeringPicks(() => vscode.commands.executeCommand(COMMANDS.removeWorktree, n));
    assert.ok(!listed(), 'the worktree is gone from git');
    assert.ok(!fs.existsSync(wt()), 'and from the disk');
    assert.equal(git('rev-parse', branch).trim(), head, 'the branch is kept, with its commit');
    await eventually(
      'the view without it',
      async () => !(await api.views.worktrees.getChildren()).some((w) => w.kind === 'worktree' && w.taskId === 'task-005'),
    );
  });
});

function execIn(cwd: string, ...args: string[]): void {
  execFileSync('git', args, { cwd, stdio: 'pipe' });
}
