import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

import { readmeBlockAfter, ROOT } from './docs/readmeBlocks';
import { runCli } from './helpers/cli';
import { git } from './helpers/gitRepo';
import { readLog, readTasks } from './helpers/harness';
import { tempDir } from './helpers/tmp';

describe("launchpad demo (the README's first command)", () => {
  it('as README.md writes it: builds the sample repository and runs every task to completion, retrying the two that fail once', function () {
    this.timeout(120_000);
    // The first line of the README's first block: the set-up this suite already ran, then the demo.
    const line = readmeBlockAfter(undefined)
      .split('\n')[0]!
      .replace(/\s+#.*$/, '');
    const steps = line.split('&&').map((s) => s.trim());
    assert.deepEqual(steps.slice(0, -1), ['npm ci', 'npm run build'], `README.md's first command: ${line}`);
    const tmp = tempDir();
    const r = spawnSync('sh', ['-c', steps.at(-1)!], {
      cwd: ROOT,
      env: { ...process.env, TMPDIR: tmp, HARNESS_STATE_ROOT: '', LAUNCHPAD_AGENT: '' },
      encoding: 'utf8',
      timeout: 110_000,
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /all 6 tasks completed/);
    const made = readdirSync(tmp).filter((f) => f.startsWith('launchpad-demo-'));
    assert.equal(made.length, 1, `the demo's folder in ${tmp}: ${made.join(', ')}`);
    const dir = join(tmp, made[0]!);

    const tasks = readTasks(dir).tasks;
    assert.deepEqual(
      tasks.map((t) => t.status),
      Array(6).fill('completed'),
    );
    assert.equal(tasks.find((t) => t.id === 'task-002')!.attempts, 2);
    assert.equal(tasks.find((t) => t.id === 'task-006')!.attempts, 2);

    const log = readLog(dir);
    assert.ok(
      log.some((l) => /ERROR \[task-002\] \[TEST_FAIL\] .*should be 3/.test(l)),
      'the failed validation is logged with its reason',
    );
    assert.ok(log.some((l) => /ERROR \[task-006\] \[AGENT_FAIL\]/.test(l)));
    // Six merge commits on main, one per task, and the checker passes on the merged result.
    const merges = git(dir, 'log', '--first-parent', '--merges', '--format=%s').split('\n');
    assert.equal(merges.length, 6);
    for (const t of tasks) assert.ok(merges.includes(`Merge [${t.id}] ${t.title}`), t.id);
    for (const part of ['slugify', 'wordCount', 'capitalize', 'titleCase', 'index', 'docs']) {
      assert.match(require('node:child_process').execFileSync('node', ['check.js', part], { cwd: dir, encoding: 'utf8' }), /^ok/);
    }
  });

  it('labels the retries, ends with a summary, and every command it then tells you to type works as printed', function () {
    this.timeout(120_000);
    const dir = join(tempDir(), 'demo');
    const r = runCli(['demo', '--dir', dir], { cwd: tempDir(), timeoutMs: 110_000, env: { PATH: process.env.PATH } });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /DISPATCH \[task-002\] .* \(attempt 2\/3\)\n/);
    assert.match(r.stdout, /DISPATCH \[task-006\] .* \(attempt 2\/3\)\n/);
    assert.doesNotMatch(r.stdout, /DISPATCH \[task-001\] .*attempt/, 'a first attempt is not labelled');
    assert.match(r.stdout, /\nSummary: 6\/6 completed {2}\(/);
    const commands = r.stdout
      .slice(r.stdout.indexOf('Look at the result'))
      .split('\n')
      .slice(1)
      .filter((l) => l.startsWith('  '))
      .map((l) => l.trim());
    assert.equal(commands.length, 4, r.stdout);
    for (const command of commands) {
      // Pasted into a shell somewhere else, with launchpad not (necessarily) on the PATH.
      const pasted = spawnSync('sh', ['-c', command], { cwd: tempDir(), encoding: 'utf8' });
      assert.equal(pasted.status, 0, `${command}\n${pasted.stderr}`);
      assert.ok(pasted.stdout.trim(), `${command} printed nothing`);
    }
    if (commands[0]!.startsWith('node ')) assert.match(r.stdout, /npm link/, 'how to get launchpad on the PATH');
  });

  it('refuses a directory that is not empty', () => {
    const dir = tempDir();
    require('node:fs').writeFileSync(join(dir, 'x'), '');
    const r = runCli(['demo', dir], { cwd: dir });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /not empty/);
  });
});
