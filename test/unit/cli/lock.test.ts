// The state lock seen from the CLI: add/retry wait for a live holder and give exit 3 naming it
// when it never lets go; a stale holder record (dead pid, reused pid) is reclaimed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

import { startCli } from '../helpers/cli';
import { tempDir } from '../helpers/tmp';
import {
  assertUnchanged,
  cli,
  holdLock,
  liveHolder,
  progressLines,
  rawTask,
  readTasks,
  sleep,
  snapshot,
  stateRoot,
  taskById,
} from './util';

function root(): string {
  return stateRoot(
    { version: 3, tasks: [rawTask('task-001', { status: 'failed', attempts: 3, error_log: ['[TEST_FAIL] boom'] })] },
    tempDir(),
  );
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', '']);
  assert.ok(r.pid);
  return r.pid;
}

describe('the state lock from the CLI', () => {
  it('add waits while another live process holds the lock, then succeeds once it is released', async () => {
    const dir = root();
    const lockDir = holdLock(dir, liveHolder('launchpad run'));
    const holderText = readFileSync(join(lockDir, 'holder.json'), 'utf8');
    const add = startCli(['add', 'queued'], { cwd: dir });
    // Give it time to start and find the lock held (a pause, not an assertion on timing).
    await sleep(1500);
    assert.equal(readTasks(dir).tasks.length, 1, 'add wrote while the lock was held');
    assert.equal(readFileSync(join(lockDir, 'holder.json'), 'utf8'), holderText, "add took over a live holder's lock");
    rmSync(lockDir, { recursive: true });
    const r = await add.done;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'task-002\n');
    assert.equal(taskById(dir, 'task-002').title, 'queued');
    assert.ok(!existsSync(lockDir), 'add did not release the lock');
  });

  it('exit 3 naming the holder when the lock is never released (add, retry; a holder on another host counts as live)', async function () {
    this.timeout(60_000);
    const holder = liveHolder('launchpad run');
    const a = root();
    const b = root();
    const c = root();
    holdLock(a, holder);
    holdLock(b, holder);
    // Another machine's process cannot be checked from here: it is assumed alive.
    holdLock(c, { pid: deadPid(), host: `not-${hostname()}`, command: 'launchpad add', acquired_at: '2025-07-01T11:00:00Z' });
    const before = [a, b, c].map((d) => snapshot(d));
    const [ra, rb, rc] = await Promise.all([
      startCli(['add', 'never'], { cwd: a }).done,
      startCli(['retry', 'task-001'], { cwd: b }).done,
      startCli(['add', 'never'], { cwd: c }).done,
    ]);
    for (const [r, d] of [
      [ra, a],
      [rb, b],
    ] as const) {
      assert.equal(r.code, 3, r.stderr);
      assert.ok(
        r.stderr.includes(`another session is active: launchpad run (pid=${process.pid} on ${hostname()}, since 2025-07-01T10:00:10Z)`),
        r.stderr,
      );
      assert.ok(r.stderr.includes(join(d, '.launchpad', 'state.lock')), r.stderr);
      assert.equal(r.stdout, '');
    }
    assert.equal(rc.code, 3, rc.stderr);
    assert.match(rc.stderr, new RegExp(`launchpad add \\(pid=\\d+ on not-${hostname()}, since 2025-07-01T11:00:00Z\\)`));
    [a, b, c].forEach((d, i) => assertUnchanged(before[i]!, d, 'a command refused by the lock'));
    assert.equal(progressLines(a).length, 0);
  });

  const stale: Array<[string, () => Parameters<typeof holdLock>[1]]> = [
    [
      'a dead pid',
      () => ({ pid: deadPid(), identity: 'whatever', host: hostname(), command: 'launchpad run', acquired_at: '2025-07-01T10:00:10Z' }),
    ],
    [
      'a dead pid without an identity (harness protocol style)',
      () => ({ pid: deadPid(), host: hostname(), command: 'launchpad run', acquired_at: '2025-07-01T10:00:10Z' }),
    ],
    ['a live pid whose identity differs (the pid was reused)', () => ({ ...liveHolder(), identity: 'boot:1' })],
  ];
  for (const [what, holder] of stale) {
    it(`reclaims a stale lock held by ${what}: add and retry succeed`, () => {
      const dir = root();
      const lockDir = holdLock(dir, holder());
      assert.equal(cli(['add', 'after a crash'], { cwd: dir }).stdout, 'task-002\n');
      assert.ok(!existsSync(lockDir));
      holdLock(dir, holder());
      cli(['retry', 'task-001'], { cwd: dir });
      assert.equal(taskById(dir, 'task-001').status, 'pending');
      assert.ok(!existsSync(lockDir));
    });
  }

  it('reclaims a lock folder left without a holder record by a crash during its creation', () => {
    const dir = root();
    const lockDir = holdLock(dir, undefined);
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockDir, old, old);
    assert.equal(cli(['add', 'x'], { cwd: dir }).stdout, 'task-002\n');
    assert.ok(!existsSync(lockDir));
  });

  it('status takes no lock: it answers while the state lock is held and leaves the lock alone', () => {
    const dir = root();
    const lockDir = holdLock(dir, liveHolder());
    const holderText = readFileSync(join(lockDir, 'holder.json'), 'utf8');
    const r = cli(['status', '--json'], { cwd: dir });
    assert.equal(JSON.parse(r.stdout).tasks_total, 1);
    assert.equal(readFileSync(join(lockDir, 'holder.json'), 'utf8'), holderText);
  });
});
