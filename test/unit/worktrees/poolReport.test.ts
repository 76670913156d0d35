// The worktree pool as a person sees it and frees it, on a real repository and a real pool: each
// slot's state read from its files, its disk counted as du counts it, and clearing that removes
// the idle slots only (a live claim and a branch are kept, with their reasons) and leaves a pool
// the next session fills again.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, linkSync, lstatSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { createWorktree } from '../../../src/core/controller/taskRun';
import { linkedGitDir } from '../../../src/core/git/git';
import { processIdentity } from '../../../src/core/processIdentity';
import { dispatchTask } from '../../../src/core/tasks/transitions';
import { diskUse } from '../../../src/core/worktrees/diskUse';
import { clearPool } from '../../../src/core/worktrees/poolClear';
import { readPool } from '../../../src/core/worktrees/poolReport';
import { poolDir } from '../../../src/core/worktrees/poolSlot';
import { describePool } from '../../../src/core/worktrees/poolText';
import { git, writeFiles } from '../helpers/gitRepo';
import { makeHarness } from '../helpers/harness';
import { testSession } from '../helpers/session';
import { tempDir } from '../helpers/tmp';

/** A session on a new repository whose pool (worktree_pool: `size`) is filled and prepared. */
async function filledPool(size: number) {
  const worktreeDir = tempDir('launchpad-wt-');
  const root = makeHarness({
    files: { '.gitignore': 'node_modules/\n', 'src/a.txt': 'a\n' },
    tasks: ['task-001', 'task-002'].map((id) => ({ id })),
    sessionConfig: { worktree_pool: size, worktree_dir: worktreeDir },
    commitState: true,
  });
  writeFiles(root, { 'node_modules/x/index.js': 'x\n' });
  writeFileSync(join(root, '.worktreeinclude'), 'node_modules/\n');
  const { s, paths, store } = await testSession(root);
  await s.pool.open();
  s.pool.fill();
  await s.pool.settled();
  const slots = readdirSync(poolDir(worktreeDir)).map((n) => join(poolDir(worktreeDir), n));
  assert.equal(slots.length, size);
  const report = (disk = false) => readPool(paths, store.load().file, { settings: { env: {} }, disk });
  return { s, root, paths, store, worktreeDir, slots, report };
}

/** A process that lives until killed, and its claim line. */
function liveProcess(): { child: ChildProcess; claim: string } {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  return { child, claim: `${child.pid} ${processIdentity(child.pid!)}\n` };
}

async function deadClaim(): Promise<string> {
  const { child, claim } = liveProcess();
  child.kill('SIGKILL');
  await once(child, 'exit');
  return claim;
}

const claimFile = (slot: string) => join(linkedGitDir(slot)!, 'launchpad-claim');
const listed = (root: string) => git(root, 'worktree', 'list', '--porcelain');

describe('worktrees/poolReport and poolClear: the pool shown and freed', function () {
  this.timeout(60_000);
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) {
      c.kill('SIGKILL');
      if (c.exitCode === null && c.signalCode === null) await once(c, 'exit');
    }
  });

  it('reports each state: prepared at the base, claimed by a live process, a stale claim, on a branch, behind the base', async () => {
    const { s, root, slots, report } = await filledPool(4);
    const [prepared, claimed, stale, onBranch] = slots as [string, string, string, string];
    const live = liveProcess();
    children.push(live.child);
    writeFileSync(claimFile(claimed), live.claim);
    writeFileSync(claimFile(stale), await deadClaim());
    git(onBranch, 'checkout', '-q', '-b', 'harness-task-009');

    const r = (await report())!;
    assert.equal(r.size, 4);
    assert.equal(r.base_branch, 'main');
    assert.equal(r.bytes, null, 'no disk walked unless asked');
    const by = new Map(r.slots.map((x) => [x.path, x]));
    assert.equal(by.get(prepared)?.state, 'prepared');
    assert.equal(by.get(prepared)?.base, s.head);
    assert.equal(by.get(prepared)?.at_base, true);
    assert.ok(Date.now() - Date.parse(by.get(prepared)!.prepared_at!) < 60_000);
    assert.equal(by.get(claimed)?.state, 'claimed');
    assert.equal(by.get(claimed)?.claimed_by, live.child.pid);
    assert.equal(by.get(stale)?.state, 'stale_claim');
    assert.equal(by.get(onBranch)?.state, 'on_branch');
    assert.equal(by.get(onBranch)?.branch, 'harness-task-009');
    assert.equal(describePool(r), '4 slots (1 prepared at the base, 1 claimed, 1 with a stale claim, 1 on a branch)');

    // The base branch moves on: the prepared slot is behind it until a session brings it there.
    writeFiles(root, { 'src/b.txt': 'b\n' });
    git(root, 'add', 'src/b.txt');
    git(root, 'commit', '-q', '-m', 'b');
    const later = (await report())!;
    assert.equal(later.slots.find((x) => x.path === prepared)?.at_base, false);
    assert.match(describePool(later), /1 prepared behind the base/);
  });

  it('measures the disk of each slot with its git folder, when asked', async () => {
    const { slots, report } = await filledPool(1);
    const r = (await report(true))!;
    const gitDir = linkedGitDir(slots[0]!)!;
    assert.equal(r.slots[0]!.bytes, diskUse([slots[0]!, gitDir]));
    assert.ok(r.slots[0]!.bytes! > diskUse([slots[0]!]), 'the git folder (index, HEAD) counted too');
    assert.equal(r.bytes, r.slots[0]!.bytes);
  });

  it('counts a hard-linked file once and never follows a symbolic link out of the folder', () => {
    const dir = tempDir('launchpad-du-');
    const outside = tempDir('launchpad-du-outside-');
    writeFileSync(join(dir, 'big'), Buffer.alloc(256 * 1024, 1));
    const once = diskUse([dir]);
    assert.ok(once >= 256 * 1024, `${once}`);
    linkSync(join(dir, 'big'), join(dir, 'big-again'));
    mkdirSync(join(dir, 'sub'));
    linkSync(join(dir, 'big'), join(dir, 'sub', 'third'));
    const sub = lstatSync(join(dir, 'sub')).blocks * 512;
    assert.equal(diskUse([dir]) - once, sub, 'the links add nothing but the folder holding one');
    writeFileSync(join(outside, 'huge'), Buffer.alloc(1024 * 1024, 1));
    symlinkSync(outside, join(dir, 'out'));
    symlinkSync(join(outside, 'huge'), join(dir, 'huge-link'));
    assert.ok(diskUse([dir]) - once - sub < 64 * 1024, 'the links, not what they point to');
  });

  it('clear removes the idle slots (folder, git folder, git record) and keeps a live claim and a branch, with reasons', async () => {
    const { root, paths, store, worktreeDir, slots } = await filledPool(4);
    const [idle, claimed, stale, onBranch] = slots as [string, string, string, string];
    const live = liveProcess();
    children.push(live.child);
    writeFileSync(claimFile(claimed), live.claim);
    writeFileSync(claimFile(stale), await deadClaim());
    git(onBranch, 'checkout', '-q', '-b', 'harness-task-009');
    const idleGitDirs = [linkedGitDir(idle)!, linkedGitDir(stale)!];

    const c = await clearPool(paths, store.load().file, { settings: { env: {} } });
    assert.deepEqual(c.removed.map((x) => x.path).sort(), [idle, stale].sort());
    assert.ok(c.removed.every((x) => x.bytes > 0));
    assert.equal(
      c.bytes_freed,
      c.removed.reduce((n, x) => n + x.bytes, 0),
    );
    const kept = new Map(c.kept.map((k) => [k.path, k.reason]));
    assert.equal(kept.size, 2);
    assert.match(kept.get(claimed)!, new RegExp(`claimed by pid ${live.child.pid}`));
    assert.match(kept.get(onBranch)!, /on branch harness-task-009/);
    for (const gone of [idle, stale, ...idleGitDirs]) assert.ok(!existsSync(gone), `${gone} removed`);
    assert.ok(!listed(root).includes(idle) && !listed(root).includes(stale), 'git no longer lists them');
    assert.ok(listed(root).includes(claimed) && listed(root).includes(onBranch));
    assert.ok(existsSync(claimFile(claimed)), "the live process's claim untouched");
    assert.deepEqual(readdirSync(poolDir(worktreeDir)).sort(), [claimed, onBranch].map((p) => p.slice(p.lastIndexOf('/') + 1)).sort());
  });

  it('after a clear the next session fills the pool again and a task takes a prepared worktree', async () => {
    const { s, paths, store, worktreeDir } = await filledPool(2);
    const c = await clearPool(paths, store.load().file, { settings: { env: {} } });
    assert.equal(c.removed.length, 2);
    assert.ok(!existsSync(poolDir(worktreeDir)), 'the empty pool folder goes too');

    await s.pool.open();
    s.pool.fill();
    await s.pool.settled();
    assert.equal(readdirSync(poolDir(worktreeDir)).length, 2);
    const { before } = await s.transact((file) =>
      dispatchTask(file, 'task-001', { agentId: 'agent_1', branch: 'harness-task-001', baseCommit: s.head }),
    );
    assert.ok(before);
    const from = await createWorktree(s, 'task-001', s.worktreePath('task-001'), 'harness-task-001', s.head, {
      taskId: 'task-001',
      agentId: 'agent_test',
    });
    assert.equal(from.kind, 'pool');
    assert.equal(git(s.worktreePath('task-001'), 'symbolic-ref', '--short', 'HEAD'), 'harness-task-001');
  });
});
