// A task's processes that leave its process group (setsid, bash's `set -m`) still end at its
// time limit, at Stop, when it exits, at its time limit after the controller was killed (the
// watchdog), and in the recovery run of a later session. Each case runs once per way of finding
// them that this machine offers: a cgroup, and the environment marker.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

import { cgroupsAvailable, runCgroupsParent, setCgroupsEnabled } from '../../../../src/core/process/cgroup';
import { canScanEnvironments, markedPids } from '../../../../src/core/process/environmentMarker';
import { ProcessRecords } from '../../../../src/core/process/processRecords';
import { escapedMessage, killAllProcessGroupsNow, runProcess } from '../../../../src/core/process/runProcess';
import { alive } from '../../helpers/processes';
import { tempDir } from '../../helpers/tmp';

async function until(what: string, cond: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function textOf(file: string): Promise<string> {
  await until(`${file}`, () => existsSync(file) && readFileSync(file, 'utf8').endsWith('\n'));
  return readFileSync(file, 'utf8').trim();
}

/** Live processes whose _LAUNCHPAD_PROC holds `token` (read here, not through the code tested). */
function carriers(token: string): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        const entry = readFileSync(`/proc/${n}/environ`, 'utf8')
          .split('\0')
          .find((e) => e.startsWith('_LAUNCHPAD_PROC='));
        return entry?.slice('_LAUNCHPAD_PROC='.length).split(' ').includes(token) ?? false;
      } catch {
        return false;
      }
    })
    .map(Number)
    .filter(alive);
}

const leftovers: number[] = [];
afterEach(() => {
  for (const pid of leftovers.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  }
});

/**
 * An agent-like command: one process leaves the group with setsid (and ignores SIGTERM), one is
 * a job of bash's job control (its own group); each writes its pid, the leader writes the
 * marker it was given, then everything waits. It prints nothing: a controller killed
 * mid-run would take the pipe with it, and a write would end the leader with SIGPIPE.
 */
const ESCAPING = [
  `setsid sh -c 'trap "" TERM; echo $$ > setsid.pid; exec sleep 300' &`,
  `bash -c 'set -m; sleep 300 & echo $! > job.pid; wait' &`,
  'echo "$_LAUNCHPAD_PROC" > token',
  'while [ ! -s setsid.pid ] || [ ! -s job.pid ]; do sleep 0.02; done',
  'wait',
].join('\n');

async function escapees(dir: string): Promise<{ token: string; pids: number[] }> {
  const pids = [Number(await textOf(join(dir, 'setsid.pid'))), Number(await textOf(join(dir, 'job.pid')))];
  leftovers.push(...pids);
  return { token: lastWord(await textOf(join(dir, 'token'))), pids };
}

/** The run's own token: the last of _LAUNCHPAD_PROC's (those before are inherited, when a task runs these tests). */
function lastWord(marker: string): string {
  return marker.split(' ').at(-1)!;
}

async function allGone(token: string, pids: number[]): Promise<void> {
  await until(`pids ${pids.join(', ')} to end`, () => !pids.some(alive));
  await until(`no process left carrying the marker ${token}`, () => carriers(token).length === 0);
}

// Each way of following a task's processes that this machine offers.
const modes = [
  ...(cgroupsAvailable() ? [{ name: 'in a cgroup', cgroups: true }] : []),
  ...(canScanEnvironments() ? [{ name: 'by environment marker', cgroups: false }] : []),
];

/** A process's parent pid, from /proc. */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

describe('core/process: processes that leave their group still end', function () {
  this.timeout(90_000);
  before(function () {
    if (!modes.length) this.skip(); // no /proc (macOS): process groups only
  });

  for (const mode of modes) {
    describe(mode.name, () => {
      let dir: string;
      let records: ProcessRecords;
      beforeEach(() => {
        setCgroupsEnabled(mode.cgroups);
        dir = tempDir('launchpad-escape-');
        records = new ProcessRecords(join(dir, 'procs'));
      });
      afterEach(() => {
        setCgroupsEnabled(true);
      });

      const record = () => ({ records, name: 'task-001.agent', label: 'agent of task-001' });

      it('at the time limit: SIGTERM, then SIGKILL for the one ignoring it; counted in `escaped`', async () => {
        const running = runProcess({ command: ESCAPING, cwd: dir, timeoutMs: 3000, graceMs: 500, record: record() });
        const { token, pids } = await escapees(dir);
        const r = await running;
        assert.equal(r.timedOut, true);
        assert.equal(r.escaped, 2);
        await allGone(token, pids);
        assert.deepEqual(readdirSync(join(dir, 'procs')), []);
      });

      it('at Stop (abort)', async () => {
        const stop = new AbortController();
        const running = runProcess({ command: ESCAPING, cwd: dir, signal: stop.signal, graceMs: 500, record: record() });
        const { token, pids } = await escapees(dir);
        assert.ok(pids.every(alive));
        stop.abort();
        const r = await running;
        assert.equal(r.aborted, true);
        assert.equal(r.escaped, 2);
        await allGone(token, pids);
      });

      it('when the task process exits, with its watchdog and its cgroup', async () => {
        let tracking: { cgroup?: string; watchdog?: { pid: number } } = {};
        let watchdogParent: number | undefined;
        const command = `setsid sleep 300 & echo $! > setsid.pid; echo "$_LAUNCHPAD_PROC" > token; grep '^0::' /proc/$$/cgroup > cgroup; echo started; sleep 0.2`;
        const r = await runProcess({
          command,
          cwd: dir,
          timeoutMs: 60_000,
          record: record(),
          onOutput: () => {
            tracking = JSON.parse(readFileSync(join(dir, 'procs', 'task-001.agent.json'), 'utf8')) as typeof tracking;
            watchdogParent ??= parentOf(tracking.watchdog!.pid);
          },
        });
        assert.equal(watchdogParent, process.pid, 'the watchdog started from this process');
        assert.equal(r.code, 0);
        assert.equal(r.escaped, 1);
        const setsid = Number(await textOf(join(dir, 'setsid.pid')));
        leftovers.push(setsid);
        await allGone(lastWord(await textOf(join(dir, 'token'))), [setsid]);
        assert.ok(tracking.watchdog, 'a run with a time limit has a watchdog');
        await until('the watchdog to be ended', () => !alive(tracking.watchdog!.pid));
        assert.equal(tracking.cgroup !== undefined, mode.cgroups, 'a cgroup exactly when cgroups are used');
        if (tracking.cgroup) {
          assert.equal(
            readFileSync(join(dir, 'cgroup'), 'utf8').trim().split('/').at(-1),
            basename(tracking.cgroup),
            'the command ran in it',
          );
          assert.ok(!existsSync(tracking.cgroup), 'the cgroup is removed');
        }
      });

      if (mode.cgroups) {
        it('a process that leaves the group and clears its environment (found by its cgroup only)', async () => {
          const command = `setsid env -i /bin/sh -c 'echo $$ > scrubbed.pid; exec sleep 300' & while [ ! -s scrubbed.pid ]; do sleep 0.02; done; wait`;
          const running = runProcess({ command, cwd: dir, timeoutMs: 2000, graceMs: 500, record: record() });
          const scrubbed = Number(await textOf(join(dir, 'scrubbed.pid')));
          leftovers.push(scrubbed);
          assert.ok(!readFileSync(`/proc/${scrubbed}/environ`, 'utf8').includes('_LAUNCHPAD_PROC'));
          const r = await running;
          assert.equal(r.timedOut, true);
          assert.equal(r.escaped, 1);
          await until('the scrubbed process to end', () => !alive(scrubbed));
        });
      }

      it('a run that leaves nothing behind reports escaped=0; an unrecorded run carries no marker', async () => {
        const recorded = await runProcess({ command: 'echo "$_LAUNCHPAD_PROC"', cwd: dir, record: record() });
        assert.match(recorded.stdout, /(^| )[0-9a-f]{24}\n$/);
        assert.equal(recorded.escaped, 0);
        const plain = await runProcess({ command: 'echo "${_LAUNCHPAD_PROC-none}"', cwd: dir, env: { PATH: process.env.PATH } });
        assert.equal(plain.stdout, 'none\n');
        assert.equal(plain.escaped, 0);
      });

      it('at an exit that cannot wait (killAllProcessGroupsNow, a second Ctrl-C), with its watchdog and cgroup', async () => {
        const running = runProcess({ command: ESCAPING, cwd: dir, timeoutMs: 300_000, record: record() });
        const { token, pids } = await escapees(dir);
        const rec = JSON.parse(await textOf(join(dir, 'procs', 'task-001.agent.json'))) as { cgroup?: string; watchdog: { pid: number } };
        killAllProcessGroupsNow();
        if (rec.cgroup) assert.ok(!existsSync(rec.cgroup), 'the cgroup is removed before it returns');
        await allGone(token, pids);
        await until('the watchdog to be ended', () => !alive(rec.watchdog.pid));
        assert.equal((await running).code, null);
      });

      describe('after the controller is killed with SIGKILL', () => {
        /** A node process that runs ESCAPING as a recorded task process, as the controller does. */
        function controller(timeoutMs: number) {
          const script = join(dir, 'controller.js');
          const src = (name: string) => JSON.stringify(join(__dirname, '../../../../src/core/process', name));
          writeFileSync(
            script,
            [
              `require(${src('cgroup.js')}).setCgroupsEnabled(${mode.cgroups});`,
              `const { ProcessRecords } = require(${src('processRecords.js')});`,
              `require(${src('runProcess.js')}).runProcess({`,
              `  command: ${JSON.stringify(ESCAPING)}, cwd: ${JSON.stringify(dir)}, timeoutMs: ${timeoutMs}, graceMs: 500,`,
              `  record: { records: new ProcessRecords(${JSON.stringify(join(dir, 'procs'))}), name: 'task-001.agent', label: 'agent of task-001' },`,
              '});',
            ].join('\n'),
          );
          const child = spawn(process.execPath, [script], { stdio: 'ignore' });
          const exited = new Promise((r) => child.on('exit', r));
          return {
            async kill9() {
              child.kill('SIGKILL');
              await exited;
            },
          };
        }

        async function recordOnDisk(): Promise<{ pid: number; cgroup?: string; watchdog: { pid: number } }> {
          return JSON.parse(await textOf(join(dir, 'procs', 'task-001.agent.json'))) as Awaited<ReturnType<typeof recordOnDisk>>;
        }

        it("the watchdog still ends the task's processes at its time limit, and its cgroup", async () => {
          const c = controller(6000);
          const { token, pids } = await escapees(dir);
          const rec = await recordOnDisk();
          leftovers.push(rec.pid, rec.watchdog.pid);
          await c.kill9();
          // Before the deadline they are still running: what ends them next is the watchdog.
          assert.ok(alive(rec.pid) && pids.every(alive), 'the processes outlive the controller until the deadline');
          await allGone(token, [rec.pid, ...pids]);
          await until('the watchdog to exit', () => !alive(rec.watchdog.pid));
          if (rec.cgroup) await until('the cgroup to be removed', () => !existsSync(rec.cgroup!));
        });

        it("the next session's recovery (records.endAll) ends them and the watchdog, and counts the escaped", async () => {
          const c = controller(300_000);
          const { token, pids } = await escapees(dir);
          const rec = await recordOnDisk();
          leftovers.push(rec.pid, rec.watchdog.pid);
          await c.kill9();
          assert.ok(pids.every(alive));
          assert.deepEqual(new ProcessRecords(join(dir, 'procs')).endAll(), [{ label: 'agent of task-001', escaped: 2 }]);
          await allGone(token, [rec.pid, ...pids]);
          await until('the watchdog to be ended', () => !alive(rec.watchdog.pid));
          if (rec.cgroup) assert.ok(!existsSync(rec.cgroup), 'the cgroup is removed');
          assert.deepEqual(readdirSync(join(dir, 'procs')), []);
        });

        it('recovery ends the escaped processes even when the group is gone', async () => {
          const c = controller(300_000);
          const { token, pids } = await escapees(dir);
          const rec = await recordOnDisk();
          leftovers.push(rec.pid, rec.watchdog.pid);
          await c.kill9();
          process.kill(-rec.pid, 'SIGKILL'); // the group only: the escapees live on
          await until('the group to end', () => !alive(rec.pid));
          assert.ok(pids.every(alive));
          assert.deepEqual(new ProcessRecords(join(dir, 'procs')).endAll(), [{ label: 'agent of task-001', escaped: 2 }]);
          await allGone(token, pids);
        });
      });
    });
  }
});

describe('core/process cgroups', () => {
  it('the first use in a process removes the empty cgroups of Launchpad processes that are gone, and only those', async function () {
    const parent = runCgroupsParent();
    if (!parent) this.skip();
    const gone = spawn('true');
    await new Promise((r) => gone.on('exit', r));
    const stale = join(parent!, `launchpad-${gone.pid}-0123abcd`);
    const staleProbe = join(parent!, `launchpad-probe-${gone.pid}-0123abcd`);
    const live = join(parent!, `launchpad-${process.pid}-0123abcd`);
    for (const d of [stale, staleProbe, live]) mkdirSync(d);
    try {
      const src = JSON.stringify(join(__dirname, '../../../../src/core/process/cgroup.js'));
      const r = spawnSync(process.execPath, ['-e', `process.exit(require(${src}).cgroupsAvailable() ? 0 : 1)`]);
      assert.equal(r.status, 0);
      assert.ok(!existsSync(stale) && !existsSync(staleProbe), 'the stale cgroups are removed');
      assert.ok(existsSync(live), "a live process's cgroup is kept");
    } finally {
      for (const d of [stale, staleProbe, live]) if (existsSync(d)) rmdirSync(d);
    }
  });
});

describe('core/process environment marker', () => {
  it("a task run inside a task adds its token to the inherited ones: the outer task's scan finds its processes", async function () {
    if (!canScanEnvironments()) this.skip();
    const dir = tempDir('launchpad-marker-');
    const stop = new AbortController();
    // Looked for when it has started: it ends at its first output.
    let found = false;
    const running = runProcess({
      command: 'echo "$_LAUNCHPAD_PROC"; sleep 300',
      cwd: dir,
      env: { ...process.env, _LAUNCHPAD_PROC: 'outer0token' },
      signal: stop.signal,
      record: { records: new ProcessRecords(join(dir, 'procs')), name: 'inner', label: 'inner task' },
      onSpawn: (pid) => (found = markedPids('outer0token').includes(pid)),
      onOutput: () => stop.abort(),
    });
    const r = await running;
    assert.ok(found, "the outer task's scan finds the inner task's process");
    const [outer, inner] = r.stdout.trim().split(' ');
    assert.equal(outer, 'outer0token');
    assert.match(inner!, /^[0-9a-f]{24}$/);
  });
});

describe('core/process escapedMessage', () => {
  it('names the count', () => {
    assert.equal(escapedMessage('agent', 1), 'agent: ended 1 process that had left its process group');
    assert.equal(escapedMessage('validation', 3), 'validation: ended 3 processes that had left its process group');
  });
});
