// session_config.worktree_pool on a real repository, steps driven from a Session built by hand:
// a worktree handed back after a messy task and reused for the next one is, file for file, what a
// new worktree at the same base gets (tracked files, index, included files, set-up output);
// the pool keeps at most N; a folder in the pool that is not our worktree is never cleaned with git.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

import { prepareWorktree } from '../../../src/core/controller/prepare';
import { Session } from '../../../src/core/controller/session';
import { createWorktree } from '../../../src/core/controller/taskRun';
import { linkedGitDir } from '../../../src/core/git/git';
import { processIdentity } from '../../../src/core/processIdentity';
import { dispatchTask } from '../../../src/core/tasks/transitions';
import { poolDir, readReady } from '../../../src/core/worktrees/poolSlot';
import { git, makeRepo, writeFiles } from '../helpers/gitRepo';
import { makeHarness, readLog } from '../helpers/harness';
import { testSession } from '../helpers/session';
import { tempDir } from '../helpers/tmp';

const SETUP = 'test -f setup-out/marker || { mkdir -p setup-out/deep && echo made > setup-out/marker && echo x > setup-out/deep/file; }';

async function sessionFor(sessionConfig: Record<string, unknown>, opts: { worktreeDir?: string } = {}) {
  const root = makeHarness({
    files: {
      '.gitignore': 'build/\nnode_modules/\n.env\nsetup-out/\n*.log\n',
      'src/a.txt': 'a\n',
      'src/keep/tracked.txt': 'tracked\n',
    },
    tasks: ['task-001', 'task-002', 'task-003', 'task-004'].map((id) => ({ id })),
    sessionConfig,
    commitState: true,
  });
  writeFiles(root, {
    '.env': 'SECRET=1\n',
    'node_modules/x/index.js': 'x\n',
    'node_modules/x/package.json': '{}\n',
    'debug.log': 'not named\n',
  });
  symlinkSync('x', join(root, 'node_modules/x-link'));
  writeFileSync(join(root, '.worktreeinclude'), '.env\nnode_modules/\n');
  const { s } = await testSession(root, { number: 3, worktreeDir: opts.worktreeDir ?? tempDir('launchpad-wt-') });
  return { s, root };
}

/** Dispatches a task and gives it a prepared worktree, as runTask does up to the agent. */
async function start(s: Session, id: string): Promise<{ worktree: string; reused: boolean }> {
  const branch = `harness-${id}`;
  const { before, attempt } = await s.transact((file) => dispatchTask(file, id, { agentId: `agent_${id}`, branch, baseCommit: s.head }));
  const worktree = s.worktreePath(id);
  const from = await createWorktree(s, id, worktree, branch, s.head, { taskId: id, agentId: 'agent_test' });
  const ready = await prepareWorktree(s, before, worktree, s.terminals.open(before, worktree), s.createAttempt(id, attempt), from);
  assert.equal(ready.kind, 'ready', JSON.stringify(ready));
  return { worktree, reused: from.kind === 'pool' };
}

/** Every entry under `dir` but the worktree's `.git` file: path, kind, mode, content or link target. */
function listing(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(dir, rel)).sort()) {
    const path = rel ? `${rel}/${name}` : name;
    if (path === '.git') continue;
    const full = join(dir, path);
    const st = lstatSync(full);
    if (st.isSymbolicLink()) out.push(`${path} -> ${readlinkSync(full)}`);
    else if (st.isDirectory()) out.push(`${path}/`, ...listing(dir, path));
    else out.push(`${path} ${(st.mode & 0o777).toString(8)} ${createHash('sha1').update(readFileSync(full)).digest('hex').slice(0, 10)}`);
  }
  return out;
}

/** What git sees in a worktree: HEAD, the index against HEAD, untracked and ignored entries. */
function gitView(worktree: string): string[] {
  return [
    git(worktree, 'rev-parse', 'HEAD'),
    git(worktree, 'diff', '--cached', '--name-only'),
    git(worktree, 'status', '--porcelain', '--ignored', '--untracked-files=all'),
  ];
}

function slots(s: Session): string[] {
  return existsSync(poolDir(s.config.worktreeRoot)) ? readdirSync(poolDir(s.config.worktreeRoot)) : [];
}

describe('worktrees/pool: prepared worktrees reused between tasks', function () {
  this.timeout(60_000);

  it('a reused worktree is what a new one at the same base is, after a task that left every kind of mess', async () => {
    const { s, root } = await sessionFor({ worktree_pool: 2, worktree_setup: SETUP });
    const first = await start(s, 'task-001');
    assert.equal(first.reused, false);
    const w = first.worktree;
    // The task's mess: a commit, uncommitted and staged changes, untracked and ignored files and
    // folders, a changed and an added included file, an empty folder. (A worktree left in a
    // rebase is deleted, not pooled: see below.)
    writeFiles(w, { 'src/task-001/done.txt': 'done\n' });
    git(w, 'add', '-A');
    git(w, 'commit', '-q', '-m', '[task-001] work');
    writeFiles(w, {
      'src/a.txt': 'dirty\n',
      'staged.txt': 'staged\n',
      'junk.txt': 'junk\n',
      'build/out.js': 'built\n',
      'src/keep/trace.log': 'log\n',
    });
    git(w, 'add', 'staged.txt');
    writeFiles(w, { '.env': 'SECRET=changed by the agent\n', 'node_modules/x/extra.js': 'added by a test run\n' });
    mkdirSync(join(w, 'emptydir/inner'), { recursive: true });
    writeFiles(w, { 'src/keep/tracked.txt': 'changed, not committed\n' });

    // The main checkout's included files change before the worktree is prepared again.
    writeFiles(root, { '.env': 'SECRET=2\n' });
    await s.removeWorktree('task-001');
    assert.ok(!existsSync(w), 'moved out of the task folder');
    assert.equal(slots(s).length, 1, 'kept in the pool');
    assert.equal(git(root, 'branch', '--list', 'harness-task-001'), '', 'its branch deleted');
    await s.pool.settled();

    // The main branch moves on after the preparation: the dispatch moves the slot to it.
    writeFiles(root, { 'src/a.txt': 'a2\n', 'src/b.txt': 'b\n' });
    git(root, 'add', 'src');
    git(root, 'commit', '-q', '-m', 'main moves on');
    s.state.head = git(root, 'rev-parse', 'HEAD');

    const second = await start(s, 'task-002');
    assert.equal(second.reused, true);
    assert.equal(slots(s).length, 0);
    const fresh = await start(s, 'task-003');
    assert.equal(fresh.reused, false, 'the pool is empty: a new worktree');

    assert.deepEqual(listing(second.worktree), listing(fresh.worktree));
    assert.deepEqual(gitView(second.worktree), gitView(fresh.worktree));
    assert.equal(git(second.worktree, 'rev-parse', 'HEAD'), s.head);
    assert.equal(git(second.worktree, 'symbolic-ref', '--short', 'HEAD'), 'harness-task-002');
    assert.equal(readFileSync(join(second.worktree, '.env'), 'utf8'), 'SECRET=2\n');
    assert.equal(
      readFileSync(join(second.worktree, 'setup-out/marker'), 'utf8'),
      'made\n',
      'the set-up output is there (kept, set-up ran again)',
    );
    assert.ok(listing(second.worktree).includes('node_modules/x-link -> x'));
    const init = readLog(root).filter((l) => l.includes(' INIT [task-002] '));
    assert.match(
      init[0]!,
      / INIT \[task-002\] worktree from the pool, prepared at \d\d:\d\d:\d\d \(its included files as the main checkout had them then\)$/,
    );
    assert.deepEqual(git(second.worktree, 'reflog', '--format=%gs').split('\n').length, 1, 'no reflog of the earlier task');
  });

  it('keeps at most worktree_pool idle worktrees, and empties the pool once the setting is 0', async () => {
    const worktreeDir = tempDir('launchpad-wt-');
    const { s, root } = await sessionFor({ worktree_pool: 1 }, { worktreeDir });
    await start(s, 'task-001');
    await start(s, 'task-002');
    await s.removeWorktree('task-001');
    await s.removeWorktree('task-002');
    assert.equal(slots(s).length, 1);
    assert.equal(git(root, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length, 2, 'the main checkout and one slot');

    (s.config as { worktreePool: number }).worktreePool = 0;
    await start(s, 'task-003');
    await s.removeWorktree('task-003');
    assert.equal(slots(s).length, 1, 'not pooled once the setting is 0');
    await s.pool.settled();
    await s.pool.open();
    s.pool.fill(); // the next session's start
    assert.deepEqual(slots(s), []);
    assert.ok(!existsSync(poolDir(worktreeDir)), 'the pool folder goes with its last slot');
    assert.equal(git(root, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length, 1);
  });

  it('does not pool a worktree left in a rebase: it is deleted as before', async () => {
    const { s } = await sessionFor({ worktree_pool: 2 });
    const { worktree } = await start(s, 'task-001');
    const gitDir = git(worktree, 'rev-parse', '--absolute-git-dir');
    mkdirSync(join(gitDir, 'rebase-merge'));
    await s.removeWorktree('task-001');
    assert.deepEqual(slots(s), []);
    assert.ok(!existsSync(worktree));
  });

  it('never runs git clean in a folder of the pool that is not one of our worktrees (it would clean whatever repository holds it)', async () => {
    // The worktree folder inside another repository, with a stray folder in the pool.
    const outer = makeRepo({ 'README.md': 'outer\n' });
    writeFileSync(join(outer, 'precious-untracked.txt'), 'keep me\n');
    const worktreeDir = join(outer, 'worktrees');
    const { s } = await sessionFor({ worktree_pool: 2 }, { worktreeDir });
    const stray = join(poolDir(worktreeDir), 'slot-stray');
    mkdirSync(stray, { recursive: true });
    writeFileSync(join(stray, 'file'), 'x\n');

    const { reused } = await start(s, 'task-001');
    assert.equal(reused, false, 'the stray folder is not used');
    await s.pool.open();
    s.pool.fill();
    await s.pool.settled();
    assert.equal(readFileSync(join(outer, 'precious-untracked.txt'), 'utf8'), 'keep me\n');
    assert.ok(!existsSync(stray), 'the stray folder is removed from the pool');
    rmSync(worktreeDir, { recursive: true, force: true });
  });

  it("a session's start fills the pool to worktree_pool in the background, each slot prepared at the base with the included files", async () => {
    const { s, root } = await sessionFor({ worktree_pool: 3 });
    await s.pool.open();
    s.pool.fill();
    await s.pool.settled();
    assert.equal(slots(s).length, 3);
    for (const name of slots(s)) {
      const slot = join(poolDir(s.config.worktreeRoot), name);
      const mark = readReady(linkedGitDir(slot)!);
      assert.equal(mark?.base, s.head, `${name} prepared at the base`);
      assert.equal(readFileSync(join(slot, '.env'), 'utf8'), 'SECRET=1\n');
      assert.equal(readlinkSync(join(slot, 'node_modules/x-link')), 'x');
      assert.equal(git(slot, 'status', '--porcelain'), '', `${name} clean`);
    }
    // Taken as they are: no checkout when the base has not moved (the mark says where it is).
    const { worktree, reused } = await start(s, 'task-001');
    assert.equal(reused, true);
    assert.equal(git(worktree, 'symbolic-ref', '--short', 'HEAD'), 'harness-task-001');
    assert.equal(slots(s).length, 2);
    assert.equal(git(root, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length, 4);
  });

  it('a slot another live process claimed is not taken; the claim of a process that is gone is taken over', async () => {
    const { s } = await sessionFor({ worktree_pool: 1 });
    await s.pool.open();
    s.pool.fill();
    await s.pool.settled();
    const slot = join(poolDir(s.config.worktreeRoot), slots(s)[0]!);
    const claim = join(linkedGitDir(slot)!, 'launchpad-claim');
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      writeFileSync(claim, `${other.pid} ${processIdentity(other.pid!)}\n`);
      assert.equal((await start(s, 'task-001')).reused, false, 'claimed by a live process: a new worktree');
      assert.ok(existsSync(slot), 'the claimed slot left alone');
    } finally {
      other.kill('SIGKILL');
      await once(other, 'exit');
    }
    assert.equal((await start(s, 'task-002')).reused, true, 'its process gone: the slot is used');
  });

  it("a slot prepared before the main checkout's included files changed is prepared again before it is handed out", async () => {
    const { s, root } = await sessionFor({ worktree_pool: 2 });
    await start(s, 'task-001');
    await start(s, 'task-002');
    await s.removeWorktree('task-001');
    await s.pool.settled(); // prepared with SECRET=1
    writeFiles(root, { '.env': 'SECRET=3\n' });
    await s.removeWorktree('task-002');
    await s.pool.settled(); // this preparation sees SECRET=3: the first slot is stale now
    const a = await start(s, 'task-003');
    const b = await start(s, 'task-004');
    assert.deepEqual([a.reused, b.reused], [true, true]);
    assert.equal(readFileSync(join(a.worktree, '.env'), 'utf8'), 'SECRET=3\n');
    assert.equal(readFileSync(join(b.worktree, '.env'), 'utf8'), 'SECRET=3\n');
  });

  it("never prepares a slot that is on a branch (a task's worktree recovered there): its work stays", async () => {
    const { s } = await sessionFor({ worktree_pool: 2 });
    const { worktree } = await start(s, 'task-001');
    writeFiles(worktree, { 'src/wip.txt': 'work in progress\n' });
    // Moved into the pool while on its branch, as a crash between a hand-out's two steps leaves it.
    mkdirSync(poolDir(s.config.worktreeRoot), { recursive: true });
    const slot = join(poolDir(s.config.worktreeRoot), 'slot-onbranch');
    git(s.toplevel, 'worktree', 'move', worktree, slot);
    await s.pool.open();
    s.pool.fill();
    await s.pool.settled();
    assert.equal(readFileSync(join(slot, 'src/wip.txt'), 'utf8'), 'work in progress\n');
    assert.equal(git(slot, 'symbolic-ref', '--short', 'HEAD'), 'harness-task-001');
    assert.equal(readReady(linkedGitDir(slot)!), undefined, 'never marked ready');
  });

  it("over a leftover branch of the task, the slot goes back to the pool untouched and the branch's commits are kept", async () => {
    const { s, root } = await sessionFor({ worktree_pool: 1 });
    await s.pool.open();
    s.pool.fill();
    await s.pool.settled();
    const slot = join(poolDir(s.config.worktreeRoot), slots(s)[0]!);
    const before = readReady(linkedGitDir(slot)!);
    git(root, 'branch', 'harness-task-001', s.head);
    const side = tempDir('launchpad-side-');
    git(root, 'worktree', 'add', '-q', side, 'harness-task-001');
    writeFiles(side, { 'src/left.txt': 'left behind\n' });
    git(side, 'add', '-A');
    git(side, 'commit', '-q', '-m', 'leftover work');
    const tip = git(side, 'rev-parse', 'HEAD');
    git(root, 'worktree', 'remove', '--force', side);

    const { reused, worktree } = await start(s, 'task-001');
    assert.equal(reused, false, 'a new worktree, made after the leftover was kept');
    assert.equal(git(worktree, 'rev-parse', 'HEAD'), s.head);
    assert.match(git(root, 'for-each-ref', '--format=%(objectname)', 'refs/launchpad/attempts/task-001/'), new RegExp(tip));
    assert.equal(git(slot, 'rev-parse', '--abbrev-ref', 'HEAD'), 'HEAD', 'the slot detached again');
    assert.deepEqual(readReady(linkedGitDir(slot)!), before, 'and ready as it was');
  });

  it('a task worktree handed back takes the place of a new slot not begun yet: it is pooled, the new one never made', async () => {
    const { s } = await sessionFor({ worktree_pool: 1 });
    await s.pool.open();
    const dispatch = s.pool.startDispatch(); // holds the new slot back
    s.pool.fill();
    const { worktree, reused } = await start(s, 'task-001');
    assert.equal(reused, false);
    await s.removeWorktree('task-001');
    const inode = (p: string) => statSync(p).ino;
    // Given back while the pool is full but for the unbegun slot: pooled.
    const given = join(poolDir(s.config.worktreeRoot), slots(s)[0] ?? 'none');
    assert.equal(slots(s).length, 1, 'the task worktree went into the pool');
    assert.ok(!existsSync(worktree));
    const ino = inode(given);
    dispatch();
    await s.pool.settled();
    assert.deepEqual(slots(s), [given.slice(given.lastIndexOf('/') + 1)], 'one slot, the handed-back one');
    assert.equal(inode(given), ino);
    assert.ok(readReady(linkedGitDir(given)!), 'prepared');
  });

  it("a session's end leaves the new slots not begun to the next session", async () => {
    const { s } = await sessionFor({ worktree_pool: 2 });
    await s.pool.open();
    const dispatch = s.pool.startDispatch();
    s.pool.fill();
    s.pool.close();
    dispatch();
    await s.pool.settled();
    assert.deepEqual(slots(s), [], 'none made after the close');
    await s.pool.open(); // the next session
    s.pool.fill();
    await s.pool.settled();
    assert.equal(slots(s).length, 2, 'the next session makes them');
  });

  it("the pool's own new worktrees wait while a dispatched task's new worktree is being made and set up", async () => {
    const { s } = await sessionFor({ worktree_pool: 2 });
    const first = s.pool.startDispatch();
    const second = s.pool.startDispatch();
    await s.pool.open();
    s.pool.fill();
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(slots(s), [], 'nothing made while two tasks wait for their worktrees');
    first();
    first(); // ending one twice does not end the other's
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(slots(s), [], 'nothing made while one task still waits');
    second();
    await s.pool.settled();
    assert.equal(slots(s).length, 2, 'made once it has its worktree');
  });
});
