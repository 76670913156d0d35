// The integration gate on the base branch: session_config.integration_check after merges. Two
// tasks that each pass their own validation break the base together (task-a renames add to sum,
// task-b adds a caller of add): the gate finds the merge that broke it, reverts it with a new
// commit, requeues it with the collision in its prompt, and its next attempt fixes it. A red
// result that passes on a re-run is flaky, nothing reverted; a base red before the run stops it
// before its first merge.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { agentCmd, byTask, git, harness, launchpad, linesOf, run, show, taskById, tempDir } from './support';

/** A base where every caller of lib.js works: the check requires each of them. */
const FILES = {
  'lib.js': 'exports.add = (a, b) => a + b;\n',
  'main.js': 'const { add } = require("./lib");\nif (add(1, 2) !== 3) throw new Error("main is broken");\n',
  'all.js':
    'require("./main");\nconst fs = require("fs");\nif (fs.existsSync("callers")) for (const f of fs.readdirSync("callers")) require("./callers/" + f);\n',
};

const TASKS = [
  { id: 'task-a', files: ['lib.js', 'main.js'], validate: 'node main.js' },
  { id: 'task-b', files: ['callers/'], validate: 'node callers/task-b.js' },
];

/** task-a renames; task-b, started from the same base, waits until task-a is merged, then calls add. */
const AGENTS = byTask(
  { 'task-a': agentCmd('renames-add.sh'), 'task-b': `WAIT_FOR_MERGE=task-a ${agentCmd('calls-add.sh')}` },
  agentCmd('writes-done.sh'),
);

function integrationState(root: string) {
  return JSON.parse(readFileSync(join(root, '.launchpad', 'integration.json'), 'utf8')) as {
    status: string;
    last_green: string | null;
    flaky: Array<{ commit: string }>;
    reverted: Array<{ task: string; merge: string; revert: string; collided_with: string[] }>;
  };
}

function subjects(root: string): string[] {
  return git(root, 'log', '--format=%s', 'main').split('\n');
}

/** The scenario's end, the same with every=1 and every=2. */
function assertRevertedAndRedone(root: string): void {
  const a = taskById(root, 'task-a');
  const b = taskById(root, 'task-b');
  assert.equal(a.status, 'completed');
  assert.equal(b.status, 'completed');
  assert.equal(a.attempts, 1);
  assert.equal(b.attempts, 2, 'the revert is charged: its attempt stays counted');
  assert.match(
    b.error_log[0] ?? '',
    /^\[INTEGRATION\] reverted: the base failed its integration check after it merged together with task-a: node all.js exited with 1: TypeError: add is not a function/,
  );

  const log = subjects(root);
  assert.equal(log.filter((s) => s.startsWith('Merge [task-a]')).length, 1);
  assert.equal(log.filter((s) => s.startsWith('Merge [task-b]')).length, 2);
  assert.equal(log.filter((s) => s.startsWith('Revert "Merge [task-b]')).length, 1, log.join('\n'));
  // Each task's work is on the base exactly once, and the base passes the check.
  assert.equal(readFileSync(join(root, 'lib.js'), 'utf8'), 'exports.sum = (a, b) => a + b;\n');
  assert.match(readFileSync(join(root, 'callers', 'task-b.js'), 'utf8'), /const \{ sum \} = require/);
  assert.equal(git(root, 'ls-files', 'callers').trim(), 'callers/task-b.js');
  git(root, 'status', '--porcelain');
  assert.doesNotThrow(() => git(root, 'grep', '-q', 'sum(2, 2)', 'main', '--', 'callers/task-b.js'));

  // The second attempt's prompt holds the collision: why, and what task-a changed.
  const prompt = readFileSync(join(root, '.launchpad', 'runs', 'task-b', 'attempt-2', 'prompt.md'), 'utf8');
  assert.match(prompt, /merged, then reverted: the base failed its integration check after it merged together with task-a/);
  assert.match(prompt, /TypeError: add is not a function/);
  assert.match(prompt, /What task-a changed, merged after your attempt started \(git diff [0-9a-f]{7} [0-9a-f]{7}\):/);
  assert.match(prompt, /\+exports\.sum = \(a, b\) => a \+ b;/);

  const rollbacks = linesOf(root, 'ROLLBACK', 'task-b');
  assert.equal(rollbacks.length, 1);
  assert.match(rollbacks[0]!.message, /^git revert -m 1 [0-9a-f]{7}: new commit [0-9a-f]{7} on main$/);
  const state = integrationState(root);
  assert.equal(state.status, 'green');
  assert.equal(state.last_green, git(root, 'rev-parse', 'main').trim());
  assert.deepEqual(
    state.reverted.map((r) => [r.task, r.collided_with]),
    [['task-b', ['task-a']]],
  );
  assert.equal(git(root, 'log', '-1', '--format=%s', state.reverted[0]!.revert).trim().startsWith('Revert "Merge [task-b]'), true);
  // The reverted merge's commits are kept under the task's kept refs.
  assert.ok(git(root, 'for-each-ref', '--format=%(refname)', 'refs/launchpad/attempts/task-b/').trim(), 'a kept ref of task-b');
}

describe('controller: the integration gate', function () {
  this.timeout(120_000);

  it('every=1: the merge that breaks the base is reverted with a new commit, requeued with the collision, redone and merged', async () => {
    const root = harness({
      files: FILES,
      tasks: TASKS,
      sessionConfig: { integration_check: { command: 'node all.js' } },
      commitState: false,
    });
    const r = await run(root, AGENTS);
    assert.equal(r.code, 0, show(r, root));
    assertRevertedAndRedone(root);
    // Checked after each merge: the culprit is the one merge since the last green commit, no bisect.
    assert.equal(linesOf(root, 'VALIDATE').filter((l) => /bisect step/.test(l.message)).length, 0);
    assert.match(
      r.stdout,
      /note: task-b's merge [0-9a-f]{7} was reverted by [0-9a-f]{7}: the base failed its integration check after it merged together with task-a/,
    );
  });

  it('every=2: the check after two merges bisects to the second, which is reverted and redone', async () => {
    const root = harness({
      files: FILES,
      tasks: TASKS,
      sessionConfig: { integration_check: { command: 'node all.js', every: 2 } },
    });
    const r = await run(root, AGENTS);
    assert.equal(r.code, 0, show(r, root));
    assertRevertedAndRedone(root);
    const steps = linesOf(root, 'VALIDATE').filter((l) => /bisect step/.test(l.message));
    assert.equal(steps.length, 1, steps.map((l) => l.raw).join('\n'));
    assert.match(steps[0]!.message, /^bisect step 1\/2: commit=[0-9a-f]{7} \(merge of task-a\) result=PASS$/);
  });

  it('a check that fails once then passes on the same commit is flaky: logged with the commit, nothing reverted, counted in status', async () => {
    const counter = join(tempDir('launchpad-flaky-'), 'runs');
    // The first run is the start's check; the second, after the merge, fails; its re-run passes.
    const check = `n=$(cat ${counter} 2>/dev/null || echo 0); n=$((n + 1)); echo $n > ${counter}; if [ $n -eq 2 ]; then echo "Error: flaky"; exit 1; fi`;
    const root = harness({ tasks: [{ id: 'task-a' }], sessionConfig: { integration_check: { command: check } } });
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 0, show(r, root));
    assert.equal(readFileSync(counter, 'utf8').trim(), '3');
    const merge = git(root, 'rev-parse', 'main').trim();
    const warn = linesOf(root, 'WARN').filter((l) => /flaky/.test(l.message));
    assert.equal(warn.length, 1);
    assert.equal(warn[0]!.message, `integration check flaky at commit=${merge.slice(0, 7)}: it failed, then passed on the same commit`);
    assert.equal(subjects(root).filter((s) => s.startsWith('Revert')).length, 0);
    assert.equal(taskById(root, 'task-a').status, 'completed');
    const state = integrationState(root);
    assert.deepEqual(
      state.flaky.map((f) => f.commit),
      [merge],
    );
    assert.deepEqual(state.reverted, []);
    const status = await launchpad(root, ['status', '--json']);
    const json = JSON.parse(status.stdout) as { integration?: { status: string; flaky: unknown[] } };
    assert.equal(json.integration?.status, 'green');
    assert.equal(json.integration?.flaky.length, 1);
    const text = await launchpad(root, ['status']);
    assert.match(text.stdout, /Integration check: green at [0-9a-f]{7}.*; 1 flaky/);
  });

  it('a base that fails its check before the run merges anything stops the run before its first merge: exit 2, nothing charged', async () => {
    const root = harness({
      tasks: [{ id: 'task-a' }],
      sessionConfig: { integration_check: { command: 'echo "Error: the base is broken" >&2; exit 1' } },
    });
    const head = git(root, 'rev-parse', 'main').trim();
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 2, show(r, root));
    assert.match(
      r.stdout + r.stderr,
      /fails its integration check at [0-9a-f]{7} before this run merged anything: .*Error: the base is broken/,
    );
    assert.match(r.stdout + r.stderr, /fix the base, or remove session_config\.integration_check/);
    assert.equal(git(root, 'rev-parse', 'main').trim(), head, 'nothing merged');
    const a = taskById(root, 'task-a');
    assert.deepEqual(a.error_log, []);
    assert.notEqual(a.status, 'failed');
    assert.equal(linesOf(root, 'VALIDATE').filter((l) => /result=FAIL/.test(l.message)).length, 2, 'run once more before stopping');
    assert.equal(integrationState(root).status, 'red');
    assert.ok(!existsSync(join(root, '..', `${root.split('/').pop()}.launchpad-worktrees`, '.integration')), 'its worktree is removed');
  });
});
