import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

import { harnessProtocolLockDir, liveHarnessProtocolHolder } from '../../../src/core/harnessProtocolLock';
import { acquireLock, liveLockHolder, LockHeldError, type LockHolder, readLockHolder, tryAcquireLock } from '../../../src/core/lock';
import { isSameProcessAlive, processIdentity, processStartTimeMs } from '../../../src/core/processIdentity';
import { tempDir } from '../helpers/tmp';
import { FIXTURE_SCRIPTS } from './fixtures';

/** A pid that was just used and is now gone. */
function deadPid(): number {
  const r = spawnSync('true');
  assert.ok(r.pid > 0);
  return r.pid;
}

const children: ChildProcess[] = [];
function liveChild(): number {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  children.push(child);
  assert.ok(child.pid);
  return child.pid;
}

function writeHolder(lockDir: string, holder: Partial<LockHolder>): void {
  mkdirSync(lockDir, { recursive: true });
  writeFileSync(
    join(lockDir, 'holder.json'),
    JSON.stringify({ host: hostname(), command: 'launchpad run', acquired_at: '2025-07-01T10:00:00Z', ...holder }),
  );
}

function ageBy(path: string, seconds: number): void {
  const t = Date.now() / 1000 - seconds;
  utimesSync(path, t, t);
}

function heldError(fn: () => unknown): LockHeldError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof LockHeldError, `expected LockHeldError, got ${String(caught)}`);
  return caught;
}

describe('core/lock', () => {
  let root: string;
  let lockDir: string;
  beforeEach(() => {
    root = tempDir('launchpad-lock-');
    lockDir = join(root, '.launchpad', 'state.lock');
  });
  after(() => children.forEach((c) => c.kill('SIGKILL')));

  describe('tryAcquireLock', () => {
    it('creates the lock dir (and its parent) with a holder record carrying an identity beside the pid', () => {
      const handle = tryAcquireLock(lockDir, 'launchpad run');
      const holder = readLockHolder(lockDir)!;
      assert.equal(holder.pid, process.pid);
      assert.equal(holder.identity, processIdentity(process.pid));
      assert.ok(holder.identity, 'an identity is recorded');
      assert.equal(holder.host, hostname());
      assert.equal(holder.command, 'launchpad run');
      assert.ok(!Number.isNaN(Date.parse(holder.acquired_at)));
      assert.deepEqual(handle.holder, holder);
      assert.equal(handle.reclaimedFrom, undefined);
      assert.equal(readFileSync(join(lockDir, 'pid'), 'utf8').trim(), String(process.pid), "the harness protocol's $LOCKDIR/pid");
      handle.release();
    });

    it('a second acquire fails fast with LockHeldError naming pid, command and host', () => {
      const handle = tryAcquireLock(lockDir, 'launchpad run');
      const e = heldError(() => tryAcquireLock(lockDir, 'launchpad add'));
      assert.equal(e.holder?.pid, process.pid);
      assert.match(e.message, new RegExp(`launchpad run \\(pid=${process.pid} on ${hostname()}, since `));
      assert.equal(e.lockDir, lockDir);
      assert.equal(liveLockHolder(lockDir)?.pid, process.pid);
      handle.release();
    });

    it('reclaims a lock whose holder pid is dead, and says from whom', () => {
      const pid = deadPid();
      writeHolder(lockDir, { pid, identity: 'whatever' });
      assert.equal(liveLockHolder(lockDir), undefined);
      const handle = tryAcquireLock(lockDir, 'launchpad run');
      assert.equal(handle.reclaimedFrom?.pid, pid);
      assert.equal(readLockHolder(lockDir)?.pid, process.pid);
      assert.deepEqual(readdirSync(root + '/.launchpad'), ['state.lock'], 'the stale copy is gone');
      handle.release();
    });

    it('reclaims a lock whose pid is alive but belongs to another process now (reused pid)', () => {
      const pid = liveChild();
      writeHolder(lockDir, { pid, identity: 'boot-id:12345' });
      assert.equal(isSameProcessAlive(pid, undefined), true);
      const handle = tryAcquireLock(lockDir, 'launchpad run');
      assert.equal(handle.reclaimedFrom?.pid, pid);
      assert.equal(handle.reclaimedFrom?.identity, 'boot-id:12345');
      handle.release();
    });

    it('a live holder with its recorded identity keeps the lock', () => {
      const pid = liveChild();
      writeHolder(lockDir, { pid, identity: processIdentity(pid), command: 'launchpad run --agent x' });
      const e = heldError(() => tryAcquireLock(lockDir, 'launchpad add'));
      assert.match(e.message, new RegExp(`launchpad run --agent x \\(pid=${pid} on `));
      assert.equal(liveLockHolder(lockDir)?.pid, pid);
    });

    it('a live holder that recorded no identity (an older writer) keeps the lock', () => {
      const pid = liveChild();
      writeHolder(lockDir, { pid });
      heldError(() => tryAcquireLock(lockDir, 'launchpad add'));
    });

    it('a holder on another host is assumed alive: its pid means nothing here', () => {
      writeHolder(lockDir, { pid: deadPid(), host: 'elsewhere.invalid' });
      const e = heldError(() => tryAcquireLock(lockDir, 'launchpad add'));
      assert.match(e.message, /on elsewhere\.invalid/);
    });

    it('a holder on another host: the message says how to free it, and the lock is never taken over', () => {
      writeHolder(lockDir, { pid: deadPid(), host: 'elsewhere.invalid' });
      ageBy(lockDir, 3600);
      const before = readFileSync(join(lockDir, 'holder.json'), 'utf8');
      for (let i = 0; i < 2; i++) {
        const e = heldError(() => tryAcquireLock(lockDir, 'launchpad add'));
        assert.ok(e.message.endsWith(`if no launchpad runs on elsewhere.invalid, remove ${lockDir}`), e.message);
      }
      assert.equal(readFileSync(join(lockDir, 'holder.json'), 'utf8'), before);
    });

    it('a holder on this host is not told to remove anything: its liveness is checked instead', () => {
      const pid = liveChild();
      writeHolder(lockDir, { pid, identity: processIdentity(pid) });
      assert.doesNotMatch(heldError(() => tryAcquireLock(lockDir, 'launchpad add')).message, /remove/);
    });

    it('a lock dir without holder.json younger than 5 s counts as held (being created)', () => {
      mkdirSync(lockDir, { recursive: true });
      const e = heldError(() => tryAcquireLock(lockDir, 'launchpad add'));
      assert.equal(e.holder, undefined);
      assert.match(e.message, /no holder record yet/);
      assert.ok(existsSync(lockDir));
    });

    it('a lock dir without holder.json older than 5 s is stale and reclaimed', () => {
      mkdirSync(lockDir, { recursive: true });
      writeFileSync(join(lockDir, 'pid'), '12345\n');
      ageBy(lockDir, 10);
      const handle = tryAcquireLock(lockDir, 'launchpad run');
      assert.equal(handle.reclaimedFrom, undefined);
      assert.equal(readLockHolder(lockDir)?.pid, process.pid);
      handle.release();
    });

    it('an unreadable holder.json follows the same age rule', () => {
      mkdirSync(lockDir, { recursive: true });
      writeFileSync(join(lockDir, 'holder.json'), '{"pid": ');
      heldError(() => tryAcquireLock(lockDir, 'launchpad add'));
      ageBy(lockDir, 10);
      tryAcquireLock(lockDir, 'launchpad run').release();
    });
  });

  describe('leftovers of a killed acquirer', () => {
    /** A folder named as tryAcquireLock names its staging (`new`) or aside (`stale`) copies. */
    function leftover(kind: string, pid: number, ageSeconds = 0, tag = kind.endsWith('new') ? 'abcd1234' : '1700000000000'): string {
      const dir = `${lockDir}.${kind}.${pid}.${tag}`;
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(dir, 'holder.json'),
        JSON.stringify({ pid, host: hostname(), command: 'killed', acquired_at: '2025-07-01T10:00:00Z' }),
      );
      if (ageSeconds) ageBy(dir, ageSeconds);
      return dir;
    }

    it("are swept when a lock is taken: a dead creator's at once, a live creator's only after a minute", () => {
      const dead = deadPid();
      const live = liveChild();
      const gone = [leftover('new', dead), leftover('stale', dead), leftover('reclaim.stale', dead), leftover('new', live, 61, 'old00000')];
      const kept = leftover('new', live);
      const other = join(root, '.launchpad', 'session.lock.new.' + dead + '.abcd1234');
      mkdirSync(other);
      const handle = tryAcquireLock(lockDir, 'launchpad add');
      for (const dir of gone) assert.ok(!existsSync(dir), `${dir} was not swept`);
      assert.ok(existsSync(kept), "a live creator's fresh staging folder was removed");
      assert.ok(existsSync(other), "another lock's leftovers are that lock's to sweep");
      handle.release();
      assert.deepEqual(
        readdirSync(join(root, '.launchpad')).sort(),
        [`state.lock.new.${live}.abcd1234`, `session.lock.new.${dead}.abcd1234`].sort(),
      );
    });

    it('are swept even when the lock itself is held (the sweep does not need the lock)', () => {
      const holder = liveChild();
      writeHolder(lockDir, { pid: holder, identity: processIdentity(holder) });
      const dir = leftover('new', deadPid());
      heldError(() => tryAcquireLock(lockDir, 'launchpad add'));
      assert.ok(!existsSync(dir));
    });
  });

  describe("the harness protocol's own lock on the state root", () => {
    const made: string[] = [];
    afterEach(() => made.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

    /** What a shell agent following the protocol creates: /tmp/harness-<hash>.lock/pid. */
    function shellLock(stateRoot: string, pid: number | undefined, pidWrittenSecondsAgo = 0): string {
      const dir = harnessProtocolLockDir(stateRoot);
      made.push(dir);
      mkdirSync(dir);
      if (pid !== undefined) {
        writeFileSync(join(dir, 'pid'), `${pid}\n`);
        if (pidWrittenSecondsAgo) ageBy(join(dir, 'pid'), pidWrittenSecondsAgo);
      }
      return dir;
    }

    it('is /tmp/harness-<first 16 hex of sha256(state root)>.lock, as the protocol computes it', () => {
      const hash = createHash('sha256').update('/work/project').digest('hex').slice(0, 16);
      assert.equal(harnessProtocolLockDir('/work/project'), `/tmp/harness-${hash}.lock`);
      const shell = spawnSync('sh', ['-c', `printf '%s' /work/project | (shasum -a 256 2>/dev/null || sha256sum) | cut -c1-16`], {
        encoding: 'utf8',
      });
      assert.equal(shell.stdout.trim(), hash);
    });

    it('held by a live process: both locks refuse with LockHeldError naming it, and ours is not left behind', () => {
      const pid = liveChild();
      const foreign = shellLock(root, pid);
      for (const name of ['session.lock', 'state.lock']) {
        const e = heldError(() => tryAcquireLock(join(root, '.launchpad', name), 'launchpad run'));
        assert.equal(e.kind, 'harness-protocol');
        assert.equal(e.lockDir, foreign);
        assert.equal(e.holder?.pid, pid);
        assert.match(
          e.message,
          new RegExp(`^another agent is working this state root: the harness protocol's lock ${foreign} is held by pid=${pid} `),
        );
      }
      assert.ok(!existsSync(join(root, '.launchpad')), 'a refused lock left its folder behind');
      assert.equal(readFileSync(join(foreign, 'pid'), 'utf8'), `${pid}\n`);
    });

    it('acquireLock waits for it like for our own lock, then takes ours once the agent is done', async () => {
      const foreign = shellLock(root, liveChild());
      let done = false;
      setTimeout(() => {
        done = true;
        rmSync(foreign, { recursive: true });
      }, 150);
      const handle = await acquireLock(lockDir, 'launchpad add', 10_000);
      assert.equal(done, true, 'took our lock while the agent still held its own');
      assert.equal(readLockHolder(lockDir)?.command, 'launchpad add');
      handle.release();
    });

    it('held by a dead process: ignored and left alone (not ours to reclaim)', () => {
      const pid = deadPid();
      const foreign = shellLock(root, pid);
      const handle = tryAcquireLock(lockDir, 'launchpad run');
      assert.equal(readLockHolder(lockDir)?.pid, process.pid);
      handle.release();
      assert.equal(readFileSync(join(foreign, 'pid'), 'utf8'), `${pid}\n`, 'the protocol lock was touched');
    });

    it('held by a live pid that started after the pid was written (a reused pid): ignored', () => {
      const pid = liveChild();
      shellLock(root, pid, 3600);
      assert.ok(processStartTimeMs(pid)! > Date.now() - 60_000, 'the child started just now');
      assert.equal(liveHarnessProtocolHolder(root), undefined);
      tryAcquireLock(lockDir, 'launchpad run').release();
    });

    it('without its pid file: held while young (being created), ignored once older', () => {
      const foreign = shellLock(root, undefined);
      const e = heldError(() => tryAcquireLock(lockDir, 'launchpad add'));
      assert.equal(e.holder, undefined);
      assert.match(e.message, /has no pid yet/);
      ageBy(foreign, 10);
      tryAcquireLock(lockDir, 'launchpad add').release();
      assert.ok(existsSync(foreign));
    });

    it('found through the real path when the state root is reached through a symbolic link', () => {
      const link = join(tempDir('launchpad-link-'), 'via-link');
      symlinkSync(root, link);
      shellLock(root, liveChild());
      heldError(() => tryAcquireLock(join(link, '.launchpad', 'state.lock'), 'launchpad add'));
    });

    it("only guards locks in a state root's .launchpad folder", () => {
      shellLock(root, liveChild());
      tryAcquireLock(join(root, 'elsewhere', 'state.lock'), 'launchpad add').release();
    });
  });

  describe('two reclaimers of one stale lock', () => {
    it('the slower one does not take the lock the faster one has just reclaimed', () => {
      writeHolder(lockDir, { pid: deadPid() });
      // Let a rival reclaim the stale lock completely at the moment we reach for the reclaim
      // guard: by then our first look at the lock (stale) is out of date.
      const fs = require('node:fs') as typeof import('node:fs');
      const realMkdir = fs.mkdirSync;
      let rival: ReturnType<typeof tryAcquireLock> | undefined;
      (fs as { mkdirSync: unknown }).mkdirSync = function (this: unknown, path: string, ...rest: unknown[]) {
        if (!rival && path === `${lockDir}.reclaim`) {
          (fs as { mkdirSync: unknown }).mkdirSync = realMkdir;
          rival = tryAcquireLock(lockDir, 'the rival');
        }
        return (realMkdir as (...a: unknown[]) => unknown).call(this, path, ...rest);
      };
      try {
        const err = heldError(() => tryAcquireLock(lockDir, 'me'));
        assert.equal(err.holder?.command, 'the rival');
      } finally {
        (fs as { mkdirSync: unknown }).mkdirSync = realMkdir;
      }
      assert.ok(rival?.reclaimedFrom, 'the rival reclaimed the stale lock');
      assert.equal(readLockHolder(lockDir)?.command, 'the rival', 'the rival still holds it');
      assert.ok(!existsSync(`${lockDir}.reclaim`), 'the reclaim guard is gone');
      rival.release();
    });

    it('a reclaim guard left by a reclaimer that died is ignored after its grace period', () => {
      writeHolder(lockDir, { pid: deadPid() });
      mkdirSync(`${lockDir}.reclaim`);
      heldError(() => tryAcquireLock(lockDir, 'me'));
      ageBy(`${lockDir}.reclaim`, 11);
      const handle = tryAcquireLock(lockDir, 'me');
      assert.equal(readLockHolder(lockDir)?.command, 'me');
      handle.release();
    });
  });

  describe('release', () => {
    it('removes the lock; a second release is harmless; the lock can be taken again', () => {
      const handle = tryAcquireLock(lockDir, 'a');
      handle.release();
      assert.equal(existsSync(lockDir), false);
      handle.release();
      const again = tryAcquireLock(lockDir, 'b');
      handle.release();
      assert.ok(existsSync(lockDir), "a stale handle's release does not remove the new holder's lock");
      again.release();
      assert.equal(existsSync(lockDir), false);
    });

    it('never removes a lock someone else took over', () => {
      const handle = tryAcquireLock(lockDir, 'a');
      const other = liveChild();
      // Another process declared ours stale and took the lock over.
      writeHolder(lockDir, { pid: other, identity: processIdentity(other), command: 'launchpad run' });
      handle.release();
      assert.equal(readLockHolder(lockDir)?.pid, other);
    });

    it('never removes a lock another process is creating right now (no holder.json yet)', () => {
      const handle = tryAcquireLock(lockDir, 'a');
      // Ours vanished (removed by hand) and another process has just made the directory.
      rmSync(lockDir, { recursive: true });
      mkdirSync(lockDir);
      handle.release();
      assert.ok(existsSync(lockDir), "release removed another process's fresh lock");
    });
  });

  describe('acquireLock', () => {
    it('waits for the holder to release, then takes the lock', async () => {
      const first = tryAcquireLock(lockDir, 'first');
      let released = false;
      setTimeout(() => {
        released = true;
        first.release();
      }, 120);
      const second = await acquireLock(lockDir, 'second', 5000);
      assert.equal(released, true);
      assert.equal(readLockHolder(lockDir)?.command, 'second');
      second.release();
    });

    it('gives up with LockHeldError after its timeout', async () => {
      const first = tryAcquireLock(lockDir, 'first');
      await assert.rejects(acquireLock(lockDir, 'second', 80), LockHeldError);
      assert.equal(readLockHolder(lockDir)?.command, 'first');
      first.release();
    });
  });

  describe('processes racing for one lock', function () {
    this.timeout(30_000);

    interface Outcome {
      pid: number;
      won: boolean;
      held?: boolean;
      error?: string;
      reclaimed?: number | null;
    }

    async function race(dir: string, racers: number): Promise<Outcome[]> {
      const startAt = Date.now() + 1500;
      const procs = Array.from({ length: racers }, () => {
        const child = spawn(process.execPath, [join(FIXTURE_SCRIPTS, 'lockRacer.js'), dir, String(startAt)], {
          stdio: ['pipe', 'pipe', 'inherit'],
        });
        children.push(child);
        let out = '';
        const reported = new Promise<Outcome>((resolve, reject) => {
          child.stdout!.on('data', (d: Buffer) => {
            out += d.toString();
            if (out.includes('\n')) resolve(JSON.parse(out) as Outcome);
          });
          child.on('exit', (code) => reject(new Error(`racer exited ${code} before reporting: ${out}`)));
        });
        const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
        return { child, reported, exited };
      });
      // A winner holds the lock until every racer has tried, however late one of them started.
      const outcomes = await Promise.all(procs.map((p) => p.reported));
      procs.forEach((p) => p.child.stdin!.end());
      assert.deepEqual(
        await Promise.all(procs.map((p) => p.exited)),
        procs.map(() => 0),
      );
      return outcomes;
    }

    function exactlyOneWinner(outcomes: Outcome[]): void {
      const winners = outcomes.filter((o) => o.won);
      assert.equal(winners.length, 1, JSON.stringify(outcomes));
      for (const o of outcomes) if (!o.won) assert.equal(o.held, true, `a loser failed with something else: ${o.error}`);
    }

    it('a free lock: exactly one of four wins, the others get LockHeldError', async () => {
      exactlyOneWinner(await race(lockDir, 4));
      assert.equal(existsSync(lockDir), false, 'the winner released it');
    });
  });
});

describe('core/processIdentity', () => {
  it('gives this process a stable identity, different from another live process', () => {
    const mine = processIdentity(process.pid);
    assert.ok(mine);
    assert.equal(processIdentity(process.pid), mine);
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const theirs = processIdentity(child.pid!);
      assert.ok(theirs);
      assert.notEqual(theirs, mine);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('gives no identity for a dead pid', () => {
    assert.equal(processIdentity(deadPid()), undefined);
  });

  it('isSameProcessAlive: alive and, when an identity is given, the same process', () => {
    const mine = processIdentity(process.pid);
    assert.equal(isSameProcessAlive(process.pid, mine), true);
    assert.equal(isSameProcessAlive(process.pid, undefined), true);
    assert.equal(isSameProcessAlive(process.pid, `${mine}-not`), false);
    assert.equal(isSameProcessAlive(deadPid(), undefined), false);
    for (const bad of [0, -1, 1.5, Number.NaN]) assert.equal(isSameProcessAlive(bad, undefined), false, String(bad));
  });
});
