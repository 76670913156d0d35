// Session start: auto-init, git checks, the lock, recovery, the
// health check, the session count and max_sessions; a dirty main working tree is refused with
// nothing changed; where worktrees go.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  agentCmd,
  byTask,
  defaultWorktreeRoot,
  editTaskFile,
  extraWorktrees,
  git,
  harness,
  harnessBranches,
  launchpad,
  linesOf,
  logLines,
  patchTask,
  read,
  readTasks,
  repo as makeRepo,
  run,
  show,
  taskById,
  tempDir,
} from './support';

function writeInitScript(root: string, body: string): void {
  writeFileSync(join(root, 'harness-init.sh'), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
}

function snapshot(root: string) {
  return {
    tasks: readFileSync(join(root, 'harness-tasks.json')),
    progress: readFileSync(join(root, 'harness-progress.txt')),
    head: git(root, 'rev-parse', 'HEAD'),
    status: git(root, 'status', '--porcelain', '--untracked-files=all'),
    branches: git(root, 'branch', '--list'),
    worktrees: extraWorktrees(root),
  };
}

function assertNothingChanged(root: string, before: ReturnType<typeof snapshot>): void {
  const after = snapshot(root);
  assert.ok(after.tasks.equals(before.tasks), 'harness-tasks.json changed');
  assert.ok(after.progress.equals(before.progress), 'harness-progress.txt changed');
  assert.deepEqual({ ...after, tasks: 0, progress: 0 }, { ...before, tasks: 0, progress: 0 });
  assert.ok(!existsSync(join(root, '.launchpad/session.lock')), 'the session lock was left behind');
  assert.ok(!existsSync(join(root, 'harness-tasks.json.bak')), 'the task file was written (a .bak appeared)');
}

describe('controller: session start', function () {
  this.timeout(120_000);

  it('auto-init: without harness-tasks.json a run creates the state files, logs INIT, and exits 0 with "no tasks"', async () => {
    const root = makeRepo();
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 0, show(r));
    assert.match(r.stdout, /no tasks/);
    const file = readTasks(root);
    assert.deepEqual(file.tasks, []);
    assert.equal(file.session_config.max_parallel_agents, 3);
    // Only a session that dispatches counts toward max_sessions; this one logged as SESSION-1.
    assert.equal(file.session_count, 0);
    const lines = logLines(root);
    assert.equal(lines[0]!.type, 'INIT');
    assert.equal(lines[0]!.message, `Launchpad runner initialized for project ${root}`);
    assert.deepEqual(
      lines.map((l) => l.type),
      ['INIT', 'LOCK', 'STATS', 'LOCK'],
    );
    assert.match(lines[2]!.message, /^tasks_total=0 completed=0 failed=0 in_batch=0 pending=0 blocked=0 attempts_total=0/);
    assert.ok(existsSync(join(root, 'harness-progress.txt')));
  });

  it('runs the session-start steps in order: lock, recovery, health check (PASS), then batches', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    patchTask(root, 'task-001', { status: 'in_progress', attempts: 1, agent_id: 'agent_dead', worktree_branch: 'harness-task-001' });
    writeInitScript(root, 'echo checking');
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 0, show(r, root));
    const types = logLines(root).map((l) => `${l.type}${l.type === 'INIT' ? `:${l.message}` : ''}`);
    const pos = (t: string) => types.indexOf(t);
    assert.ok(pos('LOCK') === 0, types.join(', '));
    assert.ok(pos('LOCK') < pos('RECOVERY'), types.join(', '));
    assert.ok(pos('RECOVERY') < pos('INIT:Environment health check: PASS'), types.join(', '));
    assert.ok(pos('INIT:Environment health check: PASS') < pos('BATCH'), types.join(', '));
    assert.match(linesOf(root, 'LOCK')[0]!.message, /^acquired \(pid=\d+\)$/);
    assert.equal(linesOf(root, 'LOCK').at(-1)!.message, 'released');
  });

  it('health check failing once: ERROR [ENV_SETUP], run again, PASS, and the session goes on', async () => {
    const counter = join(tempDir(), 'count');
    const root = harness({ tasks: [{ id: 'task-001' }] });
    writeInitScript(
      root,
      `n=$(cat '${counter}' 2>/dev/null || echo 0); n=$((n + 1)); echo $n > '${counter}'\nif [ $n -lt 2 ]; then echo "database not reachable"; exit 1; fi`,
    );
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 0, show(r, root));
    const errors = linesOf(root, 'ERROR');
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.category, 'ENV_SETUP');
    assert.match(errors[0]!.message, /^harness-init\.sh exited with 1: database not reachable/);
    assert.deepEqual(
      linesOf(root, 'INIT').map((l) => l.message),
      ['Environment health check: PASS'],
    );
    assert.equal(read(counter).trim(), '2');
    assert.equal(taskById(root, 'task-001').status, 'completed');
  });

  it('health check failing twice: the session stops with exit 2, the cause and what to do, and nothing is dispatched', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    writeInitScript(root, 'echo "node_modules missing"; exit 4');
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 2, show(r, root));
    assert.match(r.stdout, /harness-init\.sh failed twice \(exited with 4: node_modules missing\)/);
    assert.match(r.stdout, /to fix: fix what it checks \(run it by hand in .*: sh harness-init\.sh\)/);
    const errors = linesOf(root, 'ERROR');
    assert.deepEqual(
      errors.map((l) => l.category),
      ['ENV_SETUP', 'ENV_SETUP', 'ENV_SETUP'],
    );
    assert.match(errors[1]!.message, /exited with 4: node_modules missing/);
    assert.match(errors[2]!.message, /^session stopped \(no attempt was charged\)\. To fix: fix what it checks/);
    assert.equal(linesOf(root, 'INIT').at(-1)!.message, 'Environment health check: FAIL');
    assert.equal(linesOf(root, 'BATCH').length + linesOf(root, 'DISPATCH').length, 0);
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'pending');
    assert.equal(t.attempts, 0);
    assert.equal(linesOf(root, 'STATS').length, 1);
    assert.ok(!existsSync(join(root, '.launchpad/session.lock')));
  });

  it('session_count is incremented each run and every line a run writes carries its SESSION-N', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }, { id: 'task-002', validate: null }] });
    const r1 = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r1.code, 1, show(r1, root));
    assert.equal(readTasks(root).session_count, 1);
    patchTask(root, 'task-002', { validation: { command: 'test -f src/task-002/done.txt' } });
    const r2 = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r2.code, 0, show(r2, root));
    const file = readTasks(root);
    assert.equal(file.session_count, 2);
    assert.match(String(file.last_session), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    for (const [r, n] of [
      [r1, 1],
      [r2, 2],
    ] as const) {
      const printed = r.stdout.split('\n').filter((l) => l.startsWith('['));
      assert.ok(printed.length >= 5);
      for (const l of printed) assert.match(l, new RegExp(`^\\[[^\\]]+\\] \\[SESSION-${n}\\] `));
    }
    assert.deepEqual([...new Set(logLines(root).map((l) => l.session))], [1, 2]);
  });

  it('max_sessions reached: STATS and stop without dispatching (exit 1); raising it lets the next run work', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }], sessionConfig: { max_sessions: 2 } });
    editTaskFile(root, (f) => (f.session_count = 2));
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 1, show(r, root));
    assert.match(r.stdout + r.stderr, /max_sessions/);
    assert.equal(linesOf(root, 'DISPATCH').length, 0);
    assert.equal(linesOf(root, 'STATS').length, 1);
    assert.equal(readTasks(root).session_count, 2);
    assert.equal(taskById(root, 'task-001').status, 'pending');

    editTaskFile(root, (f) => (f.session_config.max_sessions = 3));
    const again = await run(root, agentCmd('writes-done.sh'));
    assert.equal(again.code, 0, show(again, root));
    assert.equal(readTasks(root).session_count, 3);
  });

  it('uncommitted changes to tracked files (staged or not) are refused with a clear message and NOTHING changed', async () => {
    const root = harness({ files: { 'README.md': '# p\n', 'src/app.txt': 'v1\n' }, tasks: [{ id: 'task-001' }], commitState: true });
    writeFileSync(join(root, 'src/app.txt'), 'v2, not committed\n');
    const before = snapshot(root);
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 2, show(r, root));
    assert.match(r.stderr, /uncommitted changes to tracked files: src\/app\.txt/);
    assert.match(r.stderr, /commit or stash/);
    assertNothingChanged(root, before);

    git(root, 'add', 'src/app.txt');
    const staged = snapshot(root);
    const r2 = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r2.code, 2, show(r2, root));
    assert.match(r2.stderr, /src\/app\.txt/);
    assertNothingChanged(root, staged);
  });

  it("tracked state files being modified (the journal's folder too) do not make the tree dirty, nor do untracked files", async () => {
    const root = harness({ tasks: [{ id: 'task-001' }, { id: 'task-002' }], commitState: true });
    editTaskFile(root, (f) => (f.session_config.max_parallel_agents = 2));
    writeFileSync(join(root, 'harness-progress.txt'), '[2025-07-01T10:00:00Z] [SESSION-0] INIT hand-written\n');
    writeFileSync(join(root, 'notes.txt'), 'untracked\n');
    // The journal's folder is Launchpad's too: a temp file committed mid-write and gone since, an archive changed.
    mkdirSync(join(root, '.agent-os/progress/archive'), { recursive: true });
    writeFileSync(join(root, '.agent-os/progress/progress.json.tmp'), '{}\n');
    writeFileSync(join(root, '.agent-os/progress/archive/2026-10.json'), '[]\n');
    git(root, 'add', '-f', '.agent-os');
    git(root, 'commit', '-q', '-m', 'the journal, caught mid-write');
    rmSync(join(root, '.agent-os/progress/progress.json.tmp'));
    writeFileSync(join(root, '.agent-os/progress/archive/2026-10.json'), '[{}]\n');
    assert.match(git(root, 'status', '--porcelain'), / M harness-tasks\.json/);
    assert.match(git(root, 'status', '--porcelain'), / D \.agent-os\/progress\/progress\.json\.tmp/);
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 0, show(r, root));
    assert.equal(taskById(root, 'task-002').status, 'completed');
    assert.equal(read(join(root, 'notes.txt')), 'untracked\n');
  });

  it('not a git repository, a detached HEAD, a repository without commits: exit 2 with a clear message', async () => {
    const plain = tempDir();
    writeFileSync(join(plain, 'harness-tasks.json'), JSON.stringify({ version: 3, tasks: [] }));
    const r1 = await run(plain, agentCmd('writes-done.sh'));
    assert.equal(r1.code, 2, show(r1));
    assert.match(r1.stderr, /not inside a git repository: .*; to make one: git init && git add -A && git commit -m "initial commit"/);

    const detached = harness({ tasks: [{ id: 'task-001' }] });
    git(detached, 'checkout', '-q', '--detach');
    const r2 = await run(detached, agentCmd('writes-done.sh'));
    assert.equal(r2.code, 2, show(r2));
    assert.match(r2.stderr, /HEAD is detached/);
    assert.equal(taskById(detached, 'task-001').status, 'pending');

    const empty = tempDir();
    git(empty, 'init', '-q', '-b', 'main');
    writeFileSync(join(empty, 'harness-tasks.json'), JSON.stringify({ version: 3, tasks: [] }));
    const r3 = await run(empty, agentCmd('writes-done.sh'));
    assert.equal(r3.code, 2, show(r3));
    assert.match(r3.stderr, /no commits yet: .*: git add -A && git commit -m "initial commit"/);
  });

  it('worktrees go to --worktree-dir, else $LAUNCHPAD_WORKTREE_DIR, else session_config.worktree_dir (relative to the state root)', async () => {
    const fromFlag = tempDir();
    const fromEnv = tempDir();
    const worktreeOf = async (args: string[], env: NodeJS.ProcessEnv) => {
      const echo = tempDir();
      const root = harness({ tasks: [{ id: 'task-001' }], sessionConfig: { worktree_dir: 'wt-from-config' } });
      const r = await run(root, agentCmd('echoes-env.sh'), args, { ECHO_DIR: echo, ...env });
      assert.equal(r.code, 0, show(r, root));
      assert.deepEqual(harnessBranches(root), []);
      return { root, path: /^LAUNCHPAD_WORKTREE=(.*)$/m.exec(read(join(echo, 'task-001.1.env')))?.[1] };
    };
    const a = await worktreeOf(['--worktree-dir', fromFlag], { LAUNCHPAD_WORKTREE_DIR: fromEnv });
    assert.equal(a.path, join(fromFlag, 'task-001'));
    const b = await worktreeOf([], { LAUNCHPAD_WORKTREE_DIR: fromEnv });
    assert.equal(b.path, join(fromEnv, 'task-001'));
    const c = await worktreeOf([], {});
    assert.equal(c.path, join(c.root, 'wt-from-config', 'task-001'));
  });

  it('a state root in a subfolder of the repository: agents and validations run in that subfolder of the worktree; its tracked state files are not dirty', async () => {
    const repo = makeRepo({ 'README.md': '# repo\n', 'app/README.md': '# app\n' });
    const app = join(repo, 'app');
    assert.equal((await launchpad(app, ['init'])).code, 0);
    const add = await launchpad(app, ['add', 'First', '--files', 'src/task-001/', '--validate', 'test -f src/task-001/done.txt && pwd -P']);
    assert.equal(add.code, 0, show(add));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'state files tracked');
    const add2 = await launchpad(app, [
      'add',
      'Second',
      '--files',
      'src/task-002/',
      '--validate',
      'test -f src/task-002/done.txt',
      '--max-attempts',
      '1',
    ]);
    assert.equal(add2.code, 0, show(add2));
    assert.match(git(repo, 'status', '--porcelain'), /M app\/harness-tasks\.json/);
    const r = await run(app, byTask({ 'task-002': agentCmd('touches-state.sh') }, agentCmd('writes-done.sh')));
    assert.equal(r.code, 1, show(r, app));
    assert.equal(read(join(repo, 'app/src/task-001/done.txt')), 'done by task-001 attempt 1\n');
    assert.equal(
      read(join(app, '.launchpad/runs/task-001/attempt-1/validation.log')).trim(),
      join(defaultWorktreeRoot(repo), 'task-001', 'app'),
    );
    // The agent's copy of app/harness-progress.txt is a state file too.
    assert.deepEqual(taskById(app, 'task-002').error_log.slice(0, 1), [
      "[AGENT_FAIL] agent modified the controller's state files: app/harness-progress.txt",
    ]);
  });
});
