// One step of a run driven on its own: a Session built from a SessionContext by hand (a real
// repository in a temp folder, the real store, log and git), without Controller.run(). The
// merge step's two ends, completed and failed, and what each leaves in the task file, the log
// and the repository.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { mergeTask } from '../../../src/core/controller/merge';
import { Session } from '../../../src/core/controller/session';
import { createWorktree } from '../../../src/core/controller/taskRun';
import type { TaskEvent } from '../../../src/core/controller/types';
import { parseLogLine } from '../../../src/core/log/logLine';
import { dispatchTask } from '../../../src/core/tasks/transitions';
import { git, writeFiles } from '../helpers/gitRepo';
import { makeHarness, readLog, taskById } from '../helpers/harness';
import { testSession } from '../helpers/session';
import { tempDir } from '../helpers/tmp';

const UTC_SECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

/** A session over a fresh harness with one task, `task-001`, whose hint is src/task-001/. */
async function sessionFor(files: Record<string, string> = {}): Promise<{ s: Session; root: string; events: TaskEvent[] }> {
  const root = makeHarness({ files: { 'README.md': '# project\n', ...files }, tasks: [{ id: 'task-001' }] });
  const { s } = await testSession(root, { number: 7, worktreeDir: tempDir('launchpad-wt-') });
  const events: TaskEvent[] = [];
  s.taskEvents.event((e) => events.push(e));
  return { s, root, events };
}

/** Dispatches task-001 and commits `files` on its branch, as an agent would. */
async function agentWork(s: Session, files: Record<string, string>) {
  const branch = 'harness-task-001';
  const { before, attempt } = await s.transact((file) =>
    dispatchTask(file, 'task-001', { agentId: 'agent_test', branch, baseCommit: s.head }),
  );
  const worktree = s.worktreePath('task-001');
  await createWorktree(s, 'task-001', worktree, branch, s.head, { taskId: 'task-001', agentId: 'agent_test' });
  writeFiles(worktree, files);
  git(worktree, 'add', '-A');
  git(worktree, 'commit', '-q', '-m', '[task-001] work');
  return { task: before, worktree, attempt: s.createAttempt('task-001', attempt), terminal: s.terminals.open(before, worktree) };
}

describe('controller/session steps, driven from a SessionContext', () => {
  it('mergeTask merges --no-ff and completes the task: state, log, worktree and branch gone', async function () {
    this.timeout(60_000);
    const { s, root, events } = await sessionFor();
    const work = await agentWork(s, { 'src/task-001/done.txt': 'done\n' });
    assert.equal(taskById(root, 'task-001').status, 'in_progress');

    assert.equal(await mergeTask(s, work.task, work.worktree, work.terminal, work.attempt), 'completed');
    // The result is recorded when mergeTask returns; the worktree goes after (the slot is free).
    await s.worktreesRemoved();

    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'completed');
    assert.match(t.completed_at!, UTC_SECONDS);
    assert.equal(t.agent_id, null);
    assert.equal(t.worktree_branch, null);
    assert.equal(t.attempts, 1);
    const head = git(root, 'rev-parse', 'HEAD');
    assert.equal(s.head, head, 'new worktrees start from the merge');
    assert.equal(git(root, 'log', '-1', '--format=%P').split(' ').length, 2, 'a merge commit');
    assert.equal(git(root, 'log', '-1', '--format=%s'), 'Merge [task-001] Task task-001');
    assert.equal(readFileSync(join(root, 'src/task-001/done.txt'), 'utf8'), 'done\n');
    assert.ok(!existsSync(work.worktree), 'worktree removed');
    assert.equal(git(root, 'branch', '--list', 'harness-task-001'), '', 'branch deleted');

    const lines = readLog(root).map((l) => parseLogLine(l)!);
    assert.deepEqual(
      lines.map((e) => [e.session, e.type, e.taskId, e.message]),
      [
        [7, 'MERGE', 'task-001', `branch=harness-task-001 into=main (commit ${head.slice(0, 7)})`],
        [7, 'Completed', 'task-001', `(commit ${head.slice(0, 7)})`],
      ],
    );
    assert.deepEqual(
      events.map((e) => e.kind),
      ['completed'],
    );
  });

  it('mergeTask on a conflict outside files_hint fails the task with MERGE_CONFLICT and discards the work', async function () {
    this.timeout(60_000);
    const { s, root, events } = await sessionFor({ 'shared.txt': 'base\n' });
    const work = await agentWork(s, { 'shared.txt': 'from the agent\n', 'src/task-001/done.txt': 'done\n' });
    writeFileSync(join(root, 'shared.txt'), 'from main\n');
    git(root, 'commit', '-q', '-am', 'main moves on');
    const mainHead = git(root, 'rev-parse', 'HEAD');

    assert.equal(await mergeTask(s, work.task, work.worktree, work.terminal, work.attempt), 'failed');
    await s.worktreesRemoved();

    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed');
    assert.deepEqual(t.error_log, ['[MERGE_CONFLICT] Out-of-scope file conflict: shared.txt']);
    assert.match(t.failed_at!, UTC_SECONDS);
    assert.equal(t.agent_id, null);
    assert.equal(t.worktree_branch, null);
    assert.equal(git(root, 'rev-parse', 'HEAD'), mainHead, 'nothing merged');
    assert.equal(git(root, 'status', '--porcelain', '--untracked-files=no'), '', 'the merge was aborted');
    assert.ok(!existsSync(work.worktree), 'worktree removed');
    assert.equal(git(root, 'branch', '--list', 'harness-task-001'), '', 'branch deleted');

    const lines = readLog(root).map((l) => parseLogLine(l)!);
    assert.deepEqual(
      lines.map((e) => [e.type, e.category, e.message]),
      [
        ['ROLLBACK', undefined, 'git merge --abort (conflicts: shared.txt)'],
        ['DISCARD', undefined, 'worktree=harness-task-001 reason="merge failed" kept=refs/launchpad/attempts/task-001/1'],
        ['ERROR', 'MERGE_CONFLICT', 'Out-of-scope file conflict: shared.txt'],
      ],
    );
    assert.deepEqual(
      events.map((e) => e.kind),
      ['failed'],
    );
  });

  it('failTask writes the one-line reason to the entry and the ERROR line alike, and keeps the output tail', async function () {
    this.timeout(60_000);
    const { s, root } = await sessionFor();
    const work = await agentWork(s, { 'src/task-001/done.txt': 'done\n' });
    await s.failTask(work.task, 'TEST_FAIL', 'npm test exited with 1:\n  expected 2, got 3', 'line\n'.repeat(2000), 'validation failed');
    await s.worktreesRemoved();
    const t = taskById(root, 'task-001');
    assert.deepEqual(t.error_log, ['[TEST_FAIL] npm test exited with 1: expected 2, got 3']);
    assert.equal(t.error_tail!.length, 4000);
    const error = readLog(root)
      .map((l) => parseLogLine(l)!)
      .find((e) => e.type === 'ERROR')!;
    assert.equal(`[${error.category}] ${error.message}`, t.error_log[0]);
    assert.ok(!existsSync(work.worktree));
  });

  it('a new worktree for a task waits for the removal of its last one, which runs after the result is recorded', async function () {
    this.timeout(60_000);
    const { s, root } = await sessionFor();
    const work = await agentWork(s, { 'src/task-001/done.txt': 'done\n' });
    await s.failTask(work.task, 'TEST_FAIL', 'boom', undefined, 'validation failed');
    assert.equal(taskById(root, 'task-001').status, 'failed', 'recorded before failTask returned');
    // The retry's worktree, asked for at once: created after the old one went, not beside it.
    await createWorktree(s, 'task-001', work.worktree, 'harness-task-001', s.head, { taskId: 'task-001', agentId: 'agent_test' });
    assert.ok(existsSync(work.worktree));
    assert.equal(git(work.worktree, 'rev-parse', 'HEAD'), s.head, 'a fresh branch from the base, not the failed work');
    assert.equal(existsSync(join(work.worktree, 'src/task-001/done.txt')), false);
    await s.worktreesRemoved();
    assert.ok(existsSync(work.worktree), 'and nothing removes it afterwards');
    assert.deepEqual(
      readLog(root).map((l) => parseLogLine(l)!.type),
      ['DISCARD', 'ERROR'],
    );
  });

  it('createWorktree over a leftover branch of the task keeps its commits under refs/launchpad/attempts/ before replacing it', async function () {
    this.timeout(60_000);
    const { s, root } = await sessionFor();
    const work = await agentWork(s, { 'src/task-001/done.txt': 'left over\n' });
    const leftover = git(root, 'rev-parse', 'harness-task-001');
    await createWorktree(s, 'task-001', work.worktree, 'harness-task-001', s.head, { taskId: 'task-001', agentId: 'agent_test' });
    assert.equal(git(root, 'rev-parse', 'harness-task-001'), s.head, 'a fresh branch from the base');
    assert.equal(git(root, 'rev-parse', 'refs/launchpad/attempts/task-001/1'), leftover);
  });

  it('keepAttempt keeps only what the base branch lacks, and a failTask names the ref on its DISCARD line', async function () {
    this.timeout(60_000);
    const { s, root } = await sessionFor();
    const work = await agentWork(s, { 'src/task-001/done.txt': 'done\n' });
    const tip = git(root, 'rev-parse', 'harness-task-001');
    await s.failTask(work.task, 'AGENT_FAIL', 'gave up', undefined, 'agent reported failure');
    const discard = readLog(root)
      .map((l) => parseLogLine(l)!)
      .find((e) => e.type === 'DISCARD')!;
    assert.equal(discard.message, 'worktree=harness-task-001 reason="agent reported failure" kept=refs/launchpad/attempts/task-001/1');
    assert.equal(git(root, 'rev-parse', 'refs/launchpad/attempts/task-001/1'), tip);
    assert.equal(await s.keepAttempt('task-002', 1, s.head), undefined, 'the base itself needs no keeping');
  });

  it("a task's attempts are listed in the order they were made, not by number", async function () {
    this.timeout(60_000);
    const { s } = await sessionFor();
    const hourAgo = Date.now() / 1000 - 3600;
    // attempt 2, then a person's retry (attempts back to 0), then attempt 1 and 2 again.
    const made = [s.createAttempt('task-001', 2), s.createAttempt('task-001', 1), s.createAttempt('task-001', 2)];
    made.forEach((a, i) => utimesSync(a.sessionFile, hourAgo + i * 60, hourAgo + i * 60));
    assert.deepEqual(
      made.map((a) => a.name),
      ['attempt-2', 'attempt-1', 'attempt-2.2'],
    );
    made[0]!.markWorkCommitted('agent_one');
    assert.deepEqual(
      s.paths.attemptsOf('task-001').map((a) => a.name),
      ['attempt-2', 'attempt-1', 'attempt-2.2'],
    );
    assert.equal(made[2]!.session(), 7);
    assert.equal(s.workCommitted('task-001', 'agent_one'), true);
    assert.equal(s.workCommitted('task-001', 'agent_two'), false);
    assert.deepEqual(s.paths.tasksWithAttempts(), ['task-001']);
  });
});
