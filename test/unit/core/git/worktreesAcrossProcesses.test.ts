// git's worktree commands from several processes on one repository (concurrent workers): each
// process queues its own, and a lock in the git common dir keeps them one at a time across
// processes. Without it, an add's half-written admin folder kills the others' commands.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { Git } from '../../../../src/core/git/git';
import { git, makeRepo } from '../../helpers/gitRepo';
import { tempDir } from '../../helpers/tmp';

const OUT = resolve(__dirname, '../../../..');
const GIT_MODULE = join(OUT, 'src/core/git/git.js');
const LOCK_MODULE = join(OUT, 'src/core/lock.js');
const LOCK = 'launchpad-worktrees.lock';

/** Adds, lists, moves and removes worktrees and deletes their branches; prints what failed (JSON). */
const WORKER = `
const { join } = require('node:path');
const { Git } = require(process.argv[1]);
const [repo, root, id, rounds] = process.argv.slice(2);
(async () => {
  const g = new Git(repo);
  const failed = [];
  const step = (f) => f().catch((e) => failed.push(e.message.split('\\n')[0]));
  for (let i = 0; i < Number(rounds); i++) {
    const name = 'p' + id + '-' + i;
    await step(() => g.addWorktree(join(root, name), 'harness-' + name, 'main'));
    await step(() => g.listWorktrees());
    await step(() => g.moveWorktree(join(root, name), join(root, name + '-moved')));
    await step(() => g.removeWorktree(join(root, name + '-moved')));
    await step(async () => { if (!(await g.deleteBranch('harness-' + name))) throw new Error('branch harness-' + name + ' not deleted'); });
  }
  process.stdout.write(JSON.stringify(failed));
})();
`;

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((done) => child.on('close', (code) => done({ code, stdout, stderr })));
}

describe('core/git/git: worktree commands from several processes on one repository', function () {
  this.timeout(120_000);

  it('four processes adding, listing, moving and removing worktrees at once: every command succeeds', async () => {
    const repo = makeRepo();
    const root = tempDir('launchpad-wts-');
    const results = await Promise.all([1, 2, 3, 4].map((id) => run(['-e', WORKER, GIT_MODULE, repo, root, String(id), '12'])));
    for (const r of results) {
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), []);
    }
    assert.deepEqual(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length, 1, 'only the main worktree is left');
    assert.equal(git(repo, 'branch', '--list', 'harness-*'), '');
    assert.deepEqual(readdirSync(root), []);
    assert.equal(existsSync(join(repo, '.git', LOCK)), false, 'the lock is released');
  });

  it('waits while another process holds the lock, and takes it over once that process is killed', async () => {
    const repo = makeRepo();
    const lock = join(repo, '.git', LOCK);
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `require(process.argv[1]).tryAcquireLock(process.argv[2], 'git worktree add'); console.log('held'); setInterval(() => {}, 1000);`,
        LOCK_MODULE,
        lock,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((held) => holder.stdout.once('data', () => held()));
      let listed = false;
      const list = new Git(repo).listWorktrees().then((l) => {
        listed = true;
        return l;
      });
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(listed, false, 'ran while another process held the lock');
      holder.kill('SIGKILL');
      assert.equal((await list).length, 1);
      assert.equal(existsSync(lock), false, "the dead holder's lock is taken over, then released");
    } finally {
      holder.kill('SIGKILL');
    }
  });
});
