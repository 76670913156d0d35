import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { runProcess } from '../../../../src/core/process/runProcess';
import { RemoteProcess, setSpawnerMode, spawnerKind, spawnerPid } from '../../../../src/core/process/spawner';
import { dead } from '../../helpers/processes';
import { tempDir } from '../../helpers/tmp';

const OUT_PROCESS = join(__dirname, '../../../../src/core/process');

/** Runs a node script that uses runProcess; resolves with its output lines and exit. */
function script(
  dir: string,
  body: string,
  onLine?: (line: string, child: ReturnType<typeof spawn>) => void,
  env: NodeJS.ProcessEnv = process.env,
) {
  const file = join(dir, 'script.js');
  writeFileSync(
    file,
    `const { runProcess } = require(${JSON.stringify(join(OUT_PROCESS, 'runProcess.js'))});\n` +
      `const { setSpawnerMode, spawnerKind, spawnerPid } = require(${JSON.stringify(join(OUT_PROCESS, 'spawner.js'))});\n` +
      `(async () => {\n${body}\n})();\n`,
  );
  const child = spawn(process.execPath, [file], { cwd: dir, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  let rest = '';
  child.stdout.on('data', (d: Buffer) => {
    rest += d.toString();
    for (let i = rest.indexOf('\n'); i >= 0; i = rest.indexOf('\n')) {
      const line = rest.slice(0, i);
      rest = rest.slice(i + 1);
      lines.push(line);
      onLine?.(line, child);
    }
  });
  return new Promise<{ lines: string[]; code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ lines, code, signal })),
  );
}

describe('core/process/spawner', function () {
  this.timeout(60_000);
  let dir: string;
  const groups: number[] = [];
  beforeEach(() => {
    dir = tempDir('launchpad-spawner-');
  });
  afterEach(() => {
    setSpawnerMode('auto');
    for (const pgid of groups.splice(0)) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });

  // Each helper on its own (the other not tried): the same life, the same relay.
  for (const kind of ['python', 'node'] as const) {
    describe(`${kind}'s helper`, () => {
      it('an idle spawner does not keep its process alive, and ends when that process ends', async () => {
        const r = await script(
          dir,
          `setSpawnerMode('always', '${kind}'); const r = await runProcess({ command: 'echo $PPID', cwd: '.' }); console.log(r.stdout.trim(), spawnerPid());`,
        );
        assert.equal(r.code, 0, 'the script ended by itself once its command was done');
        const [ppid, helper] = r.lines[0]!.split(' ').map(Number);
        assert.equal(ppid, helper, 'the command was started by the spawner');
        assert.equal(await dead(helper!), true, 'the spawner ended with the script');
      });

      it('ends when its process is killed (SIGKILL) in the middle of a command', async () => {
        let helper = 0;
        const r = await script(
          dir,
          `setSpawnerMode('always', '${kind}'); await runProcess({ command: 'echo "$$ $PPID"; sleep 30', cwd: '.', onOutput: (t) => console.log(t.trim()) });`,
          (line, child) => {
            const [group, parent] = line.split(' ').map(Number);
            groups.push(group!);
            helper = parent!;
            child.kill('SIGKILL');
          },
        );
        assert.equal(r.signal, 'SIGKILL');
        assert.ok(helper > 0);
        assert.equal(await dead(helper), true, 'the spawner outlived its process');
      });

      it('a spawner killed during a command: that command is reported as not run, and ended; the next starts a new spawner', async () => {
        setSpawnerMode('always', kind);
        let first = 0;
        const running = runProcess({
          command: 'echo "$$ $PPID"; sleep 30',
          cwd: dir,
          onOutput: (t) => {
            const [group, parent] = t.trim().split(' ').map(Number);
            groups.push(group!);
            first = parent!;
            process.kill(parent!, 'SIGKILL');
          },
        });
        const r = await running;
        assert.equal(r.code, null);
        assert.match(r.spawnError ?? '', /ended while it ran/);
        assert.equal(await dead(groups.at(-1)!), true, 'the command it was running is ended, not left unwatched');
        const next = await runProcess({ command: 'echo $PPID', cwd: dir });
        const parent = Number(next.stdout);
        assert.equal(next.code, 0);
        assert.ok(parent !== first && parent !== process.pid, `parent ${parent}`);
      });

      it('a spawner that dies before starting anything: its commands and the later ones start here', async () => {
        setSpawnerMode('always', kind);
        const running = runProcess({ command: 'echo $PPID', cwd: dir });
        // The request is on its way; the spawner is still starting (node takes tens of ms).
        assert.equal(spawnerKind(), kind);
        process.kill(spawnerPid()!, 'SIGKILL');
        const r = await running;
        assert.equal(r.code, 0, r.spawnError);
        assert.equal(Number(r.stdout), process.pid);
        assert.equal(Number((await runProcess({ command: 'echo $PPID', cwd: dir })).stdout), process.pid);
      });

      it('a command it cannot start (a NUL byte in an argument) is reported as not run; the same helper runs the next', async () => {
        setSpawnerMode('always', kind);
        const helper = Number((await runProcess({ command: 'echo $PPID', cwd: dir })).stdout);
        const openFiles = () => (existsSync(`/proc/${helper}/fd`) ? readdirSync(`/proc/${helper}/fd`).length : 0);
        const before = openFiles();
        const refused = await runProcess({ command: { file: 'echo', args: ['a\0b'] }, cwd: dir });
        assert.equal(refused.code, null);
        assert.match(refused.spawnError ?? '', /null byte/);
        assert.equal(openFiles(), before, 'none of its pipes is left open in the helper');
        assert.equal(Number((await runProcess({ command: 'echo $PPID', cwd: dir })).stdout), helper, 'the same helper');
      });

      it('relays all of the output of a command, however much, before its end', async () => {
        setSpawnerMode('always', kind);
        for (let i = 0; i < 20; i++) {
          const r = await runProcess({ command: 'head -c 262144 /dev/zero | tr "\\0" x; echo; echo err >&2', cwd: dir });
          assert.deepEqual([r.stdout.length, r.stderr], [262145, 'err\n'], `run ${i + 1}`);
        }
      });
    });
  }

  it("a python helper that dies before starting anything: its commands and the later ones go to node's", async () => {
    setSpawnerMode('always');
    const running = runProcess({ command: 'echo $PPID', cwd: dir });
    assert.equal(spawnerKind(), 'python');
    process.kill(spawnerPid()!, 'SIGKILL');
    const r = await running;
    assert.equal(r.code, 0, r.spawnError);
    assert.equal(spawnerKind(), 'node');
    assert.equal(Number(r.stdout), spawnerPid(), "started by node's helper");
    assert.equal(Number((await runProcess({ command: 'echo $PPID', cwd: dir })).stdout), spawnerPid());
  });

  it("without python3 on the PATH, node's helper starts the commands", async () => {
    // A PATH with sh and nothing else.
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    symlinkSync('/bin/sh', join(bin, 'sh'));
    const r = await script(
      dir,
      `setSpawnerMode('always'); const r = await runProcess({ command: 'echo $PPID', cwd: '.' }); console.log(r.code, r.stdout.trim(), spawnerPid(), spawnerKind());`,
      undefined,
      { ...process.env, PATH: bin },
    );
    const [code, ppid, helper, kind] = r.lines[0]!.split(' ');
    assert.deepEqual([code, kind], ['0', 'node']);
    assert.equal(ppid, helper);
  });

  it("a relayed command's 'close' comes once its output has been read, as a child process's does", async () => {
    const remote = new RemoteProcess(() => undefined);
    const events: string[] = [];
    remote.on('close', (code) => events.push(`close ${code}`));
    remote.stdout.write('x'.repeat(100_000)); // nobody reads it yet
    remote.stderr.write('err\n');
    remote.close(0, null);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(events.length, 0, 'not closed while its output waits unread');
    let out = '';
    remote.stdout.on('data', (chunk: Buffer) => void (out += chunk.toString()));
    remote.stderr.on('data', () => events.push('stderr'));
    await once(remote, 'close');
    assert.equal(out.length, 100_000);
    assert.deepEqual(events, ['stderr', 'close 0']);
  });

  it('by default, a process past 100 MB resident starts its commands from the spawner; a small one does not', async () => {
    const run = `const r = await runProcess({ command: 'echo $PPID', cwd: '.' }); console.log(Number(r.stdout) === process.pid ? 'here' : 'spawner');`;
    const small = await script(dir, run);
    // Touched, so that it is resident.
    const large = await script(dir, `globalThis.keep = Buffer.alloc(160 * 1024 * 1024, 1);\n${run} console.log(spawnerKind());`);
    assert.deepEqual([small.lines, large.lines], [['here'], ['spawner', 'python']], "python3's helper first");
  });
});
