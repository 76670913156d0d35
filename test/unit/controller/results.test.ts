// Collecting an agent's result : the verdict from the
// last RESULT line, validation in the worktree, a --no-ff merge on PASS, discard + retry with
// the error in the next prompt on FAIL, AGENT_FAIL for every way an agent can fail.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  agentCmd,
  assertOrder,
  batches,
  byTask,
  defaultWorktreeRoot,
  extraWorktrees,
  git,
  harness,
  harnessBranches,
  linesOf,
  ls,
  merges,
  read,
  run,
  show,
  taskById,
} from './support';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

describe('controller: collecting and validating results', function () {
  this.timeout(120_000);

  it('PASS: a --no-ff merge commit "Merge [id] title" with 2 parents, completed_at set, worktree and branch removed, artefacts kept', async () => {
    const root = harness({ tasks: [{ id: 'task-001', title: 'Add the greeting' }] });
    const base = git(root, 'rev-parse', 'HEAD');
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 0, show(r, root));

    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'completed');
    assert.match(String(t.completed_at), ISO);
    assert.equal(t.attempts, 1);
    assert.deepEqual(t.error_log, []);
    assert.equal(t.agent_id, null);
    assert.equal(t.worktree_branch, null);

    const [parents, subject] = git(root, 'log', '-1', '--format=%P%x09%s', 'main').split('\t');
    assert.equal(subject, 'Merge [task-001] Add the greeting');
    const [first, second] = parents!.split(' ');
    assert.equal(parents!.split(' ').length, 2, 'not a merge commit');
    assert.equal(first, base, 'first parent is not the base branch head');
    assert.equal(git(root, 'log', '-1', '--format=%s', second!), '[task-001] Add the greeting');
    assert.equal(read(join(root, 'src/task-001/done.txt')), 'done by task-001 attempt 1\n');

    assert.deepEqual(harnessBranches(root), []);
    assert.deepEqual(extraWorktrees(root), []);
    assert.ok(!existsSync(join(defaultWorktreeRoot(root), 'task-001')), 'worktree folder left behind');

    assertOrder(root, 'task-001', ['DISPATCH', 'AGENT_DONE', 'VALIDATE', 'MERGE', 'Completed']);
    assert.match(linesOf(root, 'AGENT_DONE', 'task-001')[0]!.message, /^agent=agent_\w+ result=success$/);
    assert.equal(linesOf(root, 'VALIDATE', 'task-001')[0]!.message, 'command="test -f src/task-001/done.txt" result=PASS');
    const short = git(root, 'rev-parse', '--short=7', 'HEAD');
    assert.equal(linesOf(root, 'MERGE', 'task-001')[0]!.message, `branch=harness-task-001 into=main (commit ${short})`);

    const attempt = join(root, '.launchpad/runs/task-001/attempt-1');
    for (const f of ['prompt.md', 'transcript.log', 'validation.log']) assert.ok(existsSync(join(attempt, f)), `${f} missing`);
    assert.match(read(join(attempt, 'transcript.log')), /RESULT:SUCCESS/);
    assert.match(read(join(attempt, 'prompt.md')), /^- ID: task-001$/m);
  });

  it('FAIL: discarded, attempts+1, "[TEST_FAIL] …" in error_log, a bounded error_tail of a long output, status failed, no merge', async () => {
    const root = harness({
      tasks: [{ id: 'task-001', validate: 'seq 1 20000; test -f src/task-001/done.txt', maxAttempts: 1 }],
    });
    const base = git(root, 'rev-parse', 'HEAD');
    const r = await run(root, agentCmd('lazy-first.sh'));
    assert.equal(r.code, 1, show(r, root));

    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed');
    assert.equal(t.attempts, 1);
    assert.deepEqual(t.error_log, ['[TEST_FAIL] seq 1 20000; test -f src/task-001/done.txt exited with 1: 20000']);
    const tail = String(t.error_tail);
    assert.ok(tail.length > 1000 && tail.length <= 4000, `error_tail has ${tail.length} characters`);
    assert.match(tail, /\n19999\n20000\n?$/);
    assert.equal(t.agent_id, null);
    assert.equal(t.worktree_branch, null);

    assert.equal(git(root, 'rev-parse', 'HEAD'), base, 'a failed task changed the base branch');
    assert.deepEqual(harnessBranches(root), []);
    assert.deepEqual(extraWorktrees(root), []);
    assertOrder(root, 'task-001', ['DISPATCH', 'AGENT_DONE', 'VALIDATE', 'DISCARD', 'ERROR']);
    assert.match(linesOf(root, 'VALIDATE', 'task-001')[0]!.message, /result=FAIL$/);
    assert.equal(
      linesOf(root, 'DISCARD', 'task-001')[0]!.message,
      'worktree=harness-task-001 reason="validation failed" kept=refs/launchpad/attempts/task-001/1',
    );
    const err = linesOf(root, 'ERROR', 'task-001')[0]!;
    assert.equal(err.category, 'TEST_FAIL');
    assert.equal(linesOf(root, 'MERGE').length, 0);
    // The whole output is kept in the attempt's validation log.
    assert.match(read(join(root, '.launchpad/runs/task-001/attempt-1/validation.log')), /^1\n2\n3\n[\s\S]*\n20000\n$/);
  });

  it('retry: attempt 2\'s prompt.md carries the error log under "## Previous Attempt(s)" and the task then completes', async () => {
    const root = harness({
      tasks: [{ id: 'task-001', validate: 'test -f src/task-001/done.txt || { echo "done.txt is missing"; exit 1; }' }],
    });
    const r = await run(root, agentCmd('lazy-first.sh'));
    assert.equal(r.code, 0, show(r, root));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'completed');
    assert.equal(t.attempts, 2);
    assert.equal(t.error_log.length, 1);
    assert.match(t.error_log[0]!, /^\[TEST_FAIL\] .* exited with 1: done\.txt is missing$/);

    const runs = join(root, '.launchpad/runs/task-001');
    assert.deepEqual(ls(runs), ['attempt-1', 'attempt-2']);
    const first = read(join(runs, 'attempt-1/prompt.md'));
    const second = read(join(runs, 'attempt-2/prompt.md'));
    assert.doesNotMatch(first, /Previous Attempt/);
    assert.match(second, /^## Previous Attempt\(s\)$/m);
    assert.match(second, /attempted 1 time\(s\) before and failed/);
    assert.ok(second.includes(t.error_log[0]!), 'the error_log entry is not in the retry prompt');
    assert.match(second, /done\.txt is missing/);
    assert.deepEqual(batches(root), [['task-001'], ['task-001']]);
    for (const a of ['attempt-1', 'attempt-2']) {
      assert.match(read(join(runs, a, 'transcript.log')), /^RESULT:SUCCESS\n$/);
      assert.match(read(join(runs, a, 'validation.log')), a === 'attempt-1' ? /done\.txt is missing/ : /^$/);
    }
    assert.equal(read(join(root, 'src/task-001/done.txt')), 'done by task-001 attempt 2\n');
  });

  it('retries up to max_attempts, then the task is exhausted: no further dispatch, not in this run nor the next', async () => {
    const root = harness({ tasks: [{ id: 'task-001', maxAttempts: 2 }] });
    const r = await run(root, agentCmd('fails.sh'));
    assert.equal(r.code, 1, show(r, root));
    assert.match(r.stdout, /nothing left that can run/);
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed');
    assert.equal(t.attempts, 2);
    assert.deepEqual(t.error_log, ['[AGENT_FAIL] could not resolve import errors', '[AGENT_FAIL] could not resolve import errors']);
    assert.equal(linesOf(root, 'DISPATCH', 'task-001').length, 2);

    const again = await run(root, agentCmd('writes-done.sh'));
    assert.equal(again.code, 1, show(again, root));
    assert.equal(linesOf(root, 'DISPATCH').filter((l) => l.session === 2).length, 0, 'an exhausted task was dispatched again');
    assert.equal(taskById(root, 'task-001').attempts, 2);
  });

  it('AGENT_FAIL from "RESULT:FAIL reason", from no RESULT line, from a non-zero exit without one; RESULT:SUCCESS with exit 1 is a success', async () => {
    const root = harness({
      tasks: ['task-001', 'task-002', 'task-003', 'task-004'].map((id) => ({ id, maxAttempts: 1 })),
    });
    const agentLine = byTask(
      { 'task-001': agentCmd('fails.sh'), 'task-002': agentCmd('no-result.sh'), 'task-003': agentCmd('exits-without-result.sh') },
      agentCmd('success-nonzero.sh'),
    );
    const r = await run(root, agentLine, ['--max-parallel', '4'], {
      NOISE_LINES: '20000',
      FAIL_REASON: 'Sub-agent could not resolve import errors',
    });
    assert.equal(r.code, 1, show(r, root));

    const t1 = taskById(root, 'task-001');
    assert.equal(t1.status, 'failed');
    assert.deepEqual(t1.error_log, ['[AGENT_FAIL] Sub-agent could not resolve import errors']);
    const tail = String(t1.error_tail);
    assert.ok(tail.length <= 4000 && tail.length > 1000, `error_tail has ${tail.length} characters`);
    assert.match(tail, /line 19999\nRESULT:FAIL Sub-agent could not resolve import errors\n$/);

    const t2 = taskById(root, 'task-002');
    assert.equal(t2.status, 'failed', 'an agent without a verdict was trusted although its work would pass validation');
    assert.deepEqual(t2.error_log, ['[AGENT_FAIL] agent exited 0 without a RESULT:SUCCESS or RESULT:FAIL line: all done, I think']);

    const t3 = taskById(root, 'task-003');
    assert.equal(t3.status, 'failed');
    assert.deepEqual(t3.error_log, [
      '[AGENT_FAIL] agent exited with 3 without a RESULT:SUCCESS or RESULT:FAIL line: Segmentation fault (core dumped)',
    ]);
    assert.match(String(t3.error_tail), /Segmentation fault/);

    assert.equal(taskById(root, 'task-004').status, 'completed');

    for (const id of ['task-001', 'task-002', 'task-003']) {
      assert.match(linesOf(root, 'AGENT_DONE', id)[0]!.message, /result=error$/);
      // Only task-002's agent committed anything: only its commits are kept.
      const kept = id === 'task-002' ? ` kept=refs/launchpad/attempts/${id}/1` : '';
      assert.equal(linesOf(root, 'DISCARD', id)[0]!.message, `worktree=harness-${id} reason="agent reported failure"${kept}`);
      assert.equal(linesOf(root, 'ERROR', id)[0]!.category, 'AGENT_FAIL');
      assert.equal(linesOf(root, 'VALIDATE', id).length, 0, `${id} was validated after an agent failure`);
    }
    assert.match(linesOf(root, 'AGENT_DONE', 'task-004')[0]!.message, /result=success$/);
    assert.deepEqual(
      merges(root).map((m) => m.subject),
      ['Merge [task-004] Task task-004'],
    );
    assert.deepEqual(harnessBranches(root), []);
  });

  it("the agent's uncommitted leftovers are committed (WARN) before validation, and merged", async () => {
    const root = harness({ tasks: [{ id: 'task-001', files: ['src/task-001/', 'README.md'] }] });
    const r = await run(root, agentCmd('leaves-uncommitted.sh'));
    assert.equal(r.code, 0, show(r, root));
    assert.equal(linesOf(root, 'WARN', 'task-001')[0]?.message, 'agent left 2 uncommitted change(s); committed them');
    assertOrder(root, 'task-001', ['AGENT_DONE', 'WARN', 'VALIDATE', 'MERGE', 'Completed']);
    assert.equal(read(join(root, 'src/task-001/done.txt')), 'done, not committed\n');
    assert.match(read(join(root, 'README.md')), /edited by task-001/);
    assert.match(git(root, 'log', '--format=%s', 'main'), /\[task-001\] Task task-001 \(changes left uncommitted by the agent\)/);
    assert.equal(git(root, 'status', '--porcelain', '--untracked-files=no'), '');
  });

  it('an agent that changes harness-progress.txt (a state file) fails with AGENT_FAIL and is never validated or merged', async () => {
    const root = harness({ tasks: [{ id: 'task-001', maxAttempts: 1 }] });
    const base = git(root, 'rev-parse', 'HEAD');
    const r = await run(root, agentCmd('touches-state.sh'));
    assert.equal(r.code, 1, show(r, root));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed');
    assert.deepEqual(t.error_log, ["[AGENT_FAIL] agent modified the controller's state files: harness-progress.txt"]);
    assert.equal(linesOf(root, 'VALIDATE').length, 0);
    assert.equal(git(root, 'rev-parse', 'HEAD'), base);
    // The agent's fake line never reached the real log.
    assert.equal(linesOf(root, 'Completed').length, 0);
  });

  it('CHECKPOINT lines of an agent are logged and recorded on the task', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    const r = await run(root, agentCmd('checkpoints.sh'));
    assert.equal(r.code, 0, show(r, root));
    assert.deepEqual(
      linesOf(root, 'CHECKPOINT', 'task-001').map((l) => l.message),
      ['step=1/2 "wrote the file"', 'step=2/2 "about to commit"'],
    );
    const t = taskById(root, 'task-001') as { checkpoints?: Array<{ step: number; total: number; description: string }> };
    assert.deepEqual(
      t.checkpoints?.map((c) => [c.step, c.total, c.description]),
      [
        [1, 2, 'wrote the file'],
        [2, 2, 'about to commit'],
      ],
    );
    assert.ok(
      readFileSync(join(root, 'harness-progress.txt'), 'utf8').indexOf('CHECKPOINT') <
        readFileSync(join(root, 'harness-progress.txt'), 'utf8').indexOf('AGENT_DONE'),
    );
  });
});
