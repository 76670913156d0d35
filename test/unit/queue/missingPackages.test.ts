// bullmq and ioredis are optional dependencies: a CLI installed without them refuses the queue's
// commands with exit 2 and the command that installs them. The built CLI is copied to a folder
// with no node_modules above it (and NODE_PATH empty), as it is where they were left out.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';

import { CLI } from '../helpers/cli';
import { git } from '../helpers/gitRepo';
import { agent, makeHarness, taskById } from '../helpers/harness';
import { tempDir } from '../helpers/tmp';

describe('queue: without the bullmq and ioredis packages', () => {
  let cli: string;
  const env = { ...process.env, NODE_PATH: '', HARNESS_STATE_ROOT: '', LAUNCHPAD_AGENT: '', LAUNCHPAD_QUEUE_URL: '', LAUNCHPAD_REMOTE: '' };
  const run = (args: string[], cwd: string) => spawnSync(process.execPath, [cli, ...args], { cwd, env, encoding: 'utf8', timeout: 60_000 });

  before(function () {
    cli = join(tempDir('launchpad-no-queue-'), 'cli.js');
    copyFileSync(CLI, cli);
    // Found from there after all (a node_modules in / or the temp folder, a global folder): nothing to test.
    const found = spawnSync(process.execPath, ['-e', "require.resolve('bullmq')"], { cwd: tempDir(), env });
    if (found.status === 0) this.skip();
  });

  const expected =
    /bullmq and ioredis, which are not installed \(Cannot find module 'bullmq'\); install them with "npm install bullmq ioredis"/;

  it('worker exits 2 naming the packages and the command that installs them', () => {
    const r = run(['worker', '--queue', 'redis://127.0.0.1:1', '--repo', tempDir(), '--clone', join(tempDir(), 'clone')], tempDir());
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, expected);
  });

  it('run --executor queue exits 2 the same way, and writes nothing', () => {
    const root = makeHarness({ tasks: [{ id: 'a' }], commitState: true });
    const r = run(['run', '--agent', 'true', '--executor', 'queue', '--queue', 'redis://127.0.0.1:1'], root);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, expected);
    assert.equal(git(root, 'status', '--porcelain'), '');
  });

  it('a local run does not need them', () => {
    const root = makeHarness({ tasks: [{ id: 'a' }], commitState: true });
    const r = run(['run', '--agent', agent('writes-done.sh')], root);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(taskById(root, 'a').status, 'completed');
  });
});
