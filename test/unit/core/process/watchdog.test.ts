// The watchdog beside a task process, when the controller that started it is killed (SIGKILL):
// at any point of the task's start it never outlives the next session's start unrecorded, and
// one told to watch its controller ends the task's processes at once.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { cgroupsAvailable } from '../../../../src/core/process/cgroup';
import { ProcessRecords } from '../../../../src/core/process/processRecords';
import { alive } from '../../helpers/processes';
import { tempDir } from '../../helpers/tmp';

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Live processes whose command line holds `word` as one of its arguments. */
function withArgument(word: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').includes(word) && alive(Number(name))) found.push(Number(name));
    } catch {
      // gone
    }
  }
  return found;
}

const leftovers: number[] = [];
afterEach(() => {
  // Their groups too: what a failed test left includes the groups' other processes.
  for (const pid of leftovers.splice(0)) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // gone, as it should be (or not a group)
      }
    }
  }
});

const modes = [...(cgroupsAvailable() ? [{ name: 'in a cgroup', cgroups: true }] : []), { name: 'without a cgroup', cgroups: false }];

describe('core/process: the watchdog after its controller is killed', function () {
  this.timeout(180_000);
  before(function () {
    if (process.platform !== 'linux') this.skip(); // the checks read /proc
  });

  for (const mode of modes) {
    describe(mode.name, () => {
      let dir: string;
      beforeEach(() => (dir = tempDir('launchpad-watchdog-')));

      /**
       * A node process that starts `command` as a recorded task process with a time limit, as the
       * controller does, and prints `go` just before. `controllerWatched`: an in-place agent's.
       */
      function controller(command: string, timeoutMs: number, controllerWatched = false, at = dir) {
        const script = join(at, 'controller.js');
        const src = (name: string) => JSON.stringify(join(__dirname, '../../../../src/core/process', name));
        writeFileSync(
          script,
          [
            `require(${src('cgroup.js')}).setCgroupsEnabled(${mode.cgroups});`,
            `const { ProcessRecords } = require(${src('processRecords.js')});`,
            `process.stdout.write('go\\n');`,
            `require(${src('runProcess.js')}).runProcess({`,
            `  command: ${JSON.stringify(command)}, cwd: ${JSON.stringify(at)}, timeoutMs: ${timeoutMs}, graceMs: 500,`,
            `  endWithController: ${controllerWatched},`,
            `  record: { records: new ProcessRecords(${JSON.stringify(join(at, 'procs'))}), name: 'task-001.agent', label: 'agent of task-001' },`,
            '});',
          ].join('\n'),
        );
        const child: ChildProcess = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'ignore'] });
        const exited = new Promise((r) => child.on('exit', r));
        const go = new Promise<void>((r) => child.stdout!.once('data', () => r()));
        return {
          go,
          async kill9() {
            child.kill('SIGKILL');
            await exited;
          },
        };
      }

      it('one watching its controller ends the run as soon as the controller is killed; one that does not waits for the deadline', async () => {
        // Each run: a process that leaves the group, and the group's own; each writes its pid.
        const command = (name: string) =>
          `setsid sh -c 'echo $$ > ${name}.setsid; exec sleep 300' & echo $$ > ${name}.leader; sleep 300 & wait`;
        const pidsOf = async (at: string, name: string) => {
          const files = [join(at, `${name}.setsid`), join(at, `${name}.leader`)];
          await until(`${name}'s pids`, () => files.every((f) => existsSync(f) && readFileSync(f, 'utf8').endsWith('\n')));
          const pids = files.map((f) => Number(readFileSync(f, 'utf8')));
          const record = JSON.parse(readFileSync(join(at, 'procs', 'task-001.agent.json'), 'utf8')) as { watchdog: { pid: number } };
          leftovers.push(...pids, record.watchdog.pid);
          return pids;
        };
        const other = tempDir('launchpad-watchdog-');
        const watched = controller(command('watched'), 3_600_000, true);
        const unwatched = controller(command('unwatched'), 3_600_000, false, other);
        const watchedPids = await pidsOf(dir, 'watched');
        const unwatchedPids = await pidsOf(other, 'unwatched');
        await Promise.all([watched.kill9(), unwatched.kill9()]);
        await until('the watched run to end', () => !watchedPids.some(alive));
        assert.ok(unwatchedPids.every(alive), 'without a controller to watch, the run goes on until its time limit');
        new ProcessRecords(join(other, 'procs')).endAll();
      });

      it("a kill at any point of the start leaves no watchdog and no task process past the next session's start", async () => {
        // Unique time limits: the watchdog's `sleep` and the task's own are found by their argument.
        const timeoutMs = 3_600_000 + Math.floor(Math.random() * 1000);
        const watchdogSleep = ((timeoutMs + 1000) / 1000).toFixed(3);
        const taskSleep = `${2999 + Math.floor(Math.random() * 1000)}.5`;
        const procs = join(dir, 'procs');
        const record = join(procs, 'task-001.agent.json');

        // How long the start takes here, from `go` to the record on disk: the kills land around it.
        const first = controller(`exec sleep ${taskSleep}`, timeoutMs);
        await first.go;
        const t0 = process.hrtime.bigint();
        while (!existsSync(record)) {
          assert.ok(process.hrtime.bigint() - t0 < 30_000_000_000n, 'the task process is recorded');
          await new Promise((r) => setImmediate(r));
        }
        const startMs = Number(process.hrtime.bigint() - t0) / 1e6;
        await first.kill9();
        new ProcessRecords(procs).endAll();

        const points = Array.from({ length: 48 }, (_, i) => Math.max(0, startMs - 10 + i * 0.25));
        for (const [i, at] of points.entries()) {
          const c = controller(`exec sleep ${taskSleep}`, timeoutMs);
          await c.go;
          const from = process.hrtime.bigint();
          while (Number(process.hrtime.bigint() - from) / 1e6 < at);
          await c.kill9();
          // The next session's start.
          new ProcessRecords(procs).endAll();
          try {
            await until(
              'no watchdog and no task process left',
              () => withArgument(watchdogSleep).length + withArgument(taskSleep).length === 0,
              3000,
            );
          } catch {
            const left = [...withArgument(watchdogSleep), ...withArgument(taskSleep)];
            leftovers.push(...left);
            assert.fail(`killed ${at.toFixed(2)} ms after go (point ${i}): still running: ${left.join(', ')}`);
          }
        }
      });
    });
  }
});
