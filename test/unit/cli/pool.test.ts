// launchpad pool [clear] [--disk] [--json] and status's pool line, through dist/cli.js after a real
// run with session_config.worktree_pool: what the pool holds, and clearing it (a slot another live
// process claimed is kept).
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { linkedGitDir } from '../../../src/core/git/git';
import { processIdentity } from '../../../src/core/processIdentity';
import { runCli } from '../helpers/cli';
import { git } from '../helpers/gitRepo';
import { agent, makeHarness, runHarness } from '../helpers/harness';
import { tempDir } from '../helpers/tmp';
import { cli } from './util';

interface JsonPool {
  dir: string;
  size: number;
  slots: Array<{ name: string; path: string; state: string; at_base: boolean | null; bytes: number | null }>;
  bytes: number | null;
}

/** A repository after a run of three tasks with worktree_pool: 2 (its worktrees in a folder of the test's). */
function afterPooledRun(): { root: string; worktreeDir: string } {
  const worktreeDir = tempDir('launchpad-wt-');
  const root = makeHarness({
    tasks: ['task-001', 'task-002', 'task-003'].map((id) => ({ id })),
    sessionConfig: { max_parallel_agents: 1, worktree_pool: 2, worktree_dir: worktreeDir },
    commitState: true,
  });
  const r = runHarness(root, agent('writes-done.sh'));
  assert.equal(r.code, 0, r.stderr);
  return { root, worktreeDir };
}

const poolJson = (root: string, ...args: string[]) => JSON.parse(cli(['pool', '--json', ...args], { cwd: root }).stdout) as JsonPool;

describe('launchpad pool', function () {
  this.timeout(120_000);
  let holder: ChildProcess | undefined;
  afterEach(async () => {
    if (holder && holder.exitCode === null && holder.signalCode === null) {
      holder.kill('SIGKILL');
      await once(holder, 'exit');
    }
    holder = undefined;
  });

  it('lists the slots a run left, their states and the configured size; --json; --disk adds their disk; status has one line', () => {
    const { root, worktreeDir } = afterPooledRun();
    const pool = poolJson(root);
    assert.equal(pool.dir, join(worktreeDir, '.pool'));
    assert.equal(pool.size, 2);
    assert.equal(pool.slots.length, 2);
    for (const s of pool.slots) {
      assert.equal(s.state, 'prepared');
      assert.equal(s.at_base, true, 'each prepared at the base branch head');
      assert.equal(s.bytes, null, 'no disk walked without --disk');
    }

    const text = cli(['pool'], { cwd: root }).stdout;
    assert.match(text, new RegExp(`^Worktree pool: ${pool.dir} \\(worktree_pool: 2\\)$`, 'm'));
    for (const s of pool.slots)
      assert.match(
        text,
        new RegExp(`^  ${s.name} +prepared at the base \\([0-9a-f]{7}, \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC\\)$`, 'm'),
      );
    assert.match(text, /^2 slots \(2 prepared at the base\) \(--disk measures their disk\)$/m);

    const disk = poolJson(root, '--disk');
    assert.ok(disk.slots.every((s) => s.bytes! > 0));
    assert.equal(
      disk.bytes,
      disk.slots.reduce((n, s) => n + s.bytes!, 0),
    );
    assert.match(cli(['pool', '--disk'], { cwd: root }).stdout, /^2 slots \(2 prepared at the base\), [\d.]+ [KMG]?B on disk$/m);

    assert.match(cli(['status'], { cwd: root }).stdout, /^Worktree pool \(worktree_pool: 2\): 2 slots \(2 prepared at the base\)$/m);
    const status = JSON.parse(cli(['status', '--json'], { cwd: root }).stdout) as { worktree_pool: Record<string, unknown> };
    assert.deepEqual(status.worktree_pool, {
      dir: pool.dir,
      size: 2,
      slots: 2,
      states: { prepared: 2, claimed: 0, stale_claim: 0, not_prepared: 0, on_branch: 0, not_worktree: 0 },
      at_base: 2,
      summary: '2 slots (2 prepared at the base)',
    });
  });

  it('pool clear removes the idle slots, keeps one a live process claimed, and says what it freed', async () => {
    const { root, worktreeDir } = afterPooledRun();
    const [idle, claimed] = poolJson(root).slots.map((s) => s.path) as [string, string];
    holder = spawn('sleep', ['60'], { stdio: 'ignore' });
    writeFileSync(join(linkedGitDir(claimed)!, 'launchpad-claim'), `${holder.pid} ${processIdentity(holder.pid!)}\n`);

    const r = cli(['pool', 'clear'], { cwd: root });
    assert.match(r.stdout, new RegExp(`^removed ${idle} \\([\\d.]+ [KMG]?B\\)$`, 'm'));
    assert.match(r.stdout, new RegExp(`^kept ${claimed}: claimed by pid ${holder.pid}, a live process preparing or taking it$`, 'm'));
    assert.match(r.stdout, /^1 slot removed, [\d.]+ [KMG]?B freed; 1 kept$/m);
    assert.ok(!existsSync(idle));
    assert.doesNotMatch(git(root, 'worktree', 'list'), new RegExp(idle));
    assert.deepEqual(readdirSync(join(worktreeDir, '.pool')), [claimed.slice(claimed.lastIndexOf('/') + 1)]);
    assert.match(cli(['status'], { cwd: root }).stdout, /^Worktree pool \(worktree_pool: 2\): 1 slot \(1 claimed\)$/m);

    holder.kill('SIGKILL');
    await once(holder, 'exit');
    const json = JSON.parse(cli(['pool', 'clear', '--json'], { cwd: root }).stdout) as {
      removed: Array<{ path: string }>;
      kept: unknown[];
    };
    assert.deepEqual(
      json.removed.map((s) => s.path),
      [claimed],
      'its process gone, the claim is stale and the slot idle',
    );
    assert.deepEqual(json.kept, []);
    assert.match(cli(['pool'], { cwd: root }).stdout, /^ {2}\(no slots\)$/m);
    assert.doesNotMatch(cli(['status'], { cwd: root }).stdout, /Worktree pool/);
    assert.equal(JSON.parse(cli(['status', '--json'], { cwd: root }).stdout).worktree_pool, null);
    assert.match(cli(['pool', 'clear'], { cwd: root }).stdout, /^nothing to clear: .* holds no slots$/m);

    // The next run fills the pool again.
    cli(['add', 'Another', '--validate', 'test -f src/task-004/done.txt'], { cwd: root });
    const again = runHarness(root, agent('writes-done.sh'));
    assert.equal(again.code, 0, again.stderr);
    assert.equal(poolJson(root).slots.length, 2);
  });

  it('an unknown subcommand is a usage error (exit 2); outside git there is no pool', () => {
    const root = makeHarness({ tasks: [{ id: 'task-001' }], sessionConfig: { worktree_pool: 2 } });
    const r = runCli(['pool', 'empty'], { cwd: root });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /pool: unknown subcommand "empty"/);
    const plain = tempDir();
    writeFileSync(join(plain, 'harness-tasks.json'), JSON.stringify({ version: 3, tasks: [] }));
    assert.match(cli(['pool'], { cwd: plain }).stdout, /^no worktree pool: .* is not in a git repository$/m);
  });
});
