// The merge protocol: a conflict outside the task's files_hint is discarded
// (MERGE_CONFLICT "Out-of-scope file conflict"); inside it, merge --abort, rebase the branch,
// validate again and merge; a rebase that fails is MERGE_CONFLICT; a MERGE_CONFLICT retry runs
// solo. Merges are one at a time, lowest task id first among those ready.
//
// Agents are gated (gate.sh) so the order of events is forced, not hoped for: the second task
// finishes only after the first one is merged.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  agentCmd,
  assertOrder,
  batches,
  byTask,
  gates,
  git,
  harness,
  harnessBranches,
  launchpadRefs,
  linesOf,
  merges,
  patchTask,
  read,
  show,
  shq,
  startRun,
  taskById,
  unreachableAgentCommits,
  waitForLog,
} from './support';

/** `gate.sh` then the fixture agent, with env assignments for it. */
function gated(name: string, env: Record<string, string> = {}): string {
  const assignments = Object.entries(env).map(([k, v]) => `${k}=${shq(v)}`);
  return [agentCmd('gate.sh'), ...(assignments.length ? ['env', ...assignments] : []), agentCmd(name)].join(' ');
}

/**
 * Runs a, b and c at once: a finishes first; b is let go once a is merged; c (fails-once) is let
 * go once b has failed with MERGE_CONFLICT, so that b's retry and c's are eligible together.
 * c's first attempt took longer (it waited for b), so c's retry holds more work and goes first:
 * b's, a MERGE_CONFLICT retry, is skipped beside it and then runs alone.
 */
async function conflictScenario(root: string, agents: { a: string; b: string }) {
  const g = gates();
  const agentLine = byTask({ 'task-a': agents.a, 'task-b': agents.b, 'task-c': gated('fails-once.sh') }, agentCmd('writes-done.sh'));
  const r = startRun(root, agentLine, [], { GATE_DIR: g.dir });
  await waitForLog(root, /Completed \[task-a\]/);
  g.open('task-b');
  await waitForLog(root, /ERROR \[task-b\] \[MERGE_CONFLICT\]/);
  g.open('task-c');
  return r.done;
}

/**
 * a and b both commit the same change to src/b/f.txt first; b (held at its gate) also rewrites
 * it. Resolves once a is merged, with b still held: opening b's gate makes its merge conflict.
 */
async function rebaseScenario(root: string) {
  const g = gates();
  const agentLine = byTask(
    {
      'task-a': `env SHARED_FILE=src/b/f.txt ${agentCmd('same-first-commit.sh')}`,
      'task-b': gated('same-first-commit.sh', { SHARED_FILE: 'src/b/f.txt', REWRITE_SHARED: '1' }),
    },
    agentCmd('writes-done.sh'),
  );
  const started = startRun(root, agentLine, [], { GATE_DIR: g.dir });
  await waitForLog(root, /Completed \[task-a\]/);
  return { g, started };
}

describe('controller: merge protocol', function () {
  this.timeout(120_000);

  it('a conflict in a file outside the hints → MERGE_CONFLICT "Out-of-scope file conflict", discarded; the retry runs solo and succeeds', async () => {
    const root = harness({ tasks: [{ id: 'task-a' }, { id: 'task-b' }, { id: 'task-c' }] });
    const r = await conflictScenario(root, { a: agentCmd('edits-shared.sh'), b: gated('edits-shared.sh') });
    assert.equal(r.code, 0, show(r, root));

    const b = taskById(root, 'task-b');
    assert.equal(b.status, 'completed');
    assert.equal(b.attempts, 2);
    assert.deepEqual(b.error_log, ['[MERGE_CONFLICT] Out-of-scope file conflict: shared.txt']);
    // The discarded attempt's commits are kept under our ref, not lost.
    assert.equal(
      linesOf(root, 'DISCARD', 'task-b')[0]!.message,
      'worktree=harness-task-b reason="merge failed" kept=refs/launchpad/attempts/task-b/1',
    );
    assert.equal(git(root, 'log', '-1', '--format=%s', 'refs/launchpad/attempts/task-b/1'), '[task-b] Task task-b');
    assert.match(linesOf(root, 'ROLLBACK', 'task-b')[0]!.message, /^git merge --abort \(conflicts: shared\.txt\)$/);
    // (task-b's WARN line, beside one saying its solo retry waits, if a task still ran: the out-of-scope file it merged.)
    assert.equal(
      linesOf(root, 'WARN', 'task-b').filter((l) => /rebased/.test(l.message)).length,
      0,
      'an out-of-scope conflict was rebased',
    );
    assert.deepEqual(
      linesOf(root, 'WARN', 'task-b')
        .map((l) => l.message)
        .filter((m) => !m.startsWith('waits although a slot is free')),
      ['out-of-scope files merged: shared.txt'],
    );
    assertOrder(root, 'task-b', ['DISPATCH', 'VALIDATE', 'ROLLBACK', 'DISCARD', 'ERROR', 'DISPATCH', 'VALIDATE', 'MERGE', 'Completed']);
    // The retry is alone in its batch: it was eligible beside task-c's retry but not taken with it.
    assert.deepEqual(batches(root), [['task-a', 'task-b', 'task-c'], ['task-c'], ['task-b']]);
    assert.equal(read(join(root, 'shared.txt')), 'task-b\n');
    assert.deepEqual(
      merges(root)
        .map((m) => m.subject)
        .reverse(),
      ['Merge [task-a] Task task-a', 'Merge [task-c] Task task-c', 'Merge [task-b] Task task-b'],
    );
    assert.equal(git(root, 'status', '--porcelain', '--untracked-files=no'), '', 'the aborted merge left changes behind');
  });

  it('an in-scope conflict that a rebase resolves: merge --abort, rebase, validate again, merge', async () => {
    // git merge conflicts (base "orig", main "shared", branch "task-b") while git rebase drops
    // the branch's first commit as already upstream (same patch as task-a's) and replays the
    // second cleanly: a case where the rebase retry really helps.
    const root = harness({
      files: { 'README.md': '# p\n', 'src/b/f.txt': 'orig\n' },
      tasks: [{ id: 'task-a' }, { id: 'task-b', files: ['src/task-b/', 'src/b/'] }, { id: 'task-c' }],
    });
    const { g, started } = await rebaseScenario(root);
    g.open('task-b');
    const r = await started.done;
    assert.equal(r.code, 0, show(r, root));

    const b = taskById(root, 'task-b');
    assert.equal(b.status, 'completed');
    assert.equal(b.attempts, 1);
    assert.deepEqual(b.error_log, []);
    assert.equal(linesOf(root, 'ROLLBACK', 'task-b')[0]!.message, 'git merge --abort (conflicts: src/b/f.txt)');
    assert.equal(
      linesOf(root, 'WARN', 'task-b')[0]!.message,
      'merge conflicted in src/b/f.txt; rebased harness-task-b onto main, validating again',
    );
    assertOrder(root, 'task-b', ['AGENT_DONE', 'VALIDATE', 'ROLLBACK', 'WARN', 'VALIDATE', 'MERGE', 'Completed']);
    assert.equal(linesOf(root, 'VALIDATE', 'task-b').length, 2);
    assert.equal(read(join(root, 'src/b/f.txt')), 'task-b\n');
    // The rebase really happened: task-b's copy of the shared commit was dropped, and its
    // remaining commit sits on top of task-a's merge.
    assert.equal(
      git(root, 'log', '--format=%s', 'main')
        .split('\n')
        .filter((s) => s.endsWith('shared change')).length,
      1,
    );
    const [mergeB, mergeA] = git(root, 'log', '--first-parent', '--merges', '--format=%H', 'main').split('\n');
    assert.equal(git(root, 'rev-parse', `${mergeB}^2~1`), mergeA);
    assert.deepEqual(harnessBranches(root), []);
  });

  it('after a successful rebase the work is validated again, and a failure then is TEST_FAIL (nothing merged)', async () => {
    const root = harness({
      files: { 'README.md': '# p\n', 'src/b/f.txt': 'orig\n' },
      tasks: [
        { id: 'task-a' },
        // Passes on its own branch, fails once task-a's work is under it.
        {
          id: 'task-b',
          files: ['src/task-b/', 'src/b/'],
          validate: 'test -f src/task-b/done.txt && test ! -f src/task-a/done.txt',
          maxAttempts: 1,
        },
      ],
    });
    const { g, started } = await rebaseScenario(root);
    const headAfterA = git(root, 'rev-parse', 'HEAD');
    g.open('task-b');
    const r = await started.done;
    assert.equal(r.code, 1, show(r, root));

    const b = taskById(root, 'task-b');
    assert.equal(b.status, 'failed');
    assert.equal(b.error_log.length, 1);
    assert.match(b.error_log[0]!, /^\[TEST_FAIL\] after rebase onto main: test -f .* exited with 1$/);
    assert.deepEqual(
      linesOf(root, 'VALIDATE', 'task-b').map((l) => l.message.replace(/^.*result=/, '')),
      ['PASS', 'FAIL'],
    );
    // Kept twice: the agent's commits before the rebase rewrote them, and the rebased ones.
    assert.equal(
      linesOf(root, 'DISCARD', 'task-b')[0]!.message,
      'worktree=harness-task-b reason="merge failed" kept=refs/launchpad/attempts/task-b/1.2',
    );
    assert.deepEqual(launchpadRefs(root), ['refs/launchpad/attempts/task-b/1', 'refs/launchpad/attempts/task-b/1.2']);
    assert.deepEqual(unreachableAgentCommits(root), []);
    assert.equal(git(root, 'rev-parse', 'HEAD'), headAfterA, 'something was merged after a failed re-validation');
    assert.deepEqual(harnessBranches(root), []);
  });

  it('an in-scope conflict the rebase cannot resolve → MERGE_CONFLICT, discarded; the retry runs solo (its BATCH line has only it)', async () => {
    const root = harness({
      files: { 'README.md': '# p\n', 'src/b/f.txt': 'orig\n' },
      tasks: [{ id: 'task-a' }, { id: 'task-b', files: ['src/task-b/', 'src/b/'] }, { id: 'task-c' }],
    });
    const r = await conflictScenario(root, {
      a: `env SHARED_FILE=src/b/f.txt ${agentCmd('edits-shared.sh')}`,
      b: gated('edits-shared.sh', { SHARED_FILE: 'src/b/f.txt' }),
    });
    assert.equal(r.code, 0, show(r, root));

    const b = taskById(root, 'task-b');
    assert.equal(b.status, 'completed');
    assert.equal(b.attempts, 2);
    assert.deepEqual(b.error_log, ['[MERGE_CONFLICT] conflicts with main in src/b/f.txt; rebase failed']);
    assert.deepEqual(
      linesOf(root, 'ROLLBACK', 'task-b').map((l) => l.message),
      ['git merge --abort (conflicts: src/b/f.txt)', 'git rebase --abort (rebase onto main conflicted)'],
    );
    assert.deepEqual(batches(root), [['task-a', 'task-b', 'task-c'], ['task-c'], ['task-b']]);
    assert.equal(read(join(root, 'src/b/f.txt')), 'task-b\n');
    assert.equal(taskById(root, 'task-c').status, 'completed');
    assert.deepEqual(harnessBranches(root), []);
  });

  it("a real conflict the rebase cannot resolve: the retry, solo on the new base, gets the files and both sides' changes in its prompt and resolves it", async () => {
    // task-a rewrites src/b/f.txt; task-b (held until task-a is merged) rewrites it too. Its
    // second attempt keeps task-a's line and adds its own, but only if its prompt shows the
    // conflict: the file and the base's change (+task-a).
    const root = harness({
      files: { 'README.md': '# p\n', 'src/b/f.txt': 'orig\n' },
      tasks: [
        { id: 'task-a' },
        { id: 'task-b', files: ['src/task-b/', 'src/b/'], validate: 'test -f src/task-b/done.txt && grep -qx task-b src/b/f.txt' },
      ],
    });
    const g = gates();
    const agentLine = byTask(
      {
        'task-a': `env SHARED_FILE=src/b/f.txt ${agentCmd('edits-shared.sh')}`,
        'task-b': gated('resolves-conflict.sh', { SHARED_FILE: 'src/b/f.txt', OTHER_LINE: 'task-a' }),
      },
      agentCmd('writes-done.sh'),
    );
    const started = startRun(root, agentLine, [], { GATE_DIR: g.dir });
    await waitForLog(root, /Completed \[task-a\]/);
    g.open('task-b');
    const r = await started.done;
    assert.equal(r.code, 0, show(r, root));

    const b = taskById(root, 'task-b');
    assert.equal(b.status, 'completed');
    assert.equal(b.attempts, 2);
    assert.deepEqual(b.error_log, ['[MERGE_CONFLICT] conflicts with main in src/b/f.txt; rebase failed']);
    assert.equal(read(join(root, 'src/b/f.txt')), 'task-a\ntask-b\n', 'both changes are in the base branch');
    assert.deepEqual(batches(root), [['task-a', 'task-b'], ['task-b']], 'the retry runs alone');
    const prompt = read(join(root, '.launchpad/runs/task-b/attempt-2/prompt.md'));
    assert.match(prompt, /^Merge conflict in: src\/b\/f\.txt$/m);
    assert.match(prompt, /^main changed them since this attempt started \(git diff [0-9a-f]{7} main\):$/m);
    assert.match(prompt, /^-orig\n\+task-a$/m, "the base's change");
    assert.match(prompt, /^This attempt changed them \(git diff [0-9a-f]{7} harness-task-b\):$/m);
    assert.match(prompt, /^-orig\n\+task-b$/m, "the attempt's own change");
    assert.deepEqual(harnessBranches(root), []);
  });

  it('merges are one at a time, the lowest task id first among those ready', async () => {
    // task-001's merge is held (a pre-merge-commit hook) until task-003 and then task-002 are
    // validated and queued behind it: the queue must then take task-002 before task-003.
    // (pre-merge-commit sees neither MERGE_MSG nor MERGE_HEAD, so it holds the first merge.)
    const root = harness({ tasks: [{ id: 'task-001' }, { id: 'task-002' }, { id: 'task-003' }] });
    const progress = join(root, 'harness-progress.txt');
    const waitLine = (re: string) => `n=0; until grep -q ${shq(re)} ${shq(progress)} || [ $n -ge 300 ]; do sleep 0.1; n=$((n+1)); done`;
    // The first merge is task-001's (the others validate only after VALIDATE [task-001]).
    const held = join(root, '.git/held-first-merge');
    writeFileSync(
      join(root, '.git/hooks/pre-merge-commit'),
      `#!/bin/sh\nif mkdir ${shq(held)} 2>/dev/null; then\n${waitLine('VALIDATE \\[task-002\\]')}\n${waitLine('VALIDATE \\[task-003\\]')}\nsleep 0.5\nfi\nexit 0\n`,
      { mode: 0o755 },
    );
    const tasksPatch = (id: string, waitFor: string) => ({
      validation: { command: `${waitLine(waitFor)}; test -f src/${id}/done.txt`, timeout_seconds: 60 },
    });
    patchTask(root, 'task-003', tasksPatch('task-003', 'VALIDATE \\[task-001\\]'));
    patchTask(root, 'task-002', tasksPatch('task-002', 'VALIDATE \\[task-003\\]'));

    const r = await startRun(root, agentCmd('writes-done.sh')).done;
    assert.equal(r.code, 0, show(r, root));
    assert.deepEqual(
      linesOf(root, 'VALIDATE').map((l) => l.task),
      ['task-001', 'task-003', 'task-002'],
    );
    assert.deepEqual(
      linesOf(root, 'MERGE').map((l) => l.task),
      ['task-001', 'task-002', 'task-003'],
    );
    // One at a time: a straight first-parent line of merge commits.
    assert.deepEqual(
      merges(root).map((m) => m.subject),
      ['Merge [task-003] Task task-003', 'Merge [task-002] Task task-002', 'Merge [task-001] Task task-001'],
    );
  });
});
