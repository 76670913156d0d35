// Trust on first use: a fresh clone whose files carry commands (each touches a marker outside the
// repository) runs none of them before the person approves them, asks again about a command that
// changed, and never asks about a command the person typed. These tests take away the approval
// every other unit test has (helpers/approval.ts) and keep approvals in a folder of their own.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { runCli } from '../helpers/cli';
import { git, makeRepo } from '../helpers/gitRepo';
import { agent } from '../helpers/harness';
import { runInPty } from '../helpers/pty';
import { tempDir } from '../helpers/tmp';

interface Clone {
  root: string;
  /** Where the repository's commands leave their markers. */
  marks: string;
  /** The person's configuration folder (XDG_CONFIG_HOME): their approvals. */
  config: string;
  env: NodeJS.ProcessEnv;
}

/** The markers left so far, sorted. */
function marked(c: Clone): string[] {
  return readdirSync(c.marks).sort();
}

function touch(c: { marks: string }, name: string): string {
  return `touch ${join(c.marks, name)}`;
}

/**
 * A repository whose committed files carry a command of every kind, cloned afresh. task-001
 * passes (the file's agent does it); task-002's validation fails, so its clean-up runs.
 */
function freshClone(): Clone {
  const marks = tempDir('launchpad-marks-');
  const m = { marks };
  const file = {
    version: 3,
    session_config: {
      agent: `${touch(m, 'agent')} && sh ${agent('writes-done.sh')}`,
      worktree_setup: touch(m, 'worktree_setup'),
      integration_check: { command: touch(m, 'integration_check') },
      retry_backoff_seconds: 0,
    },
    tasks: [
      task('task-001', `${touch(m, 'validation')} && test -f src/task-001/done.txt`),
      {
        ...task('task-002', `${touch(m, 'validation-2')}; false # \x1b[8m hidden`),
        max_attempts: 1,
        on_failure: { cleanup: touch(m, 'cleanup') },
      },
    ],
  };
  const origin = makeRepo({
    'README.md': '# a project\n',
    'harness-tasks.json': JSON.stringify(file, null, 2) + '\n',
    'harness-progress.txt': '',
    'harness-init.sh': `#!/bin/sh\n${touch(m, 'harness-init')}\n`,
    // A hook the agent tool itself would run in the task's worktree.
    '.claude/settings.json': JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: touch(m, 'claude-hook') }] }] } }),
  });
  const root = join(tempDir('launchpad-clone-'), 'project');
  git(origin, 'clone', '-q', origin, root);
  git(root, 'config', 'user.name', 'Launchpad Test');
  git(root, 'config', 'user.email', 'test@launchpad.invalid');
  const config = tempDir('launchpad-config-');
  return { root, marks, config, env: { LAUNCHPAD_TRUST: '', XDG_CONFIG_HOME: config } };
}

function task(id: string, validate: string): Record<string, unknown> {
  return {
    id,
    title: `Task ${id}`,
    status: 'pending',
    priority: 'P1',
    depends_on: [],
    attempts: 0,
    max_attempts: 3,
    context: `Do ${id}`,
    files_hint: [`src/${id}/`],
    validation: { command: validate, timeout_seconds: 60 },
    error_log: [],
  };
}

function launchpad(c: Clone, args: string[], env: NodeJS.ProcessEnv = {}) {
  return runCli(args, { cwd: c.root, env: { ...c.env, ...env }, timeoutMs: 120_000 });
}

function editTaskFile(c: Clone, edit: (file: { session_config: Record<string, unknown>; tasks: Array<Record<string, unknown>> }) => void) {
  const path = join(c.root, 'harness-tasks.json');
  const file = JSON.parse(readFileSync(path, 'utf8'));
  edit(file);
  writeFileSync(path, JSON.stringify(file, null, 2) + '\n');
}

describe('trust: the repository commands run only once approved', function () {
  this.timeout(180_000);

  it('on a fresh clone, run and start run nothing without a terminal: exit 2, each command listed, and the line that approves them', () => {
    const c = freshClone();
    const run = launchpad(c, ['run']);
    assert.equal(run.code, 2, run.stderr);
    for (const what of [
      'session_config.agent',
      'session_config.worktree_setup',
      'session_config.integration_check.command',
      touch(c, 'integration_check'),
      'tasks[task-001].validation.command',
      'tasks[task-002].validation.command',
      'tasks[task-002].on_failure.cleanup',
      'harness-init.sh',
      '.claude/settings.json  hooks.Stop[0].hooks[0].command',
      touch(c, 'claude-hook'),
      touch(c, 'worktree_setup'),
      `| ${touch(c, 'harness-init')}`,
    ])
      assert.ok(run.stderr.includes(what), `${what} listed:\n${run.stderr}`);
    assert.match(run.stderr, /Nothing was run/);
    assert.match(run.stderr, /^ {2}(launchpad|node \S+) trust$/m, 'the line that approves them');
    assert.match(run.stderr, /run --trust, or LAUNCHPAD_TRUST=1/);
    assert.ok(run.stderr.includes('\\x1b[8m hidden') && !run.stderr.includes('\x1b'), 'a control character is shown, never sent');
    assert.deepEqual(marked(c), [], 'nothing ran');
    assert.equal(git(c.root, 'branch', '--list', 'harness-*'), '', 'no worktree, no branch');
    assert.ok(!existsSync(join(c.root, '.launchpad')), 'no lock, no run folder');

    const start = launchpad(c, ['start', '--yes']);
    assert.equal(start.code, 2, start.stderr);
    assert.match(start.stderr, /"launchpad start" would run/);
    assert.ok(start.stderr.includes(`| ${touch(c, 'harness-init')}`), start.stderr);
    assert.ok(!start.stderr.includes('tasks[task-001]'), 'start names only what it runs');
    assert.deepEqual(marked(c), [], 'nothing ran');
    assert.ok(!existsSync(join(c.config, 'launchpad', 'trust.json')), 'a refusal records nothing');
  });

  it('launchpad trust approves them: run and start then run them; a changed, added or removed command is named and asked about again', () => {
    const c = freshClone();
    const approve = launchpad(c, ['trust']);
    assert.equal(approve.code, 0, approve.stderr);
    assert.ok(approve.stdout.includes(touch(c, 'agent')), approve.stdout);
    assert.match(approve.stdout, /8 commands approved/);
    assert.ok(existsSync(join(c.config, 'launchpad', 'trust.json')), "recorded in the person's configuration folder");
    assert.deepEqual(marked(c), [], 'approving runs nothing');

    const run = launchpad(c, ['run']);
    assert.equal(run.code, 1, `task-002 fails for good\n${run.stderr}`);
    assert.deepEqual(marked(c), ['agent', 'cleanup', 'harness-init', 'integration_check', 'validation', 'validation-2', 'worktree_setup']);
    const start = launchpad(c, ['start', '--yes']);
    assert.equal(start.code, 0, start.stderr);

    // A person pulls a change: worktree_setup changed, task-003 added, task-002 gone.
    editTaskFile(c, (f) => {
      f.session_config.worktree_setup = touch(c, 'worktree_setup-changed');
      f.tasks = [f.tasks[0]!, task('task-003', touch(c, 'validation-3'))];
    });
    const again = launchpad(c, ['run']);
    assert.equal(again.code, 2, again.stderr);
    assert.match(again.stderr, /changed {4}harness-tasks\.json {2}session_config\.worktree_setup/);
    assert.ok(again.stderr.includes(`was: ${touch(c, 'worktree_setup')}\n`), again.stderr);
    assert.ok(again.stderr.includes(`now: ${touch(c, 'worktree_setup-changed')}\n`), again.stderr);
    assert.match(again.stderr, /new {8}harness-tasks\.json {2}tasks\[task-003\]\.validation\.command/);
    assert.match(again.stderr, /removed {4}harness-tasks\.json {2}tasks\[task-002\]\.validation\.command/);
    assert.ok(!again.stderr.includes('tasks[task-001].validation.command'), 'what is still approved is not asked about');
    assert.ok(!marked(c).some((m) => m.endsWith('-changed') || m === 'validation-3'), 'nothing new ran');

    // harness-init.sh changed (committed, as a pull brings it): start asks again.
    writeFileSync(join(c.root, 'harness-init.sh'), `#!/bin/sh\n${touch(c, 'harness-init-changed')}\n`);
    git(c.root, 'commit', '-q', '-m', 'harness-init.sh changed', 'harness-init.sh');
    const restart = launchpad(c, ['start', '--yes']);
    assert.equal(restart.code, 2, restart.stderr);
    assert.match(restart.stderr, /changed {4}harness-init\.sh/);
    assert.ok(!marked(c).includes('harness-init-changed'));

    assert.equal(launchpad(c, ['trust']).code, 0);
    const approved = launchpad(c, ['run']);
    assert.equal(approved.code, 0, approved.stderr);
    assert.ok(
      ['worktree_setup-changed', 'validation-3', 'harness-init-changed'].every((m) => marked(c).includes(m)),
      marked(c).join(' '),
    );
  });

  it('a command the person typed needs no approval: run --agent, LAUNCHPAD_AGENT, add --validate, config worktree_setup', () => {
    const c = freshClone();
    assert.equal(launchpad(c, ['trust']).code, 0);
    // The task file's agent changes after the approval; the person's own agent runs instead.
    editTaskFile(c, (f) => {
      f.session_config.agent = touch(c, 'agent-changed');
      f.tasks = [f.tasks[0]!];
    });
    const typed = launchpad(c, ['run', '--agent', agent('writes-done.sh')]);
    assert.equal(typed.code, 0, typed.stderr);
    assert.ok(!marked(c).includes('agent-changed') && !marked(c).includes('agent'), "the task file's agent never ran");

    const added = launchpad(c, ['add', 'Another', '--validate', touch(c, 'typed-validation'), '--files', 'src/task-002/']);
    assert.equal(added.code, 0, added.stderr);
    assert.equal(launchpad(c, ['config', 'worktree_setup', touch(c, 'typed-setup')]).code, 0);
    const fromEnv = launchpad(c, ['run'], { LAUNCHPAD_AGENT: agent('writes-done.sh') });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    assert.ok(marked(c).includes('typed-validation') && marked(c).includes('typed-setup'), marked(c).join(' '));

    const fileAgent = launchpad(c, ['run']);
    assert.equal(fileAgent.code, 2, fileAgent.stderr);
    assert.match(fileAgent.stderr, /changed {4}harness-tasks\.json {2}session_config\.agent\n/);
    assert.ok(!fileAgent.stderr.includes('typed-'), `what the person typed is not asked about:\n${fileAgent.stderr}`);
  });

  it('--trust and LAUNCHPAD_TRUST=1 approve one run and record nothing; the agents do not inherit the approval', () => {
    const c = freshClone();
    editTaskFile(c, (f) => {
      f.session_config.agent = `env > ${join(c.marks, 'agent-env')} && sh ${agent('writes-done.sh')}`;
      f.tasks = [f.tasks[0]!];
    });
    const once = launchpad(c, ['run', '--trust']);
    assert.equal(once.code, 0, once.stderr);
    assert.ok(marked(c).includes('validation'));
    assert.ok(!existsSync(join(c.config, 'launchpad', 'trust.json')), 'nothing recorded');
    editTaskFile(c, (f) => void (f.tasks = [task('task-002', touch(c, 'from-env'))]));
    const fromEnv = launchpad(c, ['run'], { LAUNCHPAD_TRUST: '1' });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    assert.ok(marked(c).includes('from-env'));
    assert.doesNotMatch(readFileSync(join(c.marks, 'agent-env'), 'utf8'), /^LAUNCHPAD_TRUST=/m, 'the agent does not inherit it');
    assert.equal(launchpad(c, ['run']).code, 2, 'the next run asks again');
  });

  it('trust --show lists what is approved and what is not, --json too; --revoke forgets it; a broken approvals file is named', () => {
    const c = freshClone();
    const before = JSON.parse(launchpad(c, ['trust', '--show', '--json']).stdout);
    assert.deepEqual(before.approved, []);
    assert.equal(before.pending.length, 8);
    assert.ok(before.pending.every((p: { change: string }) => p.change === 'new'));
    assert.equal(launchpad(c, ['trust']).code, 0);
    const show = launchpad(c, ['trust', '--show']);
    assert.equal(show.code, 0, show.stderr);
    assert.ok(show.stdout.includes(touch(c, 'worktree_setup')), show.stdout);
    assert.match(show.stdout, /every command of its files is approved/);
    const after = JSON.parse(launchpad(c, ['trust', '--show', '--json']).stdout);
    assert.equal(after.approved.length, 8);
    assert.deepEqual(after.pending, []);
    assert.match(after.approved[0].sha256, /^[0-9a-f]{64}$/);

    const revoke = launchpad(c, ['trust', '--revoke']);
    assert.equal(revoke.code, 0, revoke.stderr);
    assert.match(revoke.stdout, /forgot 8 approved commands/);
    assert.equal(launchpad(c, ['run']).code, 2, 'asked again');
    assert.deepEqual(marked(c), []);

    const file = join(c.config, 'launchpad', 'trust.json');
    writeFileSync(file, '{\n  "version": 1,\n  "repositories": {\n    "x": { "commands": [ { "kind": "nope" } ] }\n  }\n}\n');
    const broken = launchpad(c, ['run']);
    assert.equal(broken.code, 2, broken.stderr);
    assert.ok(broken.stderr.includes(`${file}:4: repositories.x.commands[0].kind`), broken.stderr);
    assert.deepEqual(marked(c), []);
  });

  it('read-only commands run nothing of the repository, approved or not', () => {
    const c = freshClone();
    for (const args of [
      ['status'],
      ['status', '--json'],
      ['log'],
      ['agents', '--json'],
      ['pool'],
      ['config'],
      ['journal'],
      ['trust', '--show'],
      ['restore-backup'],
      ['stop'],
      ['prune-attempts', '--dry-run'],
    ]) {
      launchpad(c, args);
      assert.deepEqual(marked(c), [], `launchpad ${args.join(' ')} ran nothing`);
    }
  });

  it("milestones run runs none of state.md's commands before approval; launchpad trust at the top approves them", () => {
    const marks = tempDir('launchpad-marks-');
    const m = { marks };
    const origin = makeRepo();
    const init = runCli(
      [
        'milestones',
        'init',
        'Site',
        '--verify',
        touch(m, 'verify'),
        '--planner',
        touch(m, 'planner'),
        '--worker',
        touch(m, 'worker'),
        '--reviewer',
        touch(m, 'reviewer'),
      ],
      { cwd: origin, env: { LAUNCHPAD_TRUST: '1' } },
    );
    assert.equal(init.code, 0, init.stderr);
    git(origin, 'add', '-A');
    git(origin, 'commit', '-q', '-m', 'long run');
    const root = join(tempDir('launchpad-clone-'), 'project');
    git(origin, 'clone', '-q', origin, root);
    const c: Clone = { root, marks, config: tempDir('launchpad-config-'), env: {} };
    c.env = { LAUNCHPAD_TRUST: '', XDG_CONFIG_HOME: c.config };

    const refused = launchpad(c, ['milestones', 'run']);
    assert.equal(refused.code, 2, refused.stderr);
    for (const what of ['Verification Strategy: Command', 'Agents: Planner', 'Agents: Worker', 'Agents: Reviewer', touch(m, 'verify')])
      assert.ok(refused.stderr.includes(what), `${what}:\n${refused.stderr}`);
    const given = launchpad(c, ['milestones', 'run', '--planner', 'true']);
    assert.ok(!given.stderr.includes('Agents: Planner'), 'a planner given on the command line is not asked about');

    assert.equal(launchpad(c, ['trust']).code, 0);
    const approved = launchpad(c, ['milestones', 'run']);
    assert.doesNotMatch(approved.stderr, /not approved/);
    assert.match(approved.stderr, /no milestone files/, "past the approval, to the long run's own checks");
    assert.deepEqual(readdirSync(marks), []);
  });

  describe('on a terminal', function () {
    before(function () {
      if (spawnSync('python3', ['-c', 'import pty']).status !== 0) this.skip();
    });

    it('run shows the commands and asks: no runs nothing, yes runs them and remembers; start asks for its health check', () => {
      const c = freshClone();
      const env = { ...c.env, LAUNCHPAD_TRUST: undefined };
      const no = runInPty(['run'], { cwd: c.root, env, steps: [{ expect: 'remember the approval .*\\? \\[y/N\\] ', send: 'n\r' }] });
      assert.equal(no.stepsLeft, 0, no.output);
      assert.equal(no.code, 2, no.output);
      assert.ok(no.output.includes(touch(c, 'worktree_setup')), no.output);
      assert.match(no.output, /not approved: nothing was run/);
      assert.deepEqual(marked(c), []);

      const startFirst = runInPty(['start'], {
        cwd: c.root,
        env,
        steps: [
          { expect: 'remember the approval .*\\? \\[y/N\\] ', send: 'y\r' },
          { expect: '\\(y/n\\) ', send: 'n\r' },
        ],
      });
      assert.equal(startFirst.stepsLeft, 0, startFirst.output);
      assert.equal(startFirst.code, 0, startFirst.output);
      assert.deepEqual(marked(c), ['harness-init']);

      const yes = runInPty(['run'], { cwd: c.root, env, steps: [{ expect: 'remember the approval .*\\? \\[y/N\\] ', send: 'y\r' }] });
      assert.equal(yes.stepsLeft, 0, yes.output);
      assert.equal(yes.code, 1, yes.output);
      assert.ok(!yes.output.split('[y/N]')[0]!.includes('harness-init.sh\r\n'), 'what start had approved is not asked again');
      assert.deepEqual(marked(c), [
        'agent',
        'cleanup',
        'harness-init',
        'integration_check',
        'validation',
        'validation-2',
        'worktree_setup',
      ]);

      const third = runInPty(['start', '--yes'], { cwd: c.root, env });
      assert.equal(third.code, 0, third.output);
      assert.doesNotMatch(third.output, /\[y\/N\]/, 'nothing asked once approved');
    });
  });
});
