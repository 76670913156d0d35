// The integration gate on the base branch: session_config.integration_check after merges. Two
// tasks that each pass their own validation break the base together (task-a renames add to sum,
// task-b adds a caller of add): the gate finds the merge that broke it, reverts it with a new
// commit, requeues it with the collision in its prompt, and its next attempt fixes it. A red
// result that passes on a re-run is flaky, nothing reverted; a base red before the run stops it
// before its first merge.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { assertRevertedAndRedone, FILES, integrationState, scenarioAgents, subjects, TASKS } from './integrationScenario';
import { agentCmd, byTask, git, harness, launchpad, linesOf, run, show, startRun, taskById, tempDir } from './support';

describe('controller: the integration gate', function () {
  this.timeout(120_000);

  it('every=1: the merge that breaks the base is reverted with a new commit, requeued with the collision, redone and merged', async () => {
    const root = harness({
      files: FILES,
      tasks: TASKS,
      sessionConfig: { integration_check: { command: 'node all.js' } },
      commitState: false,
    });
    const r = await run(root, scenarioAgents(root));
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
    const r = await run(root, scenarioAgents(root));
    assert.equal(r.code, 0, show(r, root));
    assertRevertedAndRedone(root);
    const steps = linesOf(root, 'VALIDATE').filter((l) => /bisect step/.test(l.message));
    assert.equal(steps.length, 1, steps.map((l) => l.raw).join('\n'));
    assert.match(steps[0]!.message, /^bisect step 1\/2: commit=[0-9a-f]{7} \(merge of task-a\) result=PASS$/);
  });

  it('a bisect step that fails once and then passes is flaky, not the culprit: the bisect goes on to the merge that broke the base', async () => {
    const dir = tempDir('launchpad-flaky-step-');
    const marker = join(dir, 'failed-once');
    // At task-a's merge (the bisect's one step) the check fails its first time only.
    writeFileSync(
      join(dir, 'check.sh'),
      `if git log -1 --format=%s | grep -q '^Merge \\[task-a\\]' && [ ! -e ${marker} ]; then : > ${marker}; echo "Error: flaky"; exit 1; fi\nexec node all.js\n`,
    );
    const check = `sh ${join(dir, 'check.sh')}`;
    const root = harness({ files: FILES, tasks: TASKS, sessionConfig: { integration_check: { command: check, every: 2 } } });
    const r = await run(root, scenarioAgents(root));
    assert.equal(r.code, 0, show(r, root));
    assert.ok(existsSync(marker), 'the step never failed');
    assertRevertedAndRedone(root, check);
    const mergeA = git(root, 'log', '--format=%H', '--grep', '^Merge \\[task-a\\]', 'main').trim();
    assert.deepEqual(
      integrationState(root).flaky.map((f) => f.commit),
      [mergeA],
    );
  });

  it('a dependent of the culprit still running when it is reverted is given back at its merge, not charged, and merges after it', async () => {
    const root = harness({
      files: FILES,
      tasks: [...TASKS, { id: 'task-c', dependsOn: ['task-b'] }],
      sessionConfig: { integration_check: { command: 'node all.js' } },
    });
    const r = await run(root, scenarioAgents(root));
    assert.equal(r.code, 0, show(r, root));
    const given = linesOf(root, 'WARN', 'task-c').filter((l) => /^not merged:/.test(l.message));
    assert.equal(given.length, 1, show(r, root));
    assert.match(
      given[0]!.message,
      /^not merged: task-b, which it depends on, was reverted after this attempt started; requeued, not charged/,
    );
    const c = taskById(root, 'task-c');
    assert.equal(c.status, 'completed');
    assert.equal(c.attempts, 1, 'given back: not charged');
    assert.deepEqual(c.error_log, []);
    assert.equal(taskById(root, 'task-b').attempts, 2);
    const log = subjects(root);
    assert.equal(log.filter((x) => x.startsWith('Merge [task-c]')).length, 1);
    // It merged after task-b's second merge.
    assert.ok(
      log.indexOf(log.find((x) => x.startsWith('Merge [task-c]'))!) < log.indexOf(log.find((x) => x.startsWith('Merge [task-b]'))!),
    );
  });

  it('a dependent of the culprit merged after it is reverted too, first, and requeued not charged; both are redone', async () => {
    const root = harness({
      files: FILES,
      tasks: [...TASKS, { id: 'task-c', dependsOn: ['task-b'] }],
      sessionConfig: { integration_check: { command: 'node all.js', every: 3 } },
    });
    const r = await run(root, scenarioAgents(root));
    assert.equal(r.code, 0, show(r, root));
    const reverts = linesOf(root, 'ROLLBACK').filter((l) => l.category === 'INTEGRATION');
    assert.deepEqual(
      reverts.map((l) => l.task),
      ['task-c', 'task-b'],
      'newest first',
    );
    const requeued = linesOf(root, 'WARN', 'task-c').filter((l) => /requeued, not charged$/.test(l.message));
    assert.equal(requeued.length, 1);
    assert.match(requeued[0]!.message, /^reverted with task-b, which it depends on: task-b broke the base/);
    const c = taskById(root, 'task-c');
    assert.equal(c.status, 'completed');
    assert.equal(c.attempts, 1, 'given back: not charged');
    assert.deepEqual(c.error_log, []);
    assert.equal(taskById(root, 'task-b').attempts, 2);
    const log = subjects(root);
    assert.equal(log.filter((x) => x.startsWith('Revert "Merge [task-c]')).length, 1);
    assert.equal(log.filter((x) => x.startsWith('Merge [task-c]')).length, 2);
    assert.deepEqual(
      integrationState(root).reverted.map((x) => x.task),
      ['task-c', 'task-b'],
    );
    assert.equal(integrationState(root).status, 'green');
  });

  it('a revert that conflicts is aborted and stops the run, exit 2, naming the merge to revert by hand; the next run requeues the task after it', async () => {
    const root = harness({
      files: FILES,
      tasks: [
        { id: 'task-x', files: ['callers/'], validate: 'test -f callers/task-x.js', priority: 'P0' },
        { id: 'task-y', files: ['callers/'], validate: 'grep -q task-y callers/task-x.js' },
      ],
      sessionConfig: { integration_check: { command: 'node all.js', every: 2 }, max_parallel_agents: 1 },
    });
    // task-x adds a broken caller; task-y, after it, edits that caller: reverting task-x conflicts.
    const agents = byTask(
      {
        'task-x': `mkdir -p callers && echo 'require("../lib").missing();' > callers/task-x.js && git add -A && git commit -qm x && echo RESULT:SUCCESS`,
        'task-y': `echo '// touched by task-y' >> callers/task-x.js && git commit -qam y && echo RESULT:SUCCESS`,
      },
      agentCmd('writes-done.sh'),
    );
    const r = await run(root, agents);
    assert.equal(r.code, 2, show(r, root));
    const mergeX = git(root, 'log', '--format=%H', '--grep', '^Merge \\[task-x\\]', 'main').trim();
    assert.match(
      r.stdout + r.stderr,
      new RegExp(
        `task-x's merge ${mergeX.slice(0, 7)} broke the base's integration check, and reverting it conflicts in callers/task-x.js`,
      ),
    );
    assert.ok((r.stdout + r.stderr).includes(`git revert -m 1 ${mergeX}`), show(r, root));
    assert.equal(linesOf(root, 'ROLLBACK', 'task-x').length, 1);
    assert.ok(!existsSync(join(root, '.git', 'REVERT_HEAD')), 'the revert is aborted');
    assert.equal(git(root, 'status', '--porcelain', '--untracked-files=no').trim(), '');
    assert.equal(subjects(root).filter((x) => x.startsWith('Revert')).length, 0);
    assert.deepEqual(taskById(root, 'task-x').error_log, []);

    // The person reverts it by hand, resolving the conflict; the next run requeues task-x.
    assert.notEqual(spawnSync('git', ['revert', '-m', '1', '--no-edit', mergeX], { cwd: root }).status, 0, 'it conflicts');
    git(root, 'rm', '-q', '-f', 'callers/task-x.js');
    git(root, 'commit', '-q', '--no-edit');
    assert.match(git(root, 'log', '-1', '--format=%s'), /^Revert "Merge \[task-x\]/);
    const fixed = `mkdir -p callers && echo 'require("../lib").add(1, 1);' > callers/task-x.js && git add -A && git commit -qm x && echo RESULT:SUCCESS`;
    const again = await run(root, fixed);
    assert.equal(again.code, 0, show(again, root));
    assert.equal(linesOf(root, 'RECOVERY', 'task-x').filter((l) => /action="requeued"/.test(l.message)).length, 1);
    assert.equal(taskById(root, 'task-x').status, 'completed');
  });

  it("a base still red after the revert stops the run, exit 2, with the check's output", async () => {
    const root = harness({
      files: FILES,
      tasks: [
        { id: 'task-p', files: ['callers/'], validate: 'test -f callers/task-p.js' },
        { id: 'task-q', files: ['callers/'], validate: 'test -f callers/task-q.js' },
      ],
      sessionConfig: { integration_check: { command: 'node all.js', every: 2 } },
    });
    // Each adds a broken caller of its own: reverting the first leaves the second's.
    const broken = `mkdir -p callers && echo 'require("../lib").missing();' > callers/$LAUNCHPAD_TASK_ID.js && git add -A && git commit -qm b && echo RESULT:SUCCESS`;
    const r = await run(root, broken);
    assert.equal(r.code, 2, show(r, root));
    assert.match(
      r.stdout + r.stderr,
      /the base branch main still fails its integration check after task-p's merge was reverted: node all\.js exited with 1: TypeError: .*missing is not a function/,
    );
    assert.match(r.stdout + r.stderr, /callers\/task-q\.js/, "the check's output");
    assert.equal(subjects(root).filter((x) => x.startsWith('Revert "Merge [task-p]')).length, 1);
    assert.match(taskById(root, 'task-p').error_log[0] ?? '', /^\[INTEGRATION\] reverted: /);
    assert.deepEqual(taskById(root, 'task-q').error_log, []);
    assert.equal(integrationState(root).status, 'red');
  });

  it('a task whose merge was reverted by a run that stopped before requeuing it is requeued by the next run, not charged', async () => {
    const root = harness({ tasks: [{ id: 'task-a' }], sessionConfig: { integration_check: { command: 'test -f README.md' } } });
    const first = await run(root, agentCmd('writes-done.sh'));
    assert.equal(first.code, 0, show(first, root));
    // What the gate leaves when it stops between its revert and the requeue: the revert, the state red.
    const merge = git(root, 'rev-parse', 'main').trim();
    git(root, 'revert', '-m', '1', '--no-edit', merge);
    const statePath = join(root, '.launchpad', 'integration.json');
    writeFileSync(statePath, JSON.stringify({ ...integrationState(root), status: 'red', commit: merge }));
    const second = await run(root, agentCmd('writes-done.sh'));
    assert.equal(second.code, 0, show(second, root));
    const recovery = linesOf(root, 'RECOVERY', 'task-a');
    assert.equal(recovery.length, 1, show(second, root));
    assert.match(recovery[0]!.message, /^action="requeued" reason="its merge was reverted by [0-9a-f]{7} for the integration check/);
    const a = taskById(root, 'task-a');
    assert.equal(a.status, 'completed');
    assert.equal(a.attempts, 1, 'not charged');
    assert.equal(subjects(root).filter((x) => x.startsWith('Merge [task-a]')).length, 2);
    assert.equal(git(root, 'show', 'main:src/task-a/done.txt').trim(), 'done by task-a attempt 1');
  });

  it('a state file that cannot be read is said once and taken as none: the base is checked, nothing charged', async () => {
    const root = harness({ tasks: [{ id: 'task-a' }], sessionConfig: { integration_check: { command: 'test -f README.md' } } });
    mkdirSync(join(root, '.launchpad'), { recursive: true });
    const statePath = join(root, '.launchpad', 'integration.json');
    writeFileSync(statePath, '{"version": 1, "status": "purple"}');
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 0, show(r, root));
    const warns = linesOf(root, 'WARN').filter((l) => l.message.startsWith(statePath));
    assert.equal(warns.length, 1, show(r, root));
    assert.match(warns[0]!.message, /: status: .*: taken as no state, the base is checked again$/);
    assert.deepEqual(taskById(root, 'task-a').error_log, []);
    assert.equal(integrationState(root).last_green, git(root, 'rev-parse', 'main').trim());
  });

  it('in place nothing is merged: the setting is ignored with one WARN line, and no check runs', async () => {
    const marks = tempDir('launchpad-marks-');
    const root = harness({
      tasks: [{ id: 'task-a' }],
      sessionConfig: { integration_check: { command: `touch ${join(marks, 'checked')}` } },
    });
    const r = await run(root, agentCmd('writes-done.sh'), ['--in-place']);
    assert.equal(r.code, 0, show(r, root));
    assert.deepEqual(
      linesOf(root, 'WARN').map((l) => l.message),
      ['session_config.integration_check is ignored in place: nothing is merged there'],
    );
    assert.ok(!existsSync(join(marks, 'checked')), 'the check never ran');
    assert.ok(!existsSync(join(root, '.launchpad', 'integration.json')));
  });

  it('concurrent workers: the worker holding the merge lock checks its merge and reverts the culprit; the state is shared', async () => {
    const root = harness({
      files: FILES,
      tasks: TASKS,
      sessionConfig: {
        integration_check: { command: 'node all.js' },
        concurrency_mode: 'concurrent',
        lease_seconds: 5,
        max_parallel_agents: 1,
      },
    });
    const agents = scenarioAgents(root);
    const runs = ['w1', 'w2'].map((id) => startRun(root, agents, [], { HARNESS_WORKER_ID: id }));
    const results = await Promise.all(runs.map((r) => r.done));
    for (const r of results) assert.ok(r.code === 0 || r.code === 1, show(r, root));
    assertRevertedAndRedone(root);
    // Both workers ran: task-a waited until task-b had started, each taking one at a time.
    const workersOf = new Set(linesOf(root, 'LOCK').flatMap((l) => /concurrent worker=(w\d)/.exec(l.message)?.[1] ?? []));
    assert.deepEqual([...workersOf].sort(), ['w1', 'w2']);
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
