// The harness protocol's own lock (/tmp/harness-<hash>.lock, taken by a shell agent working the
// same state root) seen from the CLI: a live holder makes run exit 3 at once and add/retry wait,
// then exit 3, naming it; a dead holder's lock is ignored and left where it is.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { harnessProtocolLockDir } from '../../../src/core/harnessProtocolLock';
import { startCli } from '../helpers/cli';
import { makeHarness } from '../helpers/harness';
import { assertUnchanged, cli, snapshot } from './util';

describe("the harness protocol's lock from the CLI", function () {
  this.timeout(60_000);
  const made: string[] = [];
  const children: ChildProcess[] = [];
  afterEach(() => {
    made.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
    children.splice(0).forEach((c) => c.kill('SIGKILL'));
  });

  function shellLock(root: string, pid: number): string {
    const dir = harnessProtocolLockDir(root);
    made.push(dir);
    mkdirSync(dir);
    writeFileSync(join(dir, 'pid'), `${pid}\n`);
    return dir;
  }

  function liveShell(): number {
    const child = spawn('sleep', ['120'], { stdio: 'ignore' });
    children.push(child);
    return child.pid!;
  }

  function harness(): string {
    return makeHarness({
      tasks: [
        { id: 'task-001', status: 'failed', attempts: 3, error_log: ['[TEST_FAIL] boom'] },
        { id: 'task-002', validate: 'true' },
      ],
    });
  }

  it('held by a live agent: run exits 3 at once, add and retry wait and then exit 3, each naming it; nothing changes', async () => {
    // One state root per command: concurrent commands in one root share its .launchpad/ folder.
    const roots = [harness(), harness(), harness()];
    const pid = liveShell();
    const foreign = roots.map((root) => shellLock(root, pid));
    const before = roots.map((root) => snapshot(root));
    const results = await Promise.all(
      [
        ['run', '--agent', 'true'],
        ['add', 'never'],
        ['retry', 'task-001'],
      ].map((args, i) => startCli(args, { cwd: roots[i]! }).done),
    );
    results.forEach((r, i) => {
      assert.equal(r.code, 3, r.stderr);
      assert.ok(r.stderr.includes(`the harness protocol's lock ${foreign[i]} is held by pid=${pid}`), r.stderr);
      assert.equal(r.stdout, '');
      assertUnchanged(before[i]!, roots[i]!, 'a command refused by the harness protocol lock');
      assert.equal(readFileSync(join(foreign[i]!, 'pid'), 'utf8'), `${pid}\n`);
    });
  });

  it('held by a dead agent: ignored and left alone; add and run go ahead', () => {
    const root = harness();
    const dead = spawnSync('true').pid!;
    const foreign = shellLock(root, dead);
    assert.equal(cli(['add', 'after the agent died', '--validate', 'true'], { cwd: root }).stdout, 'task-003\n');
    cli(['run', '--agent', 'echo RESULT:SUCCESS'], { cwd: root }, 1);
    assert.ok(existsSync(foreign));
    assert.equal(readFileSync(join(foreign, 'pid'), 'utf8'), `${dead}\n`);
  });
});
