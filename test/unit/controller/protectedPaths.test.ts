// Protected paths (session_config.protected_paths ∪ a task's protected_paths): an attempt whose
// commits change one fails, charged, naming the files, its work kept under its attempt ref; the
// validation otherwise runs on the base's copies of them, whatever else touched them.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { defaultWorktreeRoot, git, harness, launchpad, linesOf, merges, patchTask, read, run, show, taskById, writeFiles } from './support';

/** The check the validation runs: it passes on the base's copies of tests/ only. */
const TESTS = {
  'tests/check.sh': 'grep -qx 4 src/calc.txt && grep -qx base tests/data.txt && test ! -e tests/planted.txt\n',
  'tests/data.txt': 'base\n',
};
const VALIDATE = 'sh tests/check.sh';

/** Attempt 1 weakens the check and writes a wrong answer; later attempts write the right one. */
const WEAKENS_FIRST = [
  'mkdir -p src',
  'if [ "$LAUNCHPAD_ATTEMPT" = 1 ]; then echo "exit 0" > tests/check.sh; echo 5 > src/calc.txt; else echo 4 > src/calc.txt; fi',
  'git add -A && git commit -qm work && echo RESULT:SUCCESS',
].join('; ');

/** The same, but attempt 1 commits only its code and leaves the weakened check uncommitted. */
const WEAKENS_FIRST_UNCOMMITTED = [
  'mkdir -p src',
  'if [ "$LAUNCHPAD_ATTEMPT" = 1 ]; then echo 5 > src/calc.txt; else echo 4 > src/calc.txt; fi',
  'git add -A && git commit -qm work',
  'if [ "$LAUNCHPAD_ATTEMPT" = 1 ]; then echo "exit 0" > tests/check.sh; fi',
  'echo RESULT:SUCCESS',
].join('; ');

describe('controller: protected paths', function () {
  this.timeout(120_000);

  it('an attempt that weakens a protected test (left uncommitted: its leftovers are committed) fails charged (TEST_FAIL) naming it, kept under its ref; the retry that leaves it alone merges', async () => {
    const root = harness({ files: TESTS, tasks: [{ id: 'task-001', validate: VALIDATE, protected_paths: ['tests/check.sh'] }] });
    const r = await run(root, WEAKENS_FIRST_UNCOMMITTED);
    assert.equal(r.code, 0, show(r, root));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'completed');
    assert.equal(t.attempts, 2, 'the first attempt was charged');
    assert.deepEqual(t.error_log, ['[TEST_FAIL] changed protected files: tests/check.sh (protected_paths)']);
    // The weakened test never ran: no VALIDATE line for the first attempt.
    assert.deepEqual(
      linesOf(root, 'VALIDATE', 'task-001').map((l) => l.message),
      [`command="${VALIDATE}" result=PASS`],
    );
    assert.equal(git(root, 'show', 'refs/launchpad/attempts/task-001/1:tests/check.sh'), 'exit 0');
    assert.equal(git(root, 'show', 'refs/launchpad/attempts/task-001/1:src/calc.txt'), '5');
    // The agent was told.
    assert.match(
      read(join(root, '.launchpad/runs/task-001/attempt-1/prompt.md')),
      /Do NOT change these protected paths: tests\/check\.sh\n.*fails/,
    );
    assert.equal(read(join(root, 'tests/check.sh')), TESTS['tests/check.sh']);
    assert.equal(read(join(root, 'src/calc.txt')), '4\n');
    assert.equal(merges(root).length, 1);
  });

  it("a protected file changed outside the attempt's commits: the validation runs on the base's copies", async () => {
    // The agent's work was committed and its validation had begun when the controller died; what
    // was left under tests/ since (a changed file, an untracked one) is not the attempt's work.
    const root = harness({ files: TESTS, tasks: [{ id: 'task-001', validate: VALIDATE }], sessionConfig: { protected_paths: ['tests'] } });
    patchTask(root, 'task-001', {
      status: 'in_progress',
      attempts: 1,
      agent_id: 'agent_dead0001',
      worktree_branch: 'harness-task-001',
      started_at_commit: git(root, 'rev-parse', 'HEAD'),
    });
    const wt = join(defaultWorktreeRoot(root), 'task-001');
    git(root, 'worktree', 'add', '-q', '-b', 'harness-task-001', wt, 'HEAD');
    writeFiles(wt, { 'src/calc.txt': '4\n' });
    git(wt, 'add', '-A');
    git(wt, 'commit', '-q', '-m', '[task-001] work');
    const attempt = join(root, '.launchpad/runs/task-001/attempt-1');
    mkdirSync(attempt, { recursive: true });
    writeFileSync(join(attempt, 'session'), '1\n');
    writeFileSync(join(attempt, 'verdict'), 'success\nagent=agent_dead0001\n');
    writeFileSync(join(attempt, 'work-committed'), 'agent_dead0001\n');
    writeFiles(wt, { 'tests/data.txt': 'weak\n', 'tests/planted.txt': 'x\n' });

    const r = await run(root, 'false');
    assert.equal(r.code, 0, show(r, root));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'completed', 'the check passed: it read the base copies');
    assert.deepEqual(t.error_log, []);
    assert.equal(read(join(root, 'tests/data.txt')), 'base\n');
  });

  it('in place: an attempt that changes a protected file fails charged and is rolled back, its work kept', async () => {
    const root = harness({
      files: TESTS,
      tasks: [{ id: 'task-001', validate: VALIDATE, maxAttempts: 1 }],
      sessionConfig: { protected_paths: ['tests'] },
    });
    const base = git(root, 'rev-parse', 'HEAD');
    const r = await run(root, WEAKENS_FIRST, ['--in-place']);
    assert.equal(r.code, 1, show(r, root));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed');
    assert.equal(t.attempts, 1);
    assert.deepEqual(t.error_log, ['[TEST_FAIL] changed protected files: tests/check.sh (protected_paths)']);
    assert.equal(git(root, 'rev-parse', 'HEAD'), base, 'rolled back to the base');
    assert.equal(read(join(root, 'tests/check.sh')), TESTS['tests/check.sh']);
    assert.equal(git(root, 'show', 'refs/launchpad/attempts/task-001/1:tests/check.sh'), 'exit 0');
  });

  it("protected_paths that is not a list of paths: the task file's error names the file and the field; nothing runs", async () => {
    const root = harness({ tasks: [{ id: 'task-001', protected_paths: 'tests' }] });
    const status = await launchpad(root, ['status']);
    assert.equal(status.code, 2, show(status));
    assert.match(status.stderr, /harness-tasks\.json: tasks\[0\]\.protected_paths: expected array/);

    const outside = harness({ tasks: [{ id: 'task-001' }], sessionConfig: { protected_paths: ['../tests'] } });
    const r = await run(outside, 'false');
    assert.equal(r.code, 2, show(r, outside));
    assert.match(
      r.stdout + r.stderr,
      /harness-tasks\.json: session_config\.protected_paths\[0\]: a path relative to the state root, without "\.\."/,
    );
    assert.equal(linesOf(outside, 'DISPATCH').length, 0);
  });
});
