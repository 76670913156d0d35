// The Context Window Recovery Protocol, one test per branch, on state prepared by hand as
// a dead controller would have left it (a task in_progress, its worktree/branch made with git),
// plus the rest of a session's clean-up: processes a dead controller left running, orphaned
// worktrees and branches, a half-done merge of ours.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { processIdentity } from '../../../src/core/processIdentity';
import {
  agentCmd,
  assertOrder,
  defaultWorktreeRoot,
  extraWorktrees,
  git,
  harness,
  harnessBranches,
  linesOf,
  ls,
  merges,
  patchTask,
  read,
  run,
  show,
  taskById,
  waitFor,
  writeFiles,
} from './support';

/** Marks the task in_progress as a dispatch would have (attempt 1, from the current head). */
function inProgress(root: string, id: string, extra: Record<string, unknown> = {}): void {
  patchTask(root, id, {
    status: 'in_progress',
    attempts: 1,
    agent_id: 'agent_dead0001',
    worktree_branch: `harness-${id}`,
    started_at_commit: git(root, 'rev-parse', 'HEAD'),
    ...extra,
  });
}

/** A worktree on harness-<id> where the controller puts it. */
function worktree(root: string, id: string): string {
  const path = join(defaultWorktreeRoot(root), id);
  git(root, 'worktree', 'add', '-q', '-b', `harness-${id}`, path, 'HEAD');
  return path;
}

/** The agent's work, committed in the worktree. */
function commitWork(wt: string, id: string, content = 'recovered\n'): void {
  writeFiles(wt, { [`src/${id}/done.txt`]: content });
  git(wt, 'add', '-A');
  git(wt, 'commit', '-q', '-m', `[${id}] work`);
}

/** git without its chatter on the test's stderr ("Automatic merge went well; stopped …"). */
function quietGit(cwd: string, ...args: string[]): void {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
}

/** The agent must not be asked to redo anything: recovery alone decides. */
const NO_AGENT = agentCmd('fails.sh');

function assertCleared(root: string, id: string): void {
  const t = taskById(root, id);
  assert.equal(t.agent_id, null, 'agent_id not cleared');
  assert.equal(t.worktree_branch, null, 'worktree_branch not cleared');
  assert.deepEqual(harnessBranches(root), []);
  assert.deepEqual(extraWorktrees(root), []);
}

describe('controller: recovery of a dead session', function () {
  this.timeout(120_000);

  it('worktree with commits → validated and merged ("validated orphaned worktree"), not dispatched again', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    inProgress(root, 'task-001');
    commitWork(worktree(root, 'task-001'), 'task-001');
    const r = await run(root, NO_AGENT);
    assert.equal(r.code, 0, show(r, root));
    assert.equal(linesOf(root, 'RECOVERY', 'task-001')[0]!.message, 'action="validated orphaned worktree" reason="controller session timeout"');
    assertOrder(root, 'task-001', ['RECOVERY', 'VALIDATE', 'MERGE', 'Completed']);
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'completed');
    assert.equal(t.attempts, 1);
    assert.equal(linesOf(root, 'DISPATCH').length, 0);
    assert.deepEqual(merges(root).map((m) => m.subject), ['Merge [task-001] Task task-001']);
    assert.equal(read(join(root, 'src/task-001/done.txt')), 'recovered\n');
    assertCleared(root, 'task-001');
  });

  it('worktree with commits that fail validation → discarded, failed [TEST_FAIL]', async () => {
    const root = harness({ tasks: [{ id: 'task-001', validate: 'grep -q right src/task-001/done.txt', maxAttempts: 1 }] });
    inProgress(root, 'task-001');
    commitWork(worktree(root, 'task-001'), 'task-001', 'wrong\n');
    const base = git(root, 'rev-parse', 'HEAD');
    const r = await run(root, NO_AGENT);
    assert.equal(r.code, 1, show(r, root));
    assertOrder(root, 'task-001', ['RECOVERY', 'VALIDATE', 'DISCARD', 'ERROR']);
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed');
    assert.equal(t.attempts, 1);
    assert.equal(t.error_log.length, 1);
    assert.match(t.error_log[0]!, /^\[TEST_FAIL\] grep -q right src\/task-001\/done\.txt exited with 1/);
    assert.equal(git(root, 'rev-parse', 'HEAD'), base);
    assertCleared(root, 'task-001');
  });

  it('worktree without commits → removed, failed "[SESSION_TIMEOUT] Sub-agent work incomplete"', async () => {
    const root = harness({ tasks: [{ id: 'task-001', maxAttempts: 1 }] });
    inProgress(root, 'task-001');
    const wt = worktree(root, 'task-001');
    const r = await run(root, NO_AGENT);
    assert.equal(r.code, 1, show(r, root));
    assert.equal(linesOf(root, 'RECOVERY', 'task-001')[0]!.message, 'action="removed empty worktree" reason="no sub-agent progress"');
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed');
    assert.deepEqual(t.error_log, ['[SESSION_TIMEOUT] Sub-agent work incomplete']);
    assert.equal(linesOf(root, 'ERROR', 'task-001')[0]!.category, 'SESSION_TIMEOUT');
    assert.ok(!existsSync(wt));
    assertCleared(root, 'task-001');
  });

  it('no worktree but a branch with commits → validated and merged', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    inProgress(root, 'task-001');
    const wt = worktree(root, 'task-001');
    commitWork(wt, 'task-001');
    git(root, 'worktree', 'remove', wt);
    assert.deepEqual(harnessBranches(root), ['harness-task-001']);
    const r = await run(root, NO_AGENT);
    assert.equal(r.code, 0, show(r, root));
    assert.equal(linesOf(root, 'RECOVERY', 'task-001')[0]!.message, 'action="validated orphaned branch" reason="controller session timeout"');
    assert.equal(taskById(root, 'task-001').status, 'completed');
    assert.deepEqual(merges(root).map((m) => m.subject), ['Merge [task-001] Task task-001']);
    assertCleared(root, 'task-001');
  });

  it('no worktree and no branch → failed "[SESSION_TIMEOUT] No worktree or branch found"', async () => {
    const root = harness({ tasks: [{ id: 'task-001', maxAttempts: 1 }] });
    inProgress(root, 'task-001');
    const r = await run(root, NO_AGENT);
    assert.equal(r.code, 1, show(r, root));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed');
    assert.deepEqual(t.error_log, ['[SESSION_TIMEOUT] No worktree or branch found']);
    assert.equal(linesOf(root, 'RECOVERY', 'task-001').length, 1);
    assertCleared(root, 'task-001');
  });

  it('a failed recovery is retried like any failure (with the error in the prompt)', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    inProgress(root, 'task-001');
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 0, show(r, root));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'completed');
    assert.equal(t.attempts, 2);
    assert.match(read(join(root, '.launchpad/runs/task-001/attempt-2/prompt.md')), /\[SESSION_TIMEOUT\] No worktree or branch found/);
  });

  it('branch already merged (crash between the merge and the state write) → completed without a second merge commit', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    inProgress(root, 'task-001');
    commitWork(worktree(root, 'task-001'), 'task-001');
    git(root, 'merge', '-q', '--no-ff', '-m', 'Merge [task-001] Task task-001', 'harness-task-001');
    const head = git(root, 'rev-parse', 'HEAD');
    const r = await run(root, NO_AGENT);
    assert.equal(r.code, 0, show(r, root));
    assert.equal(taskById(root, 'task-001').status, 'completed');
    assert.equal(linesOf(root, 'RECOVERY', 'task-001')[0]!.message, 'action="marked completed" reason="its branch was already merged"');
    assert.equal(git(root, 'rev-parse', 'HEAD'), head, 'merged a second time');
    assert.equal(merges(root).length, 1);
    assertCleared(root, 'task-001');
  });

  it('branch already merged, the task file without started_at_commit (written by an older controller or by hand) → still completed', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    inProgress(root, 'task-001', { started_at_commit: undefined });
    commitWork(worktree(root, 'task-001'), 'task-001');
    git(root, 'merge', '-q', '--no-ff', '-m', 'Merge [task-001] Task task-001', 'harness-task-001');
    const head = git(root, 'rev-parse', 'HEAD');
    const r = await run(root, NO_AGENT);
    assert.equal(taskById(root, 'task-001').status, 'completed', show(r, root));
    assert.equal(r.code, 0, show(r, root));
    assert.equal(git(root, 'rev-parse', 'HEAD'), head);
    assertCleared(root, 'task-001');
  });

  it('uncommitted changes in the worktree → committed (WARN), validated and merged', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    inProgress(root, 'task-001');
    const wt = worktree(root, 'task-001');
    writeFiles(wt, { 'src/task-001/done.txt': 'never committed\n' });
    const r = await run(root, NO_AGENT);
    assert.equal(r.code, 0, show(r, root));
    assert.match(linesOf(root, 'WARN', 'task-001')[0]!.message, /uncommitted change\(s\); committed them/);
    assert.equal(taskById(root, 'task-001').status, 'completed');
    assert.equal(read(join(root, 'src/task-001/done.txt')), 'never committed\n');
    assertCleared(root, 'task-001');
  });

  it("files a validation left in the worktree after the agent's work was committed are not merged (only the agent's commits are)", async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    inProgress(root, 'task-001');
    const wt = worktree(root, 'task-001');
    commitWork(wt, 'task-001');
    // The dead controller had committed the agent's work and started validating: its marker says so.
    const attempt = join(root, '.launchpad/runs/task-001/attempt-1');
    mkdirSync(attempt, { recursive: true });
    writeFileSync(join(attempt, 'work-committed'), 'agent_dead0001\n');
    writeFiles(wt, { 'coverage/report.txt': 'made by the validation\n', 'src/task-001/cache.tmp': 'x\n' });
    const r = await run(root, NO_AGENT);
    assert.equal(r.code, 0, show(r, root));
    assert.equal(taskById(root, 'task-001').status, 'completed');
    assert.equal(read(join(root, 'src/task-001/done.txt')), 'recovered\n');
    assert.ok(!existsSync(join(root, 'coverage/report.txt')), "the validation's output reached the base branch");
    assert.ok(!existsSync(join(root, 'src/task-001/cache.tmp')));
    assert.equal(linesOf(root, 'WARN', 'task-001').length, 0, 'nothing was committed as leftovers');
    assertCleared(root, 'task-001');
  });

  it("a recorded process of a dead controller that still runs is ended; a reused pid (other identity) is left alone", async () => {
    const root = harness({ tasks: [] });
    const orphan = spawn('sleep', ['120'], { detached: true, stdio: 'ignore' });
    const stranger = spawn('sleep', ['120'], { detached: true, stdio: 'ignore' });
    const orphanExit = new Promise<NodeJS.Signals | null>((resolve) => orphan.on('exit', (_c, s) => resolve(s)));
    try {
      await waitFor('the sleeps to start', () => processIdentity(orphan.pid!) && processIdentity(stranger.pid!));
      const procs = join(root, '.launchpad/procs');
      mkdirSync(procs, { recursive: true });
      const record = (pid: number, identity: string | undefined, label: string) => JSON.stringify({ pid, identity, label, started_at: '2025-07-01T10:00:00Z' });
      writeFileSync(join(procs, 'task-001.agent.json'), record(orphan.pid!, processIdentity(orphan.pid!), 'agent of task-001'));
      writeFileSync(join(procs, 'task-002.validation.json'), record(stranger.pid!, 'someone-else:123', 'validation of task-002'));
      const r = await run(root, NO_AGENT);
      assert.equal(r.code, 0, show(r, root));
      assert.equal(await orphanExit, 'SIGKILL');
      assert.deepEqual(
        linesOf(root, 'RECOVERY').map((l) => l.message),
        ['action="ended orphaned process" reason="agent of task-001 outlived its controller"'],
      );
      assert.equal(stranger.exitCode, null);
      assert.equal(stranger.signalCode, null, 'a process that only reuses a recorded pid was killed');
      assert.deepEqual(ls(procs), []);
    } finally {
      orphan.kill('SIGKILL');
      stranger.kill('SIGKILL');
    }
  });

  it('orphaned worktrees and branches of completed, failed and pending tasks are removed; other branches are not', async () => {
    const root = harness({
      tasks: [
        { id: 'task-001', status: 'completed', attempts: 1 },
        { id: 'task-002', status: 'failed', attempts: 3, error_log: ['[TEST_FAIL] x', '[TEST_FAIL] x', '[TEST_FAIL] x'] },
        { id: 'task-003' },
      ],
    });
    worktree(root, 'task-001');
    const wt2 = worktree(root, 'task-002');
    commitWork(wt2, 'task-002');
    git(root, 'worktree', 'remove', wt2);
    commitWork(worktree(root, 'task-003'), 'task-003', 'stale\n');
    git(root, 'branch', 'harness-not-a-task');
    git(root, 'branch', 'topic');
    // A folder in the worktree root that git does not know (a crash inside `git worktree add`).
    mkdirSync(join(defaultWorktreeRoot(root), 'task-002', 'src'), { recursive: true });

    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 1, show(r, root));
    assert.deepEqual(
      linesOf(root, 'RECOVERY')
        .map((l) => [l.task, l.message])
        .sort(),
      [
        ['task-001', 'action="removed orphaned worktree" reason="task is completed"'],
        ['task-002', 'action="removed orphaned worktree" reason="task is failed"'],
        ['task-003', 'action="removed orphaned worktree" reason="task is pending"'],
      ],
    );
    // task-003 then ran from a fresh worktree, not from the stale one.
    assert.equal(taskById(root, 'task-003').status, 'completed');
    assert.equal(read(join(root, 'src/task-003/done.txt')), 'done by task-003 attempt 1\n');
    assert.deepEqual(harnessBranches(root), ['harness-not-a-task']);
    assert.match(git(root, 'branch', '--list', 'topic'), /topic/);
    assert.deepEqual(extraWorktrees(root), []);
    assert.deepEqual(ls(defaultWorktreeRoot(root)), []);
  });

  it('a half-done merge of ours (MERGE_HEAD, "Merge [id]" message) is aborted, then the task recovered with one merge', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    inProgress(root, 'task-001');
    commitWork(worktree(root, 'task-001'), 'task-001');
    quietGit(root, 'merge', '-q', '--no-ff', '--no-commit', '-m', 'Merge [task-001] Task task-001', 'harness-task-001');
    assert.ok(existsSync(join(root, '.git/MERGE_HEAD')));
    const r = await run(root, NO_AGENT);
    assert.equal(r.code, 0, show(r, root));
    assert.deepEqual(
      linesOf(root, 'ROLLBACK').map((l) => l.message),
      ['git merge --abort (interrupted: Merge [task-001] Task task-001)'],
    );
    assert.equal(taskById(root, 'task-001').status, 'completed');
    assert.equal(merges(root).length, 1);
    assert.ok(!existsSync(join(root, '.git/MERGE_HEAD')));
    assertCleared(root, 'task-001');
  });

  it("a person's own merge in progress is not ours to abort: the run refuses (exit 2) and leaves it", async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    git(root, 'checkout', '-q', '-b', 'topic');
    writeFiles(root, { 'topic.txt': 'topic\n' });
    git(root, 'add', 'topic.txt');
    git(root, 'commit', '-q', '-m', 'topic');
    git(root, 'checkout', '-q', 'main');
    quietGit(root, 'merge', '-q', '--no-ff', '--no-commit', 'topic');
    const r = await run(root, NO_AGENT);
    assert.equal(r.code, 2, show(r, root));
    assert.match(r.stderr, /uncommitted changes/);
    assert.ok(existsSync(join(root, '.git/MERGE_HEAD')), "the person's merge was aborted");
    assert.equal(taskById(root, 'task-001').status, 'pending');
  });

  it('a worktree left in the middle of a rebase (a crash inside the merge protocol) is brought back and handled, not committed mid-rebase', async () => {
    const root = harness({ files: { 'README.md': '# p\n', 'src/task-001/f.txt': 'orig\n' }, tasks: [{ id: 'task-001', maxAttempts: 1 }] });
    inProgress(root, 'task-001');
    const wt = worktree(root, 'task-001');
    writeFiles(wt, { 'src/task-001/f.txt': 'branch\n', 'src/task-001/done.txt': 'done\n' });
    git(wt, 'add', '-A');
    git(wt, 'commit', '-q', '-m', '[task-001] work');
    writeFiles(root, { 'src/task-001/f.txt': 'main\n' });
    git(root, 'commit', '-q', '-am', 'main moved on');
    assert.notEqual(spawnSync('git', ['rebase', 'main'], { cwd: wt, stdio: 'ignore' }).status, 0, 'the rebase should stop on its conflict');
    const r = await run(root, NO_AGENT);
    assert.equal(r.code, 1, show(r, root));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed', show(r, root));
    assert.deepEqual(t.error_log, ['[MERGE_CONFLICT] conflicts with main in src/task-001/f.txt; rebase failed']);
    assert.equal(git(root, 'log', '-1', '--format=%s', 'main'), 'main moved on');
    assertCleared(root, 'task-001');
  });
});
