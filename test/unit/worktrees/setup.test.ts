// End to end (`launchpad run`, the built CLI) on a real Node project whose validation is
// `npm test` and whose node_modules is ignored: a tiny local package (a `file:` dependency),
// installed by npm without the network. With worktree_setup or .worktreeinclude it runs to
// completion; without, the failure says which to set; a failing or hanging set-up is ENV_SETUP,
// not charged, and stops the session.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { linkedGitDir } from '../../../src/core/git/git';
import { readReady } from '../../../src/core/worktrees/poolSlot';
import {
  agentCmd,
  defaultWorktreeRoot,
  extraWorktrees,
  git,
  harness,
  harnessBranches,
  linesOf,
  run,
  show,
  shq,
  taskById,
  tempDir,
} from '../controller/support';

const NPM_CI = 'npm ci --offline --no-audit --no-fund';

/** package.json, its lock file, the local package it depends on, and a test that needs it. */
const NODE_PROJECT: Record<string, string> = {
  '.gitignore': 'node_modules/\n',
  'package.json':
    JSON.stringify(
      { name: 'app', version: '1.0.0', private: true, dependencies: { tiny: 'file:./vendor/tiny' }, scripts: { test: 'node test.js' } },
      null,
      2,
    ) + '\n',
  'package-lock.json':
    JSON.stringify(
      {
        name: 'app',
        version: '1.0.0',
        lockfileVersion: 3,
        requires: true,
        packages: {
          '': { name: 'app', version: '1.0.0', dependencies: { tiny: 'file:./vendor/tiny' } },
          'node_modules/tiny': { resolved: 'vendor/tiny', link: true },
          'vendor/tiny': { version: '1.0.0' },
        },
      },
      null,
      2,
    ) + '\n',
  'vendor/tiny/package.json': '{ "name": "tiny", "version": "1.0.0", "main": "index.js" }\n',
  'vendor/tiny/index.js': 'module.exports = (a, b) => a + b;\n',
  'test.js': "const add = require('tiny');\nif (add(2, 2) !== 4) process.exit(1);\nconsole.log('tests pass');\n",
};

function nodeProject(sessionConfig: Record<string, unknown> = {}, maxAttempts = 3): string {
  return harness({
    files: NODE_PROJECT,
    tasks: [
      { id: 'task-001', validate: 'npm test', maxAttempts },
      { id: 'task-002', validate: 'npm test', maxAttempts },
    ],
    sessionConfig,
  });
}

function attemptDir(root: string, id: string, n = 1): string {
  return join(root, '.launchpad/runs', id, `attempt-${n}`);
}

describe('worktrees: a Node project whose validation is npm test, node_modules ignored', function () {
  this.timeout(120_000);

  it('runs to completion with worktree_setup (npm ci): the set-up runs in each worktree, logged, its output kept', async () => {
    const root = nodeProject({ worktree_setup: NPM_CI });
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 0, show(r, root));
    for (const id of ['task-001', 'task-002']) {
      assert.equal(taskById(root, id).status, 'completed');
      const [line] = linesOf(root, 'INIT', id);
      assert.match(line!.message, new RegExp(`^worktree_setup command="${NPM_CI}" result=PASS \\(\\d+\\.\\ds\\)$`));
      assert.match(readFileSync(join(attemptDir(root, id), 'setup.log'), 'utf8'), /added 1 package/);
    }
    assert.ok(!existsSync(join(root, 'node_modules')), 'the main checkout was not touched');
  });

  it("runs to completion with .worktreeinclude naming node_modules: the main checkout's copy, its link kept a link", async () => {
    const root = nodeProject();
    execFileSync('npm', NPM_CI.split(' ').slice(1), { cwd: root, stdio: 'ignore' });
    writeFileSync(join(root, '.worktreeinclude'), 'node_modules/\n');
    git(root, 'add', '.worktreeinclude');
    git(root, 'commit', '-q', '-m', 'copy node_modules into worktrees');
    // The agent records what it finds, so the copy is checked where the agent runs.
    const agent = `test -L node_modules/tiny && echo link > "$LAUNCHPAD_TASK_ID.seen"; ${agentCmd('writes-done.sh')}`;
    const r = await run(root, agent);
    assert.equal(r.code, 0, show(r, root));
    for (const id of ['task-001', 'task-002']) {
      assert.equal(taskById(root, id).status, 'completed');
      const lines = linesOf(root, 'INIT', id).map((l) => l.message);
      assert.equal(lines.length, 1, lines.join('\n'));
      assert.match(lines[0]!, /^new worktree; \.worktreeinclude: 2 files copied \(\d+ B\)$/);
      assert.equal(readFileSync(join(root, `${id}.seen`), 'utf8'), 'link\n', 'node_modules/tiny is a link in the worktree');
    }
  });

  it('without either, the failure says what to set', async () => {
    const root = nodeProject({}, 1);
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 1, show(r, root));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed');
    assert.equal(t.error_log.length, 1);
    assert.match(
      t.error_log[0]!,
      /^\[TEST_FAIL\] npm test exited with 1: .* — dependencies missing in the worktree \(Cannot find module 'tiny'\): a worktree holds only tracked files; set session_config\.worktree_setup \(e\.g\. "npm ci"\) or list the ignored files to copy in \.worktreeinclude$/,
    );
    const [error] = linesOf(root, 'ERROR', 'task-001');
    assert.match(error!.message, /set session_config\.worktree_setup/);
  });

  it('a failing worktree_setup is ENV_SETUP: not charged, no agent started, the session stops saying why', async () => {
    const marks = tempDir('launchpad-marks-');
    const setup = 'echo resolving; echo "npm ERR! 404 Not Found - left-pad" >&2; exit 3';
    const root = nodeProject({ worktree_setup: setup, max_parallel_agents: 1 });
    const agent = `touch ${shq(marks)}/"$LAUNCHPAD_TASK_ID"; ${agentCmd('writes-done.sh')}`;
    const r = await run(root, agent);

    assert.equal(r.code, 2, show(r, root));
    assert.match(
      r.stdout,
      /stopped by the environment, not by the tasks \(no attempt was charged\): the worktree of task-001 could not be set up: worktree_setup ".*" exited with 3: npm ERR! 404 Not Found - left-pad\nto fix: fix session_config\.worktree_setup or what it needs \(its output: .*setup\.log\)/,
    );
    assert.deepEqual(readdirSync(marks), [], 'no agent ran');
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'pending');
    assert.equal(t.attempts, 0, 'not charged');
    assert.deepEqual(t.error_log, []);
    assert.equal(taskById(root, 'task-002').attempts, 0, 'nothing else started');
    assert.match(linesOf(root, 'INIT', 'task-001')[0]!.message, /^worktree_setup command=".*" result=FAIL \(\d+\.\ds\)$/);
    const [error] = linesOf(root, 'ERROR', 'task-001');
    assert.equal(error!.category, 'ENV_SETUP');
    assert.match(error!.message, /^worktree_setup ".*" exited with 3: npm ERR! 404 Not Found - left-pad \(not charged\)$/);
    assert.equal(readFileSync(join(attemptDir(root, 'task-001'), 'setup.log'), 'utf8'), 'resolving\nnpm ERR! 404 Not Found - left-pad\n');
    assert.deepEqual(extraWorktrees(root), [], 'its worktree is gone');
    assert.deepEqual(harnessBranches(root), []);
  });

  it('worktree_setup_timeout_seconds ends a set-up that hangs, and that is ENV_SETUP too', async () => {
    const root = nodeProject({ worktree_setup: 'sleep 60', worktree_setup_timeout_seconds: 1, max_parallel_agents: 1 });
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 2, show(r, root));
    const [error] = linesOf(root, 'ERROR', 'task-001');
    assert.equal(error!.category, 'ENV_SETUP');
    assert.match(
      error!.message,
      /^worktree_setup "sleep 60" timed out after 1s \(session_config\.worktree_setup_timeout_seconds\) \(not charged\)$/,
    );
    assert.equal(taskById(root, 'task-001').attempts, 0);
    assert.ok(!existsSync(join(defaultWorktreeRoot(root), 'task-001')));
  });

  it("with worktree_pool, the pool makes its new worktrees only once the task's own is set up", async () => {
    const marks = tempDir('launchpad-setup-end-');
    // The set-up notes when it ended (ms), outside the worktree.
    const setup = `sleep 1; node -e 'process.stdout.write(String(Date.now()))' > ${shq(join(marks, 'end'))}`;
    const root = harness({ tasks: [{ id: 'task-001' }], sessionConfig: { worktree_pool: 2, worktree_setup: setup } });
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 0, show(r, root));
    const setUpEnd = Number(readFileSync(join(marks, 'end'), 'utf8'));
    const pool = join(defaultWorktreeRoot(root), '.pool');
    const prepared = readdirSync(pool).map((slot) => readReady(linkedGitDir(join(pool, slot))!)!.preparedAt);
    assert.equal(prepared.length, 2, `two slots: ${readdirSync(pool).join(', ')}`);
    for (const at of prepared) assert.ok(at >= setUpEnd, `a slot prepared at ${at}, before the task's set-up ended at ${setUpEnd}`);
  });

  it('refuses a worktree_setup_timeout_seconds over 7 days, and a worktree_pool over its limit, naming the field', async () => {
    for (const [field, value] of [
      ['worktree_setup_timeout_seconds', 604_801],
      ['worktree_pool', 17],
      ['port_block_size', 0],
    ] as const) {
      const root = nodeProject({ [field]: value });
      const r = await run(root, agentCmd('writes-done.sh'));
      assert.equal(r.code, 2, show(r, root));
      assert.match(r.stderr + r.stdout, new RegExp(`session_config\\.${field}`));
      const file = JSON.parse(readFileSync(join(root, 'harness-tasks.json'), 'utf8'));
      assert.equal(file.session_config[field], value, 'the file is left as it was');
      assert.equal(file.tasks[0].attempts, 0);
    }
  });
});
