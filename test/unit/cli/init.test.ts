// launchpad init: the state files, .git/info/exclude, --gitignore; idempotent, never clobbers.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { GITIGNORE_ENTRIES } from '../../../src/core/init';
import { git, makeRepo } from '../helpers/gitRepo';
import { tempDir } from '../helpers/tmp';
import { assertUnchanged, cli, PROGRESS, progressEntries, readTasks, snapshot, TASKS } from './util';

const count = (text: string, line: string) => text.split(/\r?\n/).filter((l) => l === line).length;

describe('launchpad init', () => {
  it('creates the three state files in a git repository, with a v3 task file and one INIT line', () => {
    const repo = makeRepo();
    const r = cli(['init'], { cwd: repo });
    assert.match(r.stdout, /created {2}harness-tasks\.json/);
    assert.match(r.stdout, /created {2}harness-progress\.txt/);
    assert.match(r.stdout, /created {2}\.harness-active/);

    const file = readTasks(repo);
    assert.equal(file.version, 3);
    assert.deepEqual(file.tasks, []);
    assert.equal(file.session_count, 0);
    assert.deepEqual(file.session_config, {
      max_tasks_per_session: 20,
      max_sessions: 50,
      max_parallel_agents: 3,
      agent_timeout_seconds: 3600,
      cleanup_timeout_seconds: 300,
      health_check_timeout_seconds: 600,
    });
    assert.match(String(file.created), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const entries = progressEntries(repo);
    assert.equal(entries.length, 1);
    assert.equal(entries[0]!.type, 'INIT');
    assert.equal(entries[0]!.taskId, undefined);
    assert.ok(entries[0]!.message.includes(repo), entries[0]!.message);
    assert.ok(existsSync(join(repo, '.harness-active')));
    // Not interactive and no --gitignore: no tracked file changes, no harness-init.sh.
    assert.ok(!existsSync(join(repo, '.gitignore')));
    assert.ok(!existsSync(join(repo, 'harness-init.sh')));
    // The artefact folder is excluded locally, so git never sees it.
    assert.equal(count(readFileSync(join(repo, '.git/info/exclude'), 'utf8'), '/.launchpad/'), 1);
    mkdirSync(join(repo, '.launchpad', 'runs'), { recursive: true });
    writeFileSync(join(repo, '.launchpad', 'runs', 'x.txt'), 'transcript');
    assert.doesNotMatch(git(repo, 'status', '--porcelain', '--untracked-files=all'), /\.launchpad/);
  });

  it('is idempotent: a second init keeps every file byte for byte and adds the exclude entry once', () => {
    const repo = makeRepo();
    cli(['init'], { cwd: repo });
    cli(['add', 'first', '--validate', 'true'], { cwd: repo });
    const before = snapshot(repo);
    const r = cli(['init'], { cwd: repo });
    assert.match(r.stdout, /kept {5}harness-tasks\.json \(already there\)/);
    assert.match(r.stdout, /kept {5}harness-progress\.txt \(already there\)/);
    assert.doesNotMatch(r.stdout, /created/);
    assertUnchanged(before, repo, 'second init');
  });

  it('never clobbers existing files, even a hand-written or broken task file', () => {
    const repo = makeRepo();
    const tasks = '{ "tasks": [ {"id": "mine", "title": "hand-written", "status": "pending", "x-note": 1} ] }';
    const broken = '{ "tasks": [ ';
    const log = 'free text a person wrote\n[2025-07-01T10:00:00Z] [SESSION-1] INIT earlier\n';
    const script = '#!/bin/sh\nexit 0\n';
    for (const content of [tasks, broken]) {
      writeFileSync(join(repo, TASKS), content);
      writeFileSync(join(repo, PROGRESS), log);
      writeFileSync(join(repo, '.harness-active'), 'marker');
      writeFileSync(join(repo, 'harness-init.sh'), script);
      cli(['init', '--init-script'], { cwd: repo });
      assert.equal(readFileSync(join(repo, TASKS), 'utf8'), content);
      assert.equal(readFileSync(join(repo, PROGRESS), 'utf8'), log);
      assert.equal(readFileSync(join(repo, '.harness-active'), 'utf8'), 'marker');
      assert.equal(readFileSync(join(repo, 'harness-init.sh'), 'utf8'), script);
      assert.ok(!existsSync(join(repo, `${TASKS}.bak`)));
      assert.ok(!existsSync(join(repo, `${TASKS}.tmp`)));
    }
  });

  it('creates a missing progress log beside an existing task file without writing into the task file', () => {
    const dir = tempDir();
    const tasks = '{"version":2,"tasks":[]}';
    writeFileSync(join(dir, TASKS), tasks);
    const r = cli(['init'], { cwd: dir });
    assert.match(r.stdout, /created {2}harness-progress\.txt/);
    assert.equal(readFileSync(join(dir, TASKS), 'utf8'), tasks);
    assert.ok(existsSync(join(dir, PROGRESS)));
  });

  it('--init-script writes an executable health check once', () => {
    const dir = tempDir();
    cli(['init', '--init-script'], { cwd: dir });
    const script = join(dir, 'harness-init.sh');
    assert.match(readFileSync(script, 'utf8'), /^#!\/bin\/sh\n/);
    assert.ok(statSync(script).mode & 0o100, 'not executable');
  });

  it('says what it did not ask without a terminal, and suggests the test command of the project it finds', () => {
    const python = makeRepo({ 'pyproject.toml': '[project]\nname = "calc"\n' });
    const r = cli(['init'], { cwd: python });
    assert.match(
      r.stdout,
      /\n {2}\.gitignore: not changed \(no terminal to ask\); --gitignore adds the state files, --no-gitignore says no\n/,
    );
    assert.match(r.stdout, /\nNext: .* add "Title" --validate 'python3 -m pytest' --files src\/x\/\n$/);
    assert.doesNotMatch(cli(['init', '--no-gitignore'], { cwd: makeRepo() }).stdout, /not changed/, 'said no: nothing to tell');
    assert.match(cli(['init'], { cwd: makeRepo({ 'package.json': '{}\n' }) }).stdout, /--validate 'npm test'/);
    assert.match(cli(['init'], { cwd: makeRepo({ 'go.mod': 'module x\n' }) }).stdout, /--validate 'go test \.\/\.\.\.'/);
  });

  it('--gitignore appends the state entries once, after existing content without a final newline', () => {
    const repo = makeRepo({ '.gitignore': 'node_modules/\n*.log' });
    const r = cli(['init', '--gitignore'], { cwd: repo });
    assert.match(r.stdout, /\.gitignore: added harness-tasks\.json/);
    cli(['init', '--gitignore'], { cwd: repo });
    const text = readFileSync(join(repo, '.gitignore'), 'utf8');
    assert.ok(text.startsWith('node_modules/\n*.log\n'), text);
    assert.ok(GITIGNORE_ENTRIES.length >= 6);
    for (const entry of GITIGNORE_ENTRIES) assert.equal(count(text, entry), 1, `${entry} in:\n${text}`);
    assert.ok(text.endsWith('\n'));
    // The state files are now ignored by git.
    assert.equal(git(repo, 'status', '--porcelain', '--untracked-files=all'), 'M .gitignore');
  });

  it('--gitignore adds only the entries that are missing', () => {
    const repo = makeRepo({ '.gitignore': 'harness-progress.txt\n.launchpad/\n' });
    const r = cli(['init', '--gitignore'], { cwd: repo });
    assert.doesNotMatch(r.stdout, /added.*harness-progress\.txt/);
    const text = readFileSync(join(repo, '.gitignore'), 'utf8');
    for (const entry of GITIGNORE_ENTRIES) assert.equal(count(text, entry), 1, entry);
  });

  it('--json: what was created, kept and added to .gitignore, as one object', () => {
    const repo = makeRepo({ '.gitignore': 'harness-progress.txt\n' });
    const first = JSON.parse(cli(['init', '--gitignore', '--json'], { cwd: repo }).stdout) as Record<string, unknown>;
    assert.deepEqual(first, {
      root: repo,
      created: ['harness-tasks.json', 'harness-progress.txt', '.harness-active'],
      existing: [],
      ignored: GITIGNORE_ENTRIES.filter((e) => e !== 'harness-progress.txt'),
    });
    const again = JSON.parse(cli(['init', '--no-gitignore', '--json'], { cwd: repo }).stdout) as Record<string, unknown>;
    assert.deepEqual(again, {
      root: repo,
      created: [],
      existing: ['harness-tasks.json', 'harness-progress.txt'],
      ignored: [],
    });
  });

  it('--no-gitignore leaves .gitignore alone', () => {
    const repo = makeRepo({ '.gitignore': 'dist/\n' });
    cli(['init', '--no-gitignore'], { cwd: repo });
    assert.equal(readFileSync(join(repo, '.gitignore'), 'utf8'), 'dist/\n');
  });

  it('in a subdirectory of a repository: the state root is the subdirectory, excluded by its path from the top', () => {
    const repo = makeRepo();
    const sub = join(repo, 'packages', 'app');
    mkdirSync(sub, { recursive: true });
    cli(['init'], { cwd: sub });
    assert.ok(existsSync(join(sub, TASKS)));
    assert.ok(!existsSync(join(repo, TASKS)));
    assert.equal(count(readFileSync(join(repo, '.git/info/exclude'), 'utf8'), '/packages/app/.launchpad/'), 1);
  });

  it('outside git: creates the files, no .git appears', () => {
    const dir = tempDir();
    cli(['init'], { cwd: dir });
    assert.ok(existsSync(join(dir, TASKS)));
    assert.ok(!existsSync(join(dir, '.git')));
  });

  it('below an existing harness: keeps the one found upward instead of creating a nested one', () => {
    const root = tempDir();
    cli(['init'], { cwd: root });
    const sub = join(root, 'a', 'b');
    mkdirSync(sub, { recursive: true });
    const r = cli(['init'], { cwd: sub });
    assert.ok(r.stdout.includes(`Launchpad state root: ${root}\n`), r.stdout);
    assert.ok(!existsSync(join(sub, TASKS)));
  });

  it('--dir (before or after the command) and HARNESS_STATE_ROOT choose where, creating missing folders', () => {
    const cwd = tempDir();
    const a = join(tempDir(), 'new', 'root-a');
    const b = join(tempDir(), 'root-b');
    const c = join(tempDir(), 'root-c');
    cli(['--dir', a, 'init'], { cwd });
    cli(['init', '--dir', b], { cwd });
    cli(['init'], { cwd, env: { HARNESS_STATE_ROOT: c } });
    for (const d of [a, b, c]) assert.equal(readTasks(d).version, 3, d);
    assert.ok(!existsSync(join(cwd, TASKS)));
  });

  it('outside a git repository: the files are made, and a note says at once that run needs a repository', () => {
    const dir = tempDir();
    const r = cli(['init'], { cwd: dir });
    assert.match(r.stdout, /created {2}harness-tasks\.json/);
    assert.match(
      r.stderr,
      /^note: .* is not inside a git repository; "launchpad run" needs one with a commit:\n {2}git init && git add -A && git commit -m "initial commit"\n$/,
    );
    const inRepo = cli(['init'], { cwd: makeRepo() });
    assert.equal(inRepo.stderr, '');
    const empty = tempDir();
    git(empty, 'init', '-q');
    assert.match(cli(['init'], { cwd: empty }).stderr, /no commit yet; "launchpad run" needs one/);
  });

  it('its "Next:" command works as printed', () => {
    const repo = makeRepo();
    const next = /^Next: (.*)$/m.exec(cli(['init'], { cwd: repo }).stdout)![1]!;
    const r = spawnSync('sh', ['-c', next], { cwd: repo, encoding: 'utf8', env: { ...process.env, HARNESS_STATE_ROOT: '' } });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, 'task-001\n');
  });
});
