// The scenario of the integration gate's tests, in every way of running: two tasks that each pass
// their own validation and break the base together. task-a renames lib.js's add to sum; task-b,
// started from the same base (task-a waits until it has started), waits until task-a is merged,
// then adds a caller of add. The check requires every caller. Its end is the same everywhere:
// task-b reverted once with a new commit, redone from a prompt that shows task-a's change.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { git } from '../helpers/gitRepo';
import { taskById } from '../helpers/harness';
import { tempDir } from '../helpers/tmp';
import { agentCmd, byTask, linesOf, shq } from './support';

/** A base where every caller of lib.js works: the check requires each of them. */
export const FILES = {
  'lib.js': 'exports.add = (a, b) => a + b;\n',
  'main.js': 'const { add } = require("./lib");\nif (add(1, 2) !== 3) throw new Error("main is broken");\n',
  'all.js':
    'require("./main");\nconst fs = require("fs");\nif (fs.existsSync("callers")) for (const f of fs.readdirSync("callers")) require("./callers/" + f);\n',
};

export const TASKS = [
  { id: 'task-a', files: ['lib.js', 'main.js'], validate: 'node main.js' },
  { id: 'task-b', files: ['callers/'], validate: 'node callers/task-b.js' },
];

/** The agents of the scenario, as one command line; `root` is the repository task-a is merged in. */
export function scenarioAgents(root: string): string {
  const gate = tempDir('launchpad-gates-');
  return byTask(
    {
      'task-a': `GATE_DIR=${shq(gate)} ${agentCmd('gate.sh')} ${agentCmd('renames-add.sh')}`,
      'task-b': `: > ${shq(join(gate, 'task-a'))} && WAIT_FOR_MERGE=task-a MAIN_REPO=${shq(root)} ${agentCmd('calls-add.sh')}`,
    },
    agentCmd('writes-done.sh'),
  );
}

export function integrationState(root: string) {
  return JSON.parse(readFileSync(join(root, '.launchpad', 'integration.json'), 'utf8')) as {
    status: string;
    last_green: string | null;
    flaky: Array<{ commit: string }>;
    reverted: Array<{ task: string; merge: string; revert: string; collided_with: string[] }>;
  };
}

export function subjects(root: string): string[] {
  return git(root, 'log', '--format=%s', 'main').split('\n');
}

/** The scenario's end, the same with every=1 and every=2. */
export function assertRevertedAndRedone(root: string, check = 'node all.js'): void {
  const a = taskById(root, 'task-a');
  const b = taskById(root, 'task-b');
  assert.equal(a.status, 'completed');
  assert.equal(b.status, 'completed');
  assert.equal(a.attempts, 1);
  assert.equal(b.attempts, 2, 'the revert is charged: its attempt stays counted');
  assert.ok(
    (b.error_log[0] ?? '').startsWith(
      `[INTEGRATION] reverted: the base failed its integration check after it merged together with task-a: ${check} exited with 1: TypeError: add is not a function`,
    ),
    b.error_log[0],
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
