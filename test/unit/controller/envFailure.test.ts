// The machine's failures are never charged to the tasks: git lock files left behind, a full disk,
// a read-only state root, a missing agent or validation program. Each on a real repository with
// the real fault (a real lock file, a real read-only mount, a real full tmpfs): the run stops
// with exit 2 naming the cause and what to do, no attempt is charged, the lock is released and
// the session's STATS are written; once the fault is gone, the next run finishes the work.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  agentCmd,
  gates,
  git,
  harness,
  harnessBranches,
  linesOf,
  patchTask,
  read,
  readLog,
  type Result,
  run,
  show,
  shq,
  stats,
  taskById,
  tempDir,
} from './support';

const isRoot = process.getuid?.() === 0;
const mounts: string[] = [];

function tryRun(cmd: string, args: string[]): boolean {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function unmount(dir: string): void {
  for (let i = 0; i < 20 && tryRun('mountpoint', ['-q', dir]); i++) if (!tryRun('umount', [dir])) tryRun('umount', ['-l', dir]);
  const at = mounts.indexOf(dir);
  if (at >= 0) mounts.splice(at, 1);
}

/** A small tmpfs at a new folder (root only), or undefined where mounting is not permitted. */
function smallDisk(sizeMb: number): string | undefined {
  const dir = join(tempDir('launchpad-disk-'), 'disk');
  mkdirSync(dir);
  if (!isRoot || !tryRun('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir])) return undefined;
  mounts.push(dir);
  return dir;
}

/**
 * Makes `dir` really read-only for this process: chmod where that binds (not root), else a
 * read-only bind mount of it onto itself. Returns the undo, or why it cannot be done here.
 */
function readOnly(dir: string): (() => void) | string {
  if (!isRoot) {
    chmodSync(dir, 0o555);
    return () => chmodSync(dir, 0o755);
  }
  // Root writes through chmod 555: a read-only bind mount stops it.
  if (!tryRun('mount', ['--bind', dir, dir])) return 'mount --bind is not permitted in this sandbox';
  mounts.push(dir);
  if (!tryRun('mount', ['-o', 'remount,bind,ro', dir])) {
    unmount(dir);
    return 'a read-only remount is not permitted in this sandbox';
  }
  return () => unmount(dir);
}

/** Leaves `free` KB on the file system holding `dir` (a file that takes the rest). */
function fillDiskCmd(disk: string, freeKb: number): string {
  return `avail=$(df -k --output=avail ${shq(disk)} | tail -1); dd if=/dev/zero of=${shq(join(disk, 'filler'))} bs=1k count=$((avail - ${freeKb})) 2>/dev/null`;
}

/** What every stop for the machine's failure leaves: exit 2, the cause and the fix said, the lock released, STATS written. */
function assertEnvStop(root: string, r: Result, cause: RegExp, advice: RegExp): void {
  assert.equal(r.code, 2, show(r, root));
  assert.match(r.stdout, /stopped by the environment, not by the tasks/, show(r, root));
  assert.match(r.stdout, cause, show(r, root));
  assert.match(r.stdout, new RegExp(`to fix: ${advice.source}`), show(r, root));
  assert.doesNotMatch(r.stdout + r.stderr, /stopped by request|internal error|\n\s+at /, show(r, root));
  const errors = linesOf(root, 'ERROR').filter((l) => l.category === 'ENV_SETUP');
  assert.ok(
    errors.some((l) => l.task && cause.test(l.message) && /\(not charged/.test(l.message)),
    `no ERROR [id] [ENV_SETUP] <cause> (not charged) line\n${readLog(root).join('\n')}`,
  );
  assert.match(errors.at(-1)!.message, new RegExp(`^session stopped \\(no attempt was charged\\)\\. To fix: ${advice.source}`));
  assert.ok(stats(root, 1), 'no STATS line');
  assert.equal(linesOf(root, 'LOCK').at(-1)?.message, 'released');
  assert.ok(!existsSync(join(root, '.launchpad', 'session.lock')), 'the session lock was not released');
  assert.ok(existsSync(join(root, '.harness-active')), '.harness-active was removed');
}

describe("controller: the machine's failures are not charged to the tasks (ENV_SETUP)", function () {
  this.timeout(120_000);
  // Before the temporary folders go (a mounted folder cannot be removed).
  afterEach(() => [...mounts].reverse().forEach(unmount));

  it("a leftover .git/index.lock: exit 2 naming it, nothing charged, the agent's committed work kept and merged by the next run", async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    const lock = join(root, '.git', 'index.lock');
    writeFileSync(lock, '');
    const r = await run(root, agentCmd('writes-done.sh'));
    assertEnvStop(
      root,
      r,
      new RegExp(`git's lock file ${lock.replace(/[.]/g, '\\.')} exists`),
      new RegExp(`remove ${lock.replace(/[.]/g, '\\.')} if no git process is running`),
    );

    const t = taskById(root, 'task-001');
    assert.equal(t.attempts, 1, 'one attempt, in progress: the next run continues it');
    assert.deepEqual(t.error_log, []);
    assert.equal(t.status, 'in_progress', 'the committed work is left for the next run');
    assert.deepEqual(harnessBranches(root), ['harness-task-001']);
    assert.equal(linesOf(root, 'MERGE').length, 0);
    assert.ok(!existsSync(join(root, '.git', 'MERGE_HEAD')), 'a merge was started in the locked repository');

    rmSync(lock);
    const again = await run(root, agentCmd('fails.sh'));
    assert.equal(again.code, 0, show(again, root));
    assert.equal(taskById(root, 'task-001').status, 'completed');
    assert.equal(
      read(join(root, 'src/task-001/done.txt')),
      'done by task-001 attempt 1\n',
      "the first agent's commit was not the one merged",
    );
    assert.equal(linesOf(root, 'DISPATCH').length, 1, 'the work was done again by an agent');
    assert.equal(taskById(root, 'task-001').attempts, 1, 'the lock cost an attempt');
  });

  it('a leftover refs/heads/harness-task-001.lock (an agent killed inside git commit): one dispatch, not three; nothing charged', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    const lock = join(root, '.git', 'refs', 'heads', 'harness-task-001.lock');
    writeFileSync(lock, '');
    const r = await run(root, agentCmd('writes-done.sh'));
    const quoted = lock.replace(/[.]/g, '\\.');
    assertEnvStop(
      root,
      r,
      new RegExp(`git cannot lock refs/heads/harness-task-001: ${quoted} exists`),
      new RegExp(`remove ${quoted} if no git process is running`),
    );
    assert.equal(linesOf(root, 'DISPATCH').length, 1);
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'pending');
    assert.equal(t.attempts, 0);
    assert.deepEqual(t.error_log, []);

    rmSync(lock);
    const again = await run(root, agentCmd('writes-done.sh'));
    assert.equal(again.code, 0, show(again, root));
    assert.equal(taskById(root, 'task-001').attempts, 1);
  });

  it('an agent command that does not exist (`cladue`): found before any agent runs; no task charged, siblings included', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }, { id: 'task-002' }, { id: 'task-003' }] });
    // Quoted, so only the shell finds out: a plain `cladue` is refused before the run starts (cli/run.test.ts).
    const r = await run(root, '"cladue" -p "$(cat "$LAUNCHPAD_PROMPT_FILE")"');
    assertEnvStop(root, r, /agent command `cladue` not found on PATH/, /install `cladue` or fix the agent command/);
    for (const id of ['task-001', 'task-002', 'task-003']) {
      const t = taskById(root, id);
      assert.equal(t.attempts, 0, `${id} was charged`);
      assert.equal(t.status, 'pending', id);
      assert.deepEqual(t.error_log, [], id);
    }
    assert.equal(linesOf(root, 'AGENT_DONE').length, 0, 'an agent ran');
    assert.deepEqual(harnessBranches(root), []);
  });

  it('an agent command whose first word only the shell can resolve, exiting 127 "not found" before any work: the same', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    const r = await run(root, '"$NO_SUCH_AGENT_DIR/agent" --go', [], { NO_SUCH_AGENT_DIR: '/nonexistent-launchpad-dir' });
    assertEnvStop(root, r, /agent command `\/nonexistent-launchpad-dir\/agent` does not exist/, /install/);
    assert.equal(taskById(root, 'task-001').attempts, 0);
    assert.equal(taskById(root, 'task-001').status, 'pending');
  });

  it("a validation program that is not installed: checked before it runs; not charged; the agent's work waits for the next run", async () => {
    const root = harness({ tasks: [{ id: 'task-001', validate: 'launchpad-test-checker src/task-001/done.txt' }] });
    const r = await run(root, agentCmd('writes-done.sh'));
    assertEnvStop(
      root,
      r,
      /validation command `launchpad-test-checker` not found on PATH/,
      /install `launchpad-test-checker` or fix the task's validation\.command/,
    );
    const t = taskById(root, 'task-001');
    assert.deepEqual([t.status, t.attempts], ['in_progress', 1], 'one attempt, in progress: the next run continues it');
    assert.deepEqual(t.error_log, []);
    assert.equal(linesOf(root, 'VALIDATE').length, 0, 'the validation ran');

    // Installed (on PATH): the next run validates and merges the kept work without an agent.
    const bin = tempDir('launchpad-bin-');
    writeFileSync(join(bin, 'launchpad-test-checker'), '#!/bin/sh\ntest -f "$1"\n', { mode: 0o755 });
    const again = await run(root, agentCmd('fails.sh'), [], { PATH: `${bin}:${process.env.PATH}` });
    assert.equal(again.code, 0, show(again, root));
    assert.equal(taskById(root, 'task-001').status, 'completed');
    assert.equal(linesOf(root, 'DISPATCH').length, 1);
    assert.equal(taskById(root, 'task-001').attempts, 1, 'the missing program cost an attempt');
  });

  it('a read-only state root: exit 2 with the cause and "make DIR writable", no stack trace, nothing changed', async function () {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    const before = readFileSync(join(root, 'harness-tasks.json'), 'utf8');
    const undo = readOnly(root);
    if (typeof undo === 'string') return this.skip();
    let r;
    try {
      r = await run(root, agentCmd('writes-done.sh'));
    } finally {
      undo();
    }
    assert.equal(r.code, 2, show(r, root));
    assert.match(r.stderr, /read-only file system|permission denied/i, show(r));
    assert.match(r.stderr, new RegExp(`to fix: make ${root.replace(/[.]/g, '\\.')} writable`), show(r));
    assert.doesNotMatch(r.stderr, /internal error|\n\s+at /, show(r));
    assert.equal(readFileSync(join(root, 'harness-tasks.json'), 'utf8'), before);
    assert.equal(taskById(root, 'task-001').attempts, 0);
    // Nothing could be written in the state root: no session started, so no STATS and no lock.
    assert.ok(!existsSync(join(root, '.launchpad')), 'a lock folder appeared');
    assert.deepEqual(readLog(root), []);
  });

  it('a state root whose folder cannot take new files, though the task file is writable (its first write fails at the backup): exit 2 ENV_SETUP, not a controller error', async function () {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    mkdirSync(join(root, '.launchpad'), { recursive: true });
    writeFileSync(join(root, 'harness-progress.txt'), '', { flag: 'a' });
    writeFileSync(join(root, '.harness-active'), '');
    mkdirSync(join(root, '.agent-os', 'progress'), { recursive: true });
    // No new entry in the state root's folder (its files and .launchpad stay writable): chmod
    // where that binds, else (root) the immutable attribute.
    const locked = isRoot ? tryRun('chattr', ['+i', root]) : (chmodSync(root, 0o555), true);
    if (!locked) return this.skip();
    let r;
    try {
      r = await run(root, agentCmd('writes-done.sh'));
    } finally {
      if (isRoot) tryRun('chattr', ['-i', root]);
      else chmodSync(root, 0o755);
    }
    assert.equal(r.code, 2, show(r, root));
    assert.match(r.stdout, /cannot (write|copy to) .*harness-tasks\.json(\.bak\.tmp)?: (operation not permitted|permission denied)/);
    assert.match(r.stdout, /to fix: make .* writable/);
    assert.deepEqual(
      linesOf(root, 'ERROR').map((l) => l.category),
      ['ENV_SETUP', 'ENV_SETUP'],
      "the machine's failure, not a controller error",
    );
    const t = taskById(root, 'task-001');
    assert.deepEqual([t.status, t.attempts], ['pending', 0]);
  });

  it("Launchpad's own files cannot be written mid-session (a read-only .launchpad/runs): not charged, STATS written, lock released", async function () {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    const runs = join(root, '.launchpad', 'runs');
    mkdirSync(runs, { recursive: true });
    const undo = readOnly(runs);
    if (typeof undo === 'string') return this.skip();
    let r;
    try {
      r = await run(root, agentCmd('writes-done.sh'));
    } finally {
      undo();
    }
    const quoted = runs.replace(/[.]/g, '\\.');
    assertEnvStop(
      root,
      r,
      new RegExp(`cannot (write in|create the folder) ${quoted}(/task-001)?: (read-only file system|permission denied)`),
      new RegExp(`make ${quoted} writable`),
    );
    const t = taskById(root, 'task-001');
    assert.equal(t.attempts, 0);
    assert.equal(t.status, 'pending');
  });

  describe('a full disk (a real 6 MiB tmpfs)', () => {
    it('worktree creation fails for want of space: not charged, the half-made worktree removed', async function () {
      const disk = smallDisk(6);
      if (!disk) return this.skip();
      // A 2.5 MB file that does not compress: the repository holds it twice, a worktree would need it a third time.
      const big = randomBytes(2_600_000);
      mkdirSync(join(disk, 'repo'));
      const root = harness({ dir: join(disk, 'repo'), files: { 'README.md': '# p\n' }, tasks: [{ id: 'task-001' }] });
      writeFileSync(join(root, 'big.bin'), big);
      git(root, 'add', 'big.bin');
      git(root, 'commit', '-q', '-m', 'big');
      const r = await run(root, agentCmd('writes-done.sh'));
      assertEnvStop(
        root,
        r,
        /could not create worktree .*task-001: git could not write \(error: unable to write file big\.bin\); only \d+ KB free/,
        /free disk space/,
      );
      const t = taskById(root, 'task-001');
      assert.equal(t.attempts, 0);
      assert.equal(t.status, 'pending');
      assert.ok(!existsSync(join(disk, 'repo.launchpad-worktrees', 'task-001')), 'the half-made worktree is still taking the space');
    });

    it('a merge that dies mid-way: the main working tree is restored, nothing charged; after space is freed the next run merges', async function () {
      const disk = smallDisk(8);
      if (!disk) return this.skip();
      mkdirSync(join(disk, 'repo'));
      const root = harness({ dir: join(disk, 'repo'), tasks: [{ id: 'task-001', files: ['big.bin'], validate: 'test -f big.bin' }] });
      // The agent commits a 1.5 MB file, then another process takes all but 600 KB of the disk.
      const agent = `head -c 1500000 /dev/urandom > big.bin && git add big.bin && git commit -qm big && ${fillDiskCmd(disk, 600)} && echo RESULT:SUCCESS`;
      const r = await run(root, agent);
      assertEnvStop(root, r, /git: no space left on device/, /free disk space/);
      assert.match(
        linesOf(root, 'ROLLBACK', 'task-001').at(-1)!.message,
        /^merge of harness-task-001 failed \(.*\); main working tree restored$/,
      );
      assert.ok(!existsSync(join(root, 'big.bin')), 'the died merge left big.bin in the main working tree');
      assert.equal(
        git(root, 'status', '--porcelain', '--untracked-files=all', '--', '.', ':!harness-*', ':!.harness-active', ':!.agent-os'),
        '',
      );
      assert.deepEqual([taskById(root, 'task-001').status, taskById(root, 'task-001').attempts], ['in_progress', 1]);

      rmSync(join(disk, 'filler'));
      const again = await run(root, 'echo RESULT:FAIL not needed');
      assert.equal(again.code, 0, show(again, root));
      assert.equal(taskById(root, 'task-001').status, 'completed');
      assert.ok(existsSync(join(root, 'big.bin')));
    });

    it('the transcript cannot be written (ENOSPC on its stream): no crash, the run stops with the cause, nothing charged', async function () {
      const disk = smallDisk(8);
      if (!disk) return this.skip();
      mkdirSync(join(disk, 'repo'));
      const root = harness({ dir: join(disk, 'repo'), tasks: [{ id: 'task-001' }] });
      // Work committed, then 300 KB of output on a full disk; the space comes back once the transcript write has failed.
      const r = await run(root, agentCmd('floods-full-disk.sh'), [], { DISK: disk });
      assertEnvStop(root, r, /could not write .*attempt-1\/transcript\.log: no space left on device \(ENOSPC\)/, /free disk space/);
      const t = taskById(root, 'task-001');
      assert.equal(t.attempts, 1);
      assert.equal(t.status, 'in_progress', 'its committed work is kept for the next run');
      const again = await run(root, 'echo RESULT:FAIL not needed');
      assert.equal(again.code, 0, show(again, root));
      assert.deepEqual([taskById(root, 'task-001').status, taskById(root, 'task-001').attempts], ['completed', 1]);
    });
  });

  it('a worktree removed from under a running agent (by a person or another tool): not charged, the task runs again', async () => {
    const g = gates();
    const root = harness({ tasks: [{ id: 'a' }] });
    // The first time, the agent's own worktree is removed while it runs.
    const agent = `if [ ! -e ${shq(g.dir)}/removed ]; then : > ${shq(g.dir)}/removed; git -C ${shq(root)} worktree remove --force "$LAUNCHPAD_WORKTREE"; echo 'RESULT:FAIL my files are gone'; exit 1; fi; ${agentCmd('writes-done.sh')}`;
    const r = await run(root, agent);
    assert.equal(r.code, 0, show(r, root));
    const warn = linesOf(root, 'WARN', 'a').find((l) =>
      /its worktree .* was removed while the attempt ran: not charged, the task runs again/.test(l.message),
    );
    assert.ok(warn, readLog(root).join('\n'));
    assert.match(r.stdout, /note: a: its worktree .* was removed while the attempt ran; not charged/);
    const t = taskById(root, 'a');
    assert.deepEqual([t.status, t.attempts, t.error_log], ['completed', 1, []]);
    assert.equal(linesOf(root, 'ERROR').length, 0);
  });

  it('a CONFIG error (a task in progress without validation.command): named by file, task and field; the task left as it was', async () => {
    const root = harness({ tasks: [{ id: 'task-001', validate: null }] });
    // A run that was stopped left task-001 in progress with committed work on its branch.
    const base = git(root, 'rev-parse', 'HEAD');
    const wt = join(tempDir('launchpad-wt-'), 'task-001');
    git(root, 'worktree', 'add', '-q', '-b', 'harness-task-001', wt, base);
    writeFileSync(join(wt, 'work.txt'), 'work\n');
    git(wt, 'add', 'work.txt');
    git(wt, 'commit', '-q', '-m', 'work');
    patchTask(root, 'task-001', {
      status: 'in_progress',
      attempts: 1,
      agent_id: 'agent_x',
      worktree_branch: 'harness-task-001',
      started_at_commit: base,
    });
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 1, show(r, root));
    const line = linesOf(root, 'ERROR', 'task-001').find((l) => l.category === 'CONFIG');
    assert.ok(line, show(r, root));
    assert.match(
      line.message,
      /^harness-tasks\.json: task task-001 has no validation\.command \(tasks\[\]\.validation\.command\).*\(not charged\)$/,
    );
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'in_progress');
    assert.equal(t.attempts, 1);
    assert.deepEqual(t.error_log, []);
    assert.deepEqual(harnessBranches(root), ['harness-task-001'], 'its work was discarded');
  });
});
