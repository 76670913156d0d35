// `launchpad start`: the six steps on real repositories, the failures of step 1, the warnings of
// step 3, the health check of step 5, and the focus question of step 6 (asked, --yes, or neither).
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Journal } from '../../../src/core/journal/journal';
import { JournalPaths } from '../../../src/core/journal/journalPaths';
import { StatePaths } from '../../../src/core/statePaths';
import { assertUnchanged, snapshot } from '../cli/util';
import { readTasks } from '../helpers/harness';
import { cli, git, journalEntries, onTerminal, project, read, tempDir, writeFiles } from './support';

async function addEntries(root: string): Promise<void> {
  const journal = new Journal(new JournalPaths(new StatePaths(root)));
  const t = (iso: string) => new Date(iso);
  await journal.append(
    { type: 'session_started', spec: 'harness', focus_task: 'task-001', branch: 'feature-x' },
    t('2025-12-07T09:00:00Z'),
  );
  await journal.append(
    { type: 'task_blocked', spec: 'auth', task_id: '1.2', issue: 'Missing JWKS endpoint configuration' },
    t('2025-12-07T10:00:00Z'),
  );
  await journal.append({ type: 'task_blocked', spec: 'auth', task_id: '2.1', issue: 'Redis is not running' }, t('2025-12-07T10:30:00Z'));
  await journal.append(
    { type: 'debug_resolved', issue: 'Missing JWKS endpoint configuration', resolution: 'added JWKS_URI' },
    t('2025-12-07T11:00:00Z'),
  );
  await journal.append(
    { type: 'task_completed', spec: 'auth', task_id: '1.2', task_description: 'Implement JWT validation', duration_minutes: 15 },
    t('2025-12-07T12:00:00Z'),
  );
  await journal.append(
    { type: 'session_ended', summary: 'JWT done', next_steps: ['Task 1.3 - Session management', 'start Redis'] },
    t('2025-12-07T13:00:00Z'),
  );
}

function harnessProject(): string {
  const root = project({ 'README.md': '# app\n', 'src/app.js': 'module.exports = 1;\n' });
  for (const title of ['Add rate limiting', 'Document it', 'Ship it'])
    cli(['add', title, '--validate', 'true', '--files', `src/${title.split(' ')[0]}/`], { cwd: root });
  return root;
}

describe('launchpad start', function () {
  this.timeout(60_000);

  it('step 1 fails outside a project, or in a project that is not a git repository: exit 2, nothing created', () => {
    const empty = tempDir();
    const r = cli(['start', '--yes'], { cwd: empty }, 2);
    assert.match(r.stderr, /not in a project: no harness-tasks\.json or \.agent-os\/ in .* or any parent directory/);
    assert.deepEqual(readdirSync(empty), []);

    const notGit = tempDir();
    writeFileSync(join(notGit, 'harness-tasks.json'), JSON.stringify({ version: 3, tasks: [] }));
    const before = snapshot(notGit);
    const r2 = cli(['start', '--yes'], { cwd: notGit }, 2);
    assert.match(r2.stderr, /not a git repository: /);
    assertUnchanged(before, notGit, 'start outside git');

    assert.match(
      cli(['start', '--dir', empty], { cwd: notGit }, 2).stderr,
      /not a project: .* holds neither harness-tasks\.json nor \.agent-os\//,
    );
  });

  it('prints the six steps: context from the journal, git warnings (dirty tree, other branch), tasks, health; asks nothing without a terminal', async () => {
    const root = harnessProject();
    await addEntries(root);
    writeFiles(root, { 'harness-init.sh': '#!/bin/sh\necho "checking node"\necho "Environment health check complete"\n' });
    writeFiles(root, { 'src/app.js': 'module.exports = 2;\n' }); // a tracked file changed
    const entriesBefore = journalEntries(root).length;

    const r = cli(['start'], { cwd: root });
    const out = r.stdout;
    assert.match(out, /^1\. Directory verification: OK\n {3}project root: .* \(harness-tasks\.json, \.agent-os\)\n {3}git repository: /m);
    assert.match(out, /^2\. Progress context \(last 6 journal entries\): WARNING$/m);
    assert.match(out, /accomplished: Resolved: Missing JWKS endpoint configuration → added JWKS_URI/);
    assert.match(out, /accomplished: Task 1\.2 - Implement JWT validation \(auth, ~15 min\)/);
    assert.match(out, /warning: unresolved blocker: Task 2\.1 \(auth\): Redis is not running/);
    assert.ok(!/unresolved blocker: Task 1\.2/.test(out), 'a blocker resolved later is not listed');
    assert.match(out, /suggested next step: Task 1\.3 - Session management\n {3}suggested next step: start Redis/);
    assert.match(out, /^3\. Git state \(branch main\): WARNING$/m);
    assert.match(out, /warning: uncommitted changes to tracked files: src\/app\.js/);
    assert.match(out, /warning: on branch main, but the last session started on feature-x/);
    assert.match(out, /^ {5} M src\/app\.js$/m);
    assert.match(
      out,
      new RegExp(`^ {5}${git(root, 'log', '--oneline', '-1', '--no-decorate').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'),
    );
    assert.match(out, /^4\. Task status: OK\n {3}harness-tasks\.json: 0\/3 completed \(0%\)\n {3}next: task-001: Add rate limiting$/m);
    assert.match(out, /^5\. Environment health: PASS\n {3}harness-init\.sh \(\d+\.\d s\)\n {3}Environment health check complete$/m);
    assert.match(
      out,
      /^6\. Focus: Ready to work on Task task-001: Add rate limiting\?\n {3}\(not confirmed: nothing logged; answer on a terminal, or pass --yes\)$/m,
    );
    assert.equal(journalEntries(root).length, entriesBefore, 'nothing logged without a confirmation');

    // --yes confirms: session_started with the branch, the focus and the health.
    const yes = cli(['start', '--yes'], { cwd: root });
    assert.match(
      yes.stdout,
      /6\. Focus: Ready to work on Task task-001: Add rate limiting\? yes \(--yes\)\nsession_started logged \(entry-/,
    );
    const started = journalEntries(root).at(-1)!;
    assert.equal(started.type, 'session_started');
    assert.equal(started.spec, 'harness');
    assert.equal(started.focus_task, 'task-001');
    assert.equal(started.branch, 'main');
    assert.match(String(started.environment), /^harness-init\.sh: PASS \(Environment health check complete\)$/);
    assert.match(String(started.context), /0\/3 tasks completed \(0%\)/);
    assert.match(
      read(root, '.agent-os/progress/progress.md'),
      /### \d\d:\d\d - Session Started\n- \*\*Spec\*\*: harness\n- \*\*Focus\*\*: Task task-001\n- \*\*Branch\*\*: main/,
    );
    // The branch warning now compares with this session's branch.
    assert.ok(!/last session started on/.test(cli(['start'], { cwd: root }).stdout));
  });

  it('asks on a terminal: "y" logs session_started, "n" logs nothing', async () => {
    const root = harnessProject();
    const no = await onTerminal(root, ['start'], ['n']);
    assert.equal(no.code, 0, no.err);
    assert.deepEqual(no.asked, ['6. Focus: Ready to work on Task task-001: Add rate limiting? (y/n) ']);
    assert.match(no.out, /Not started: nothing logged\./);
    assert.deepEqual(journalEntries(root), []);
    const yes = await onTerminal(root, ['start'], ['y']);
    assert.equal(yes.code, 0, yes.err);
    assert.deepEqual(
      journalEntries(root).map((e) => e.type),
      ['session_started'],
    );
  });

  it('--json prints the whole summary as one JSON object', () => {
    const root = harnessProject();
    const r = cli(['start', '--json', '--yes', '--task', 'task-002'], { cwd: root });
    const s = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(s), ['root', 'spec', 'directory', 'progress', 'git', 'tasks', 'health', 'choices', 'focus', 'notes']);
    // What a session can work on, the next first (Start Session offers them to pick from).
    assert.deepEqual(s.choices, [
      { id: 'task-001', title: 'Add rate limiting' },
      { id: 'task-002', title: 'Document it' },
      { id: 'task-003', title: 'Ship it' },
    ]);
    assert.equal(s.directory.status, 'ok');
    assert.equal(s.git.branch, 'main');
    assert.equal(s.git.recent_commits.length, 1);
    assert.deepEqual([s.tasks.harness.total, s.tasks.harness.completed, s.tasks.harness.percent], [3, 0, 0]);
    assert.deepEqual(s.health, {
      status: 'skipped',
      source: null,
      detail: 'no harness-init.sh and no session_config.health_check',
      duration_ms: null,
    });
    assert.deepEqual(
      [s.focus.tasks, s.focus.question, s.focus.confirmed],
      [['task-002'], 'Ready to work on Task task-002: Document it?', true],
    );
    assert.equal(s.focus.entry, journalEntries(root).at(-1)!.id);
  });

  it('step 5: a failing health check exits 1 without asking or logging; session_config.health_check runs when there is no harness-init.sh; the time limit ends it', () => {
    const root = harnessProject();
    const config = (c: Record<string, unknown>) => {
      const file = JSON.parse(read(root, 'harness-tasks.json'));
      file.session_config = { ...file.session_config, ...c };
      writeFileSync(join(root, 'harness-tasks.json'), JSON.stringify(file, null, 2));
    };
    config({ health_check: 'echo "port 3000 in use" >&2; exit 3' });
    const fail = cli(['start', '--yes'], { cwd: root }, 1);
    assert.match(
      fail.stdout,
      /^5\. Environment health: FAIL\n {3}session_config\.health_check: echo .*\n {3}warning: exited with 3: port 3000 in use$/m,
    );
    assert.match(fail.stdout, /6\. Focus: not asked: the environment health check failed/);
    assert.deepEqual(journalEntries(root), []);

    config({ health_check: 'echo ok-from-config' });
    assert.match(
      cli(['start'], { cwd: root }).stdout,
      /^5\. Environment health: PASS\n {3}session_config\.health_check: echo ok-from-config \(\d+\.\d s\)\n {3}ok-from-config$/m,
    );

    // harness-init.sh wins over session_config.health_check, and its time limit ends it.
    config({ health_check_timeout_seconds: 1 });
    writeFiles(root, { 'harness-init.sh': 'sleep 30 & wait\n' });
    const slow = cli(['start', '--yes'], { cwd: root }, 1);
    assert.match(slow.stdout, /^5\. Environment health: FAIL\n {3}harness-init\.sh \(.*\)\n {3}warning: timed out after 1s$/m);
  });

  it("--spec: step 4 reads the spec (its tasks.json synced), and confirming puts the focused parent's subtasks in harness-tasks.json", () => {
    const root = harnessProject();
    writeFiles(root, {
      '.agent-os/tasks/auth/tasks.md':
        '# Tasks\n\n- [ ] 1. Endpoints\n  - [x] 1.1 Login\n  - [ ] 1.2 JWT\n    - validate: test -f jwt.txt\n- [ ] 2. Sessions\n  - [ ] 2.1 Store\n',
    });
    const r = cli(['start', '--spec', 'auth', '--yes'], { cwd: root });
    assert.match(
      r.stdout,
      /^4\. Task status: OK\n {3}spec auth: 1\/3 completed \(33%\)\n {3}next: 1\.2: JWT\n {3}current parent task: 1: Endpoints\n {3}harness-tasks\.json: 0\/3 completed/m,
    );
    assert.match(r.stdout, /6\. Focus: Ready to work on Task 1: Endpoints \(next subtask 1\.2: JWT\)\? yes/);
    assert.match(r.stdout, /spec auth: 2 subtask\(s\) in harness-tasks\.json/);
    const tasks = readTasks(root).tasks;
    const byId = (id: string) => tasks.find((t) => t.id === id)!;
    assert.equal(byId('spec-auth-1.1').status, 'completed');
    assert.equal(byId('spec-auth-1.2').status, 'pending');
    assert.equal(byId('spec-auth-1.2').validation?.command, 'test -f jwt.txt');
    assert.ok(!tasks.some((t) => t.id === 'spec-auth-2.1'), 'parent 2 is not in this session');
    const started = journalEntries(root).at(-1)!;
    assert.deepEqual([started.type, started.spec, started.focus_task], ['session_started', 'auth', '1']);
    assert.equal(JSON.parse(read(root, '.agent-os/tasks/auth/tasks.json')).summary.completed, 1);
    // --json offers the spec's unfinished parent tasks to pick from.
    assert.deepEqual(JSON.parse(cli(['start', '--spec', 'auth', '--json'], { cwd: root }).stdout).choices, [
      { id: '1', title: 'Endpoints' },
      { id: '2', title: 'Sessions' },
    ]);
    // Without --spec, the available specs are named.
    assert.match(cli(['start'], { cwd: root }).stdout, /spec task lists in \.agent-os\/tasks\/: auth \(pass --spec NAME to include one\)/);
  });
});
