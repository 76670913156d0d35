// README.md's "Your first task" block, run exactly as written: pasted into a shell in a fresh
// repository, with the built CLI on the PATH as `launchpad` (what `npm link` gives) and the
// repository's commands approved (LAUNCHPAD_TRUST=1, as the tests set it).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { CLI } from '../helpers/cli';
import { git, makeRepo } from '../helpers/gitRepo';
import { readTasks } from '../helpers/harness';
import { tempDir } from '../helpers/tmp';
import { readmeBlockAfter } from './readmeBlocks';

const HEADING = '## Your first task, with a shell script as the agent';

describe("README.md's quick start", () => {
  it('"Your first task, with a shell script as the agent", pasted as written, merges the task', function () {
    this.timeout(120_000);
    const block = readmeBlockAfter(HEADING);
    assert.match(block, /^cd your-repo\b/, "the block starts in the reader's repository");
    const top = tempDir('launchpad-quickstart-');
    mkdirSync(join(top, 'your-repo'));
    makeRepo({ 'README.md': '# your repo\n' }, join(top, 'your-repo'));
    const bin = join(top, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'launchpad'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    chmodSync(join(bin, 'launchpad'), 0o755);

    // -e: a line that fails stops the block, as it would stop the reader.
    const r = spawnSync('sh', ['-ec', block], {
      cwd: top,
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, LAUNCHPAD_TRUST: '1', HARNESS_STATE_ROOT: '', LAUNCHPAD_AGENT: '' },
      encoding: 'utf8',
      timeout: 110_000,
    });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);

    const repo = join(top, 'your-repo');
    const task = readTasks(repo).tasks.find((t) => t.id === 'task-001');
    assert.equal(task?.status, 'completed', r.stdout);
    assert.match(git(repo, 'log', '-1', '--format=%s', '--first-parent'), /^Merge \[task-001\] Write docs\/hello\.md/);
    assert.ok(existsSync(join(repo, 'docs/hello.md')), 'the merged file is in the main working tree');
    assert.match(r.stdout, /completed/);
  });
});
