import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { setCgroupsEnabled } from '../../../../src/core/process/cgroup';
import { ProcessRecords } from '../../../../src/core/process/processRecords';
import { runProcess } from '../../../../src/core/process/runProcess';
import { processIdentity } from '../../../../src/core/processIdentity';
import { alive, dead } from '../../helpers/processes';
import { tempDir } from '../../helpers/tmp';

async function pidFrom(file: string): Promise<number> {
  for (let i = 0; i < 500; i++) {
    const text = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
    if (/^\d+$/.test(text)) return Number(text);
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no pid in ${file}`);
}

const leftovers: number[] = [];
function track(pid: number): number {
  leftovers.push(pid);
  return pid;
}

describe('core/process/runProcess', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(() => {
    dir = tempDir('launchpad-proc-');
  });
  afterEach(() => {
    for (const pid of leftovers.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone, as it should be
      }
    }
  });

  describe('results', () => {
    it('starts the command from this process, in a process group of its own', async () => {
      const r = await runProcess({ command: 'echo $PPID $$; ps -o pgid= -p $$', cwd: dir });
      const [ppid, pid, pgid] = r.stdout.trim().split(/\s+/).map(Number);
      assert.deepEqual([ppid, pgid], [process.pid, pid], r.stdout);
    });

    it('reports exit codes and signals', async () => {
      assert.equal((await runProcess({ command: 'true', cwd: dir })).code, 0);
      const three = await runProcess({ command: 'exit 3', cwd: dir });
      assert.equal(three.code, 3);
      assert.equal(three.signal, null);
      assert.equal(three.timedOut, false);
      assert.equal(three.aborted, false);
      const killed = await runProcess({ command: { file: 'sh', args: ['-c', 'kill -TERM $$'] }, cwd: dir });
      assert.equal(killed.code, null);
      assert.equal(killed.signal, 'SIGTERM');
    });

    it('captures stdout and stderr apart, and both in the tail', async () => {
      const r = await runProcess({ command: 'echo out; echo err >&2; echo out2', cwd: dir });
      assert.equal(r.stdout, 'out\nout2\n');
      assert.equal(r.stderr, 'err\n');
      for (const s of ['out\n', 'err\n', 'out2\n']) assert.ok(r.tail.includes(s));
      assert.equal(r.tail.length, r.stdout.length + r.stderr.length);
    });

    it('keeps only the last captureBytes of each stream and of the tail', async () => {
      const r = await runProcess({
        command: 'i=0; while [ $i -lt 3000 ]; do echo "line $i"; i=$((i+1)); done; echo LAST >&2',
        cwd: dir,
        captureBytes: 100,
      });
      assert.equal(r.stdout.length, 100);
      assert.ok(r.stdout.endsWith('line 2999\n'));
      assert.equal(r.stderr, 'LAST\n');
      assert.equal(r.tail.length, 100);
      assert.ok(r.tail.includes('LAST'));
    });

    it('decodes UTF-8 split across reads', async () => {
      const r = await runProcess({ command: 'yes é | head -n 40000 | tr -d "\\n"', cwd: dir });
      assert.equal(r.stdout, 'é'.repeat(40000));
    });

    it('runs in cwd with the env given; an argument array bypasses the shell', async () => {
      // Only the variables given: this process's HOME is not among them.
      const r = await runProcess({
        command: 'pwd; echo "$LP_TEST_VAR"; echo "${HOME-no HOME}"',
        cwd: dir,
        env: { PATH: process.env.PATH, LP_TEST_VAR: 'from env' },
      });
      assert.equal(r.stdout, `${realpathSync(dir)}\nfrom env\nno HOME\n`);
      // No env: this process's own.
      const inherited = await runProcess({ command: 'echo "$PATH"', cwd: dir });
      assert.equal(inherited.stdout, `${process.env.PATH}\n`);
      const literal = await runProcess({ command: { file: 'printf', args: ['%s|%s', '$(echo hi)', '`id` "q"'] }, cwd: dir });
      assert.equal(literal.stdout, '$(echo hi)|`id` "q"');
    });

    it('runs an executable script without a #! line through /bin/sh, as execvp does', async () => {
      const script = join(dir, 'plain-script');
      writeFileSync(script, 'echo "ran as $0 with $1"\n', { mode: 0o755 });
      const r = await runProcess({ command: { file: script, args: ['one'] }, cwd: dir });
      assert.deepEqual([r.code, r.spawnError, r.stdout], [0, undefined, `ran as ${script} with one\n`]);
    });

    it('sets spawnError when the program or the cwd is missing', async () => {
      const noCwd = await runProcess({ command: 'true', cwd: join(dir, 'missing') });
      assert.equal(noCwd.code, null);
      assert.match(noCwd.spawnError ?? '', /ENOENT/);
      const noProgram = await runProcess({ command: { file: join(dir, 'no-such-program'), args: [] }, cwd: dir });
      assert.match(noProgram.spawnError ?? '', /ENOENT/);
      // Found on the PATH, but not executable: EACCES, not "missing".
      writeFileSync(join(dir, 'not-executable'), 'echo no\n', { mode: 0o644 });
      const env = { PATH: `${dir}:${process.env.PATH}` };
      const denied = await runProcess({ command: { file: 'not-executable', args: [] }, cwd: dir, env });
      assert.match(denied.spawnError ?? '', /EACCES/);
      // Refused by node before it starts anything: reported, not thrown.
      const refused = await runProcess({ command: { file: 'echo', args: ['a\0b'] }, cwd: dir });
      assert.match(refused.spawnError ?? '', /null bytes/);
    });
  });

  describe('stdin', () => {
    it('delivers stdin and closes it', async () => {
      const r = await runProcess({ command: 'cat', cwd: dir, stdin: 'hello\nworld é' });
      assert.equal(r.stdout, 'hello\nworld é');
    });

    it('delivers a large stdin whole', async () => {
      const r = await runProcess({ command: 'wc -c', cwd: dir, stdin: 'x'.repeat(2 * 1024 * 1024) });
      assert.equal(r.stdout.trim(), String(2 * 1024 * 1024));
    });

    it('a program that never reads its stdin is not an error', async () => {
      const r = await runProcess({ command: 'exit 0', cwd: dir, stdin: 'y'.repeat(1024 * 1024) });
      assert.equal(r.code, 0);
    });

    it('without stdin, a reader sees end of input at once', async () => {
      const r = await runProcess({ command: 'cat; echo done', cwd: dir, timeoutMs: 10_000 });
      assert.equal(r.timedOut, false);
      assert.equal(r.stdout, 'done\n');
    });
  });

  it('writes the transcript (creating its folder) and appends on the next run; calls onOutput and onSpawn', async () => {
    const transcript = join(dir, 'runs', 'task-001', 'attempt-1', 'transcript.txt');
    const live: string[] = [];
    let spawned = 0;
    const r = await runProcess({
      command: 'echo first; echo warning >&2',
      cwd: dir,
      transcript,
      onOutput: (t) => live.push(t),
      onSpawn: (pid) => (spawned = pid),
    });
    assert.ok(spawned > 0);
    assert.equal(live.join(''), r.tail);
    const text = readFileSync(transcript, 'utf8');
    assert.ok(text.includes('first\n') && text.includes('warning\n'));
    assert.equal(text.length, 'first\nwarning\n'.length);
    await runProcess({ command: 'echo second', cwd: dir, transcript });
    assert.equal(readFileSync(transcript, 'utf8'), `${text}second\n`);
  });

  describe('process groups: nothing is left running', () => {
    const withGrandchild = (extra = '') => `sleep 300 ${extra} & echo $! > grandchild.pid; echo $$ > leader.pid; wait`;

    it('a timeout ends the whole group: leader and background grandchild', async () => {
      // Long enough for a loaded machine to start the grandchild and write its pid first.
      const r = await runProcess({ command: withGrandchild(), cwd: dir, timeoutMs: 1500 });
      assert.equal(r.timedOut, true);
      const grandchild = track(await pidFrom(join(dir, 'grandchild.pid')));
      const leader = track(await pidFrom(join(dir, 'leader.pid')));
      assert.equal(await dead(grandchild), true, 'the grandchild outlived the timeout');
      assert.equal(await dead(leader), true);
    });

    it('an abort through AbortSignal ends the whole group', async () => {
      const controller = new AbortController();
      const running = runProcess({ command: withGrandchild(), cwd: dir, signal: controller.signal });
      const grandchild = track(await pidFrom(join(dir, 'grandchild.pid')));
      assert.equal(alive(grandchild), true);
      controller.abort();
      const r = await running;
      assert.equal(r.aborted, true);
      assert.equal(r.timedOut, false);
      assert.equal(await dead(grandchild), true);
      assert.equal(await dead(await pidFrom(join(dir, 'leader.pid'))), true);
    });

    it('an AbortSignal already aborted ends the process at once', async () => {
      const controller = new AbortController();
      controller.abort();
      const r = await runProcess({ command: 'sleep 300', cwd: dir, signal: controller.signal });
      assert.equal(r.aborted, true);
      assert.notEqual(r.code, 0);
    });

    it('a leader that exits normally takes its background children with it (output still piped)', async () => {
      const r = await runProcess({ command: 'sleep 300 & echo $! > grandchild.pid; echo bye', cwd: dir });
      assert.equal(r.code, 0);
      assert.equal(r.stdout, 'bye\n');
      assert.equal(await dead(track(await pidFrom(join(dir, 'grandchild.pid')))), true);
    });

    it('a leader that exits normally takes its background children with it (output redirected)', async () => {
      const r = await runProcess({ command: 'sleep 300 >/dev/null 2>&1 & echo $! > grandchild.pid; exit 0', cwd: dir });
      assert.equal(r.code, 0);
      assert.equal(await dead(track(await pidFrom(join(dir, 'grandchild.pid')))), true);
    });

    it('a grandchild that ignores SIGTERM is SIGKILLed after the grace period', async () => {
      const stubborn = `sh -c 'trap "" TERM; echo $$ > grandchild.pid; exec sleep 300' & while [ ! -s grandchild.pid ]; do sleep 0.01; done; wait`;
      const started = Date.now();
      const r = await runProcess({ command: stubborn, cwd: dir, timeoutMs: 1500, graceMs: 400 });
      const elapsed = Date.now() - started;
      assert.equal(r.timedOut, true);
      const grandchild = track(await pidFrom(join(dir, 'grandchild.pid')));
      assert.equal(await dead(grandchild), true);
      // Timers never fire early: ending before timeout + grace would mean SIGTERM alone did it,
      // so the grandchild was not ignoring it and this test would prove nothing.
      assert.ok(elapsed >= 1500 + 400 - 20, `ended after ${elapsed} ms`);
    });
  });

  describe('process records', () => {
    it('a recorded run has a record while it runs, removed when it exits', async () => {
      const records = new ProcessRecords(join(dir, 'procs'));
      let during: string[] = [];
      let record: Record<string, unknown> = {};
      let pid = 0;
      const r = await runProcess({
        command: 'echo started; sleep 0.2',
        cwd: dir,
        record: { records, name: 'task-001-agent', label: 'agent task-001' },
        onSpawn: (p) => (pid = p),
        onOutput: () => {
          during = readdirSync(join(dir, 'procs'));
          record = JSON.parse(readFileSync(join(dir, 'procs', 'task-001-agent.json'), 'utf8')) as Record<string, unknown>;
        },
      });
      assert.equal(r.code, 0);
      assert.deepEqual(during, ['task-001-agent.json']);
      assert.equal(record.pid, pid);
      assert.equal(record.label, 'agent task-001');
      assert.ok(record.identity, 'the record carries the identity beside the pid');
      assert.deepEqual(readdirSync(join(dir, 'procs')), []);
    });

    it('a task process starts only once it is recorded, with or without a cgroup, with or without a time limit', async () => {
      for (const cgroups of [true, false]) {
        for (const timeoutMs of [undefined, 60_000]) {
          setCgroupsEnabled(cgroups);
          try {
            const records = new ProcessRecords(join(dir, 'procs'));
            const r = await runProcess({
              command: 'test -f procs/task-001-agent.json && echo recorded',
              cwd: dir,
              record: { records, name: 'task-001-agent', label: 'agent task-001' },
              ...(timeoutMs === undefined ? {} : { timeoutMs }),
            });
            assert.equal(r.stdout, 'recorded\n', `cgroups ${cgroups ? 'on' : 'off'}, time limit ${timeoutMs ?? 'none'}`);
          } finally {
            setCgroupsEnabled(true);
          }
        }
      }
    });

    it('the record is removed after a timeout too', async () => {
      const records = new ProcessRecords(join(dir, 'procs'));
      await runProcess({ command: 'sleep 300', cwd: dir, timeoutMs: 100, record: { records, name: 'v', label: 'validation' } });
      assert.deepEqual(readdirSync(join(dir, 'procs')), []);
    });

    it('killAll ends a recorded live group, grandchildren included', async () => {
      const records = new ProcessRecords(join(dir, 'procs'));
      const leader = spawn('sh', ['-c', 'sleep 300 & echo $! > grandchild.pid; wait'], { cwd: dir, detached: true, stdio: 'ignore' });
      const leaderPid = track(leader.pid!);
      const grandchild = track(await pidFrom(join(dir, 'grandchild.pid')));
      records.add('task-001-agent', leaderPid, 'agent task-001');
      const record = JSON.parse(readFileSync(join(dir, 'procs', 'task-001-agent.json'), 'utf8')) as {
        pid: number;
        identity?: string;
        label: string;
      };
      assert.equal(record.pid, leaderPid);
      assert.equal(record.identity, processIdentity(leaderPid));
      assert.deepEqual(records.killAll(), ['agent task-001']);
      assert.equal(await dead(grandchild), true);
      assert.equal(await dead(leaderPid), true);
      assert.deepEqual(readdirSync(join(dir, 'procs')), []);
    });

    it('killAll spares a live process whose pid matches but whose identity differs (a reused pid)', async () => {
      const records = new ProcessRecords(join(dir, 'procs'));
      const other = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
      const pid = track(other.pid!);
      records.add('old-agent', pid, 'agent from a crashed session');
      const path = join(dir, 'procs', 'old-agent.json');
      const record = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
      writeFileSync(path, JSON.stringify({ ...record, identity: `${String(record.identity)}-before-reuse` }));
      assert.deepEqual(records.killAll(), []);
      assert.equal(alive(pid), true, 'killAll signalled a stranger');
      assert.deepEqual(readdirSync(join(dir, 'procs')), [], 'the stale record is dropped');
    });

    it('killAll drops unreadable records, and is empty without a records folder', () => {
      const records = new ProcessRecords(join(dir, 'procs'));
      assert.deepEqual(records.killAll(), []);
      records.add('x', process.pid, 'me');
      writeFileSync(join(dir, 'procs', 'x.json'), '{"pid": ');
      assert.deepEqual(records.killAll(), []);
      assert.deepEqual(readdirSync(join(dir, 'procs')), []);
    });
  });
});
