// `launchpad run --spec`: a spec's subtasks run by the controller with scripted agents, the
// results flowing back into tasks.md (boxes ticked), tasks.json and the journal; the scope gate
// on the command line (non-interactive, --all, and both answers on a terminal).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { OVERRIDE_NOTE } from '../../../src/core/journal/scopeGate';
import { agentCmd, byTask, git, harness, run, show, taskById } from '../controller/support';
import { cli, journalEntries, onTerminal, read } from './support';

const TASKS_MD = '.agent-os/tasks/auth/tasks.md';
const TASKS_JSON = '.agent-os/tasks/auth/tasks.json';
const MD = [
  '# Spec Tasks',
  '',
  'Written by a person; Launchpad only ticks boxes.',
  '',
  '- [ ] 1. Implement authentication endpoints',
  '  - [ ] 1.1 Create login endpoint',
  '    - files: src/spec-auth-1.1/',
  '  - [ ] 1.2 Implement JWT validation',
  '    - files: src/spec-auth-1.2/',
  '',
  '- [ ] 2. Sessions',
  '  - [ ] 2.1 Add session management',
  '    - validate: test -f src/spec-auth-2.1/done.txt && test -f src/spec-auth-1.1/done.txt',
  '',
].join('\n');

/** A repository with a harness (no tasks), the spec's tasks.md committed, and a default validation command. */
function specRepo(): string {
  const root = harness({
    tasks: [],
    files: { 'README.md': '# app\n', [TASKS_MD]: MD },
    sessionConfig: { default_validation_command: 'test -f "src/$LAUNCHPAD_TASK_ID/done.txt"' },
  });
  return root;
}

const WRITES_DONE = agentCmd('writes-done.sh');

describe('run --spec', function () {
  this.timeout(180_000);

  it("runs the first unfinished parent's subtasks, ticks their boxes (one byte each), fills tasks.json and the journal, and commits its own writes", async () => {
    const root = specRepo();
    const r = await run(root, WRITES_DONE, ['--spec', 'auth']);
    assert.equal(r.code, 0, show(r, root));
    // No terminal and no --all: the scope gate kept the first parent and said so.
    assert.match(r.stdout, /⚠️ {2}Multiple Task Warning\n─+\nYou've selected 2 parent tasks for this session\./);
    assert.match(r.stdout, /Recommendation: Start with Task 1\n/);
    assert.match(r.stdout, /not asked \(no terminal\): keeping Task 1 only; pass --all to work on all 2 tasks/);
    assert.equal(taskById(root, 'spec-auth-1.1').status, 'completed');
    assert.equal(taskById(root, 'spec-auth-1.2').status, 'completed');
    assert.throws(() => taskById(root, 'spec-auth-2.1'), /no task/, "parent 2 is out of this session's scope");

    const md = read(root, TASKS_MD);
    assert.equal(md, MD.replace('- [ ] 1. Impl', '- [x] 1. Impl').replace('- [ ] 1.1', '- [x] 1.1').replace('- [ ] 1.2', '- [x] 1.2'));
    const json = JSON.parse(read(root, TASKS_JSON));
    for (const id of ['1.1', '1.2']) {
      const t = json.tasks.find((x: { id: string }) => x.id === id);
      assert.equal(t.status, 'pass', id);
      assert.equal(t.attempts, 1, id);
      assert.match(t.completed_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.equal(typeof t.duration_minutes, 'number');
    }
    assert.deepEqual(json.summary, { total_tasks: 5, completed: 3, in_progress: 0, blocked: 0, pending: 2 });

    const entries = journalEntries(root);
    assert.deepEqual(
      entries.map((e) => e.type),
      ['session_started', 'task_completed', 'task_completed', 'session_ended'],
    );
    // 1.1 and 1.2 run side by side (different files): the focus is whichever was dispatched first.
    assert.deepEqual([entries[0]!.spec, entries[0]!.branch, entries[0]!.session], ['auth', 'main', 1]);
    assert.ok(['1.1', '1.2'].includes(String(entries[0]!.focus_task)), `focus ${String(entries[0]!.focus_task)}`);
    assert.deepEqual(
      entries
        .slice(1, 3)
        .map((e) => [e.spec, e.task_id, e.task_description, e.attempts])
        .sort((a, b) => String(a[1]).localeCompare(String(b[1]))),
      [
        ['auth', '1.1', 'Create login endpoint', 1],
        ['auth', '1.2', 'Implement JWT validation', 1],
      ],
    );
    assert.equal(entries[3]!.summary, 'all 2 tasks completed');
    assert.deepEqual(entries[3]!.next_steps, ['Task 2 - Sessions (spec auth)']);

    // Launchpad's writes to the tracked tasks.md are committed: the tree is clean for the next run.
    assert.equal(git(root, 'log', '-1', '--format=%s'), 'Launchpad: progress of spec auth (session 1)');
    assert.deepEqual(git(root, 'show', '--name-only', '--format=', 'HEAD').split('\n'), [TASKS_MD]);
    assert.equal(git(root, 'status', '--porcelain', '--untracked-files=no'), '');

    // The next run works on parent 2, which waits for all of parent 1 (done).
    const r2 = await run(root, WRITES_DONE, ['--spec', 'auth']);
    assert.equal(r2.code, 0, show(r2, root));
    assert.ok(!r2.stdout.includes('Multiple Task Warning'), 'one parent left: no warning');
    assert.deepEqual(taskById(root, 'spec-auth-2.1').depends_on, ['spec-auth-1.1', 'spec-auth-1.2']);
    assert.equal(
      taskById(root, 'spec-auth-2.1').validation?.command,
      'test -f src/spec-auth-2.1/done.txt && test -f src/spec-auth-1.1/done.txt',
    );
    assert.match(read(root, TASKS_MD), /^- \[x\] 2\. Sessions\n {2}- \[x\] 2\.1 Add session management$/m);
    assert.deepEqual(JSON.parse(read(root, TASKS_JSON)).summary, { total_tasks: 5, completed: 5, in_progress: 0, blocked: 0, pending: 0 });
  });

  it('--all: logs the scope override, runs every parent in dependency order, and a failing subtask is a blocker in tasks.json and the journal', async () => {
    const root = specRepo();
    const agent = byTask({ 'spec-auth-1.1': `FAIL_REASON='cannot reach the JWKS endpoint' ${agentCmd('fails.sh')}` }, WRITES_DONE);
    const r = await run(root, agent, ['--spec', 'auth', '--all']);
    assert.equal(r.code, 1, show(r, root));
    assert.match(r.stdout, /--all: working on all 2 tasks; logged as a scope override/);
    const entries = journalEntries(root);
    const override = entries[0]!;
    assert.deepEqual(
      { type: override.type, requested_tasks: override.requested_tasks, reason: override.reason, note: override.note, spec: override.spec },
      { type: 'scope_override', requested_tasks: ['1', '2'], reason: 'user_override', note: `${OVERRIDE_NOTE} (--all)`, spec: 'auth' },
    );
    // 1.1 failed its three attempts; 2.1 (waits for all of parent 1) is blocked by it; 1.2 completed.
    const blocked = entries.filter((e) => e.type === 'task_blocked');
    assert.deepEqual(blocked.map((e) => e.task_id).sort(), ['1.1', '2.1']);
    const b11 = blocked.find((e) => e.task_id === '1.1')!;
    assert.equal(b11.issue, taskById(root, 'spec-auth-1.1').error_log.at(-1));
    assert.match(String(b11.issue), /^\[AGENT_FAIL\] .*cannot reach the JWKS endpoint/);
    assert.equal(b11.attempts, 3);
    assert.match(String(blocked.find((e) => e.task_id === '2.1')!.issue), /^\[DEPENDENCY\]/);
    assert.deepEqual(
      entries.filter((e) => e.type === 'task_completed').map((e) => e.task_id),
      ['1.2'],
    );
    assert.match(String(entries.at(-1)!.next_steps), /fix and retry spec-auth-1\.1/);

    const json = JSON.parse(read(root, TASKS_JSON));
    const t11 = json.tasks.find((x: { id: string }) => x.id === '1.1');
    assert.deepEqual([t11.status, t11.attempts, t11.completed_at], ['blocked', 3, null]);
    assert.match(t11.notes, /cannot reach the JWKS endpoint/);
    assert.equal(json.tasks.find((x: { id: string }) => x.id === '1').status, 'blocked');
    // Only 1.2's box is ticked.
    assert.equal(read(root, TASKS_MD), MD.replace('- [ ] 1.2', '- [x] 1.2'));
  });

  it('refuses an unknown spec or parent task (exit 2) before running anything', async () => {
    const root = specRepo();
    const r = await run(root, WRITES_DONE, ['--spec', 'billing']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /\.agent-os\/tasks\/billing\/tasks\.md: not found/);
    const r2 = await run(root, WRITES_DONE, ['--spec', 'auth', '--task', '7']);
    assert.equal(r2.code, 2);
    assert.match(r2.stderr, /--task: no parent task "7" in the tasks\.md of spec "auth" \(parent tasks: 1, 2\)/);
    const r3 = await run(root, WRITES_DONE, ['--spec', 'auth', '--task', '2']);
    assert.equal(r3.code, 2);
    assert.match(r3.stderr, /task 2\.1 depends on 1\.1, which is not done and not in this session's scope; include parent task 1/);
    assert.equal(readFileSync(join(root, TASKS_MD), 'utf8'), MD);
    assert.deepEqual(journalEntries(root), []);
  });
});

describe('the scope gate', function () {
  this.timeout(60_000);

  function harnessWithTasks(): string {
    const root = harness({
      tasks: [
        { id: 'task-001', title: 'Rate limiting' },
        { id: 'task-002', title: 'Docs' },
        { id: 'task-003', title: 'Release' },
      ],
    });
    return root;
  }

  it('on a terminal, "single" keeps the first task and logs no override', async () => {
    const root = harnessWithTasks();
    const r = await onTerminal(root, ['start', '--task', 'task-001,task-002,task-003'], ['1', 'y']);
    assert.equal(r.code, 0, r.err);
    assert.match(
      r.out,
      /⚠️ {2}Multiple Task Warning\n─{41}\nYou've selected 3 parent tasks for this session\.\n\nResearch suggests focusing on ONE task per session improves:\n• Completion rate\n• Code quality\n• Context retention\n\nRecommendation: Start with Task task-001\n─{41}\n/,
    );
    assert.match(
      r.asked[0]!,
      /^Continue with single task \(recommended\) or all 3 tasks\?\n {2}1\. Single task \(recommended\)\n {2}2\. All tasks \(proceed anyway\)\n/,
    );
    assert.equal(r.asked[1], '6. Focus: Ready to work on Task task-001: Rate limiting? (y/n) ');
    assert.deepEqual(
      journalEntries(root).map((e) => [e.type, e.focus_task]),
      [['session_started', 'task-001']],
    );
  });

  it('on a terminal, "all" keeps every task and logs a scope_override with the requested tasks, the reason and the note', async () => {
    const root = harnessWithTasks();
    const r = await onTerminal(root, ['start', '--task', 'task-001,task-002,task-003'], ['2', 'y']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.asked[1]!, /^6\. Focus: Ready to work on Tasks task-001, task-002, task-003: Rate limiting; Docs; Release\? \(y\/n\) $/);
    const [override, started] = journalEntries(root);
    assert.deepEqual(
      { type: override!.type, requested_tasks: override!.requested_tasks, reason: override!.reason, note: override!.note },
      { type: 'scope_override', requested_tasks: ['task-001', 'task-002', 'task-003'], reason: 'user_override', note: OVERRIDE_NOTE },
    );
    assert.deepEqual([started!.type, started!.focus_task], ['session_started', 'task-001, task-002, task-003']);
    assert.match(
      read(root, '.agent-os/progress/progress.md'),
      /### \d\d:\d\d - Scope Override\n- \*\*Requested\*\*: task-001; task-002; task-003\n- \*\*Reason\*\*: user_override\n- \*\*Note\*\*: User chose to execute multiple tasks in single session\n/,
    );
  });

  it('without a terminal keeps the first and says so; --all keeps them all and logs the override', () => {
    const root = harnessWithTasks();
    const kept = cli(['start', '--task', 'task-002,task-003', '--yes'], { cwd: root });
    assert.match(kept.stdout, /Recommendation: Start with Task task-002/);
    assert.match(kept.stdout, /not asked \(no terminal\): keeping Task task-002 only; pass --all to work on all 2 tasks/);
    assert.deepEqual(
      journalEntries(root).map((e) => [e.type, e.focus_task]),
      [['session_started', 'task-002']],
    );

    const all = cli(['start', '--task', 'task-002,task-003', '--all', '--json'], { cwd: root });
    const s = JSON.parse(all.stdout);
    assert.deepEqual([s.focus.tasks, s.focus.scope, s.focus.confirmed], [['task-002', 'task-003'], 'all-flag', false]);
    const last = journalEntries(root).at(-1)!;
    assert.deepEqual(
      [last.type, last.requested_tasks, last.note],
      ['scope_override', ['task-002', 'task-003'], `${OVERRIDE_NOTE} (--all)`],
    );
    assert.match(cli(['start', '--task', 'task-009'], { cwd: root }, 2).stderr, /--task: no task "task-009" in harness-tasks\.json/);
  });
});
