// session_config.worktree_pool in a run started from VS Code: the session's start makes the
// pool's worktrees in the background, later tasks take prepared ones (their INIT line says so),
// every task is merged, and the pool is left with idle worktrees that the Worktrees view lists
// under its own "Worktree pool" node, not as tasks'; Clear Worktree Pool, answered in its quick
// pick, removes them. The workspace's task file and log are restored, the pool removed.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { linkedGitDir } from '../../src/core/git/git';
import { claimSlot, releaseSlot } from '../../src/core/worktrees/poolSlot';
import { COMMANDS } from '../../src/vscode/contributions';
import type { LaunchpadApi } from '../../src/vscode/extension';
import type { WorktreesViewNode } from '../../src/vscode/views/worktreesProvider';
import { answeringPicks, eventually, git, launchpad, progressFile, tasksFile } from './launchpad';
import { task } from './setup';

const POOL = 2;
const IDS = ['pool-1', 'pool-2', 'pool-3', 'pool-4'];

/** The pool's worktrees as git lists them (detached, under <worktree root>/.pool/). */
const slots = () =>
  git('worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => /^worktree .*\/\.pool\/slot-[0-9a-f]+$/.test(l))
    .map((l) => l.slice('worktree '.length));

describe('worktree pool', function () {
  this.timeout(180_000);
  let api: LaunchpadApi;
  let savedTasks: string;
  let savedLog: string;

  before(async () => {
    api = await launchpad();
    await api.model.whenLoaded();
    savedTasks = fs.readFileSync(tasksFile(), 'utf8');
    savedLog = fs.readFileSync(progressFile(), 'utf8');
  });
  after(async () => {
    for (const slot of slots()) git('worktree', 'remove', '--force', slot);
    for (const slot of slots()) fs.rmSync(slot, { recursive: true, force: true });
    fs.writeFileSync(tasksFile(), savedTasks);
    fs.writeFileSync(progressFile(), savedLog);
    await api.model.refresh();
  });

  it('later tasks start in prepared worktrees from the pool, and every task is merged', async () => {
    const tasks = IDS.map((id) => task(id, `Pooled ${id}`, []));
    const file = { version: 3, session_config: { max_parallel_agents: 1, worktree_pool: POOL }, tasks, session_count: 0 };
    fs.writeFileSync(tasksFile(), JSON.stringify(file, null, 2) + '\n');
    fs.writeFileSync(progressFile(), '');
    await api.model.refresh();

    await vscode.commands.executeCommand(COMMANDS.run);
    const run = api.runs.active;
    assert.ok(run, 'launchpad.run started a run');
    const outcome = await run.done;
    assert.equal(outcome.exitCode, 0, outcome.message);

    const log = fs.readFileSync(progressFile(), 'utf8');
    for (const id of IDS) assert.match(log, new RegExp(`Completed \\[${id}\\] \\(commit [0-9a-f]+\\)`), `${id} merged`);
    const pooled = IDS.filter((id) => new RegExp(`INIT \\[${id}\\] worktree from the pool, prepared at `).test(log));
    assert.ok(pooled.length >= 2, `at least two tasks took a prepared worktree: ${pooled.join(', ') || 'none'}\n${log}`);

    const left = slots();
    assert.ok(left.length >= 1 && left.length <= POOL, `the pool holds 1 to ${POOL} worktrees: ${left.join(', ')}`);
    for (const slot of left) assert.equal(git('-C', slot, 'status', '--porcelain').trim(), '', `${path.basename(slot)} is clean`);
    await api.model.refresh();
    const shown = await api.views.worktrees.getChildren();
    assert.deepEqual(
      shown.filter((w) => w.kind === 'worktree' && w.path.includes(`${path.sep}.pool${path.sep}`)),
      [],
      'no slot among the task worktrees',
    );
  });

  it('the Worktrees view shows the pool as one node with a row per slot; Clear Worktree Pool removes them once confirmed', async () => {
    const left = slots();
    assert.ok(left.length >= 1, 'the run above left slots');
    const pool = await eventually('the pool node', async () => {
      await api.model.refresh();
      return (await api.views.worktrees.getChildren()).find((n) => n.kind === 'pool');
    });
    const item = api.views.worktrees.getTreeItem(pool);
    assert.equal(item.label, `Worktree pool: ${left.length} slot${left.length === 1 ? '' : 's'}`);
    assert.equal(item.collapsibleState, vscode.TreeItemCollapsibleState.Collapsed);
    assert.equal(item.contextValue, 'pool');
    const rows = await api.views.worktrees.getChildren(pool);
    const paths = rows.map((r: WorktreesViewNode) => (r.kind === 'poolSlot' ? fs.realpathSync(r.path) : r.kind));
    assert.deepEqual(paths.sort(), left.map((p) => fs.realpathSync(p)).sort());
    for (const row of rows) {
      const slot = api.views.worktrees.getTreeItem(row);
      assert.match(String(slot.label), /^slot-[0-9a-f]+$/);
      assert.match(String(slot.description), /^prepared (at|behind) the base \([0-9a-f]{7}, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)$/);
    }

    // A slot claimed and released (as a run taking it does): its row follows, with no refresh asked for.
    const gitDir = linkedGitDir(left[0]!)!;
    const rowOf = async () => {
      const row = (await api.views.worktrees.getChildren(pool)).find(
        (r) => r.kind === 'poolSlot' && fs.realpathSync(r.path) === fs.realpathSync(left[0]!),
      );
      return row && String(api.views.worktrees.getTreeItem(row).description);
    };
    assert.ok(claimSlot(gitDir), 'the slot could be claimed');
    try {
      await eventually('the row to show the claim', async () => /^claimed by pid \d+/.test((await rowOf()) ?? ''));
    } finally {
      releaseSlot(gitDir);
    }
    await eventually('the row to show it prepared again', async () => /^prepared /.test((await rowOf()) ?? ''));

    // Esc keeps them; Enter on "Clear" removes them.
    await answeringPicks(() => vscode.commands.executeCommand(COMMANDS.clearWorktreePool, pool), 'esc');
    assert.deepEqual(slots(), left, 'cancelled: every slot kept');
    await answeringPicks(() => vscode.commands.executeCommand(COMMANDS.clearWorktreePool, pool));
    // A slot still claimed by the session's last background preparation is kept by a clear;
    // cleared again once it is free.
    await eventually('git to list no slot', async () => {
      if (slots().length) await answeringPicks(() => vscode.commands.executeCommand(COMMANDS.clearWorktreePool, pool));
      return slots().length === 0;
    });
    for (const slot of left) assert.ok(!fs.existsSync(slot), `${path.basename(slot)} removed from the disk`);
    await eventually('the view without the pool node', async () => {
      await api.model.refresh();
      return !(await api.views.worktrees.getChildren()).some((n) => n.kind === 'pool');
    });
  });
});
