// launchpad status [--json]: the documented counts and tasks, blocked chains, cycles and unknown
// dependencies, worktrees, the active run; read-only.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { git, makeRepo } from '../helpers/gitRepo';
import { tempDir } from '../helpers/tmp';
import { assertUnchanged, cli, holdLock, liveHolder, PROGRESS, rawTask, snapshot, stateRoot } from './util';

interface JsonTask {
  id: string;
  title: string;
  status: string;
  state: string;
  attempts: number;
  max_attempts: number;
  blocked_reason: string | null;
}

function statusJson(cwd: string): Record<string, unknown> & { tasks: JsonTask[] } {
  const r = cli(['status', '--json'], { cwd });
  assert.equal(r.stderr, '');
  return JSON.parse(r.stdout) as never;
}

/** Every state a task can show, and every reason it can be blocked. */
const MIXED = {
  version: 3,
  session_count: 4,
  last_session: '2025-07-01T10:12:03Z',
  tasks: [
    rawTask('done', { status: 'completed', attempts: 1 }),
    rawTask('ready', { depends_on: ['done'] }),
    rawTask('running', { status: 'in_progress', attempts: 1, agent_id: 'agent_abc123' }),
    rawTask('waiting', { depends_on: ['ready'] }),
    rawTask('retryable', { status: 'failed', attempts: 1, error_log: ['[TEST_FAIL] expected 429 got 200'] }),
    rawTask('exhausted', { status: 'failed', attempts: 3, max_attempts: 3, error_log: ['[AGENT_FAIL] gave up'] }),
    rawTask('chain-1', { depends_on: ['exhausted'] }),
    rawTask('chain-2', { depends_on: ['chain-1'] }),
    rawTask('chain-3', { depends_on: ['chain-2', 'done'] }),
    rawTask('cyc-a', { depends_on: ['cyc-b'] }),
    rawTask('cyc-b', { depends_on: ['cyc-a'] }),
    rawTask('self', { depends_on: ['self'] }),
    rawTask('orphan', { depends_on: ['done', 'ghost'] }),
    rawTask('no-validation', { validation: undefined }),
  ],
};

describe('launchpad status', () => {
  it('--json: the documented counts and per-task fields', () => {
    const dir = stateRoot(MIXED);
    const s = statusJson(dir);
    assert.equal(s.tasks_total, 14);
    assert.equal(s.completed, 1);
    // No run holds the lock: the in_progress task is interrupted.
    assert.equal(s.in_progress, 1);
    assert.equal(s.running, 0);
    assert.equal(s.interrupted, 1);
    // Failed for good (exhausted), and failed to be retried (retryable): one name each.
    assert.equal(s.failed, 1);
    assert.equal(s.retrying, 1);
    // cyc-a, cyc-b, self, orphan, chain-1..3
    assert.equal(s.blocked, 7);
    // ready, waiting, no-validation
    assert.equal(s.pending, 3);
    assert.deepEqual([s.ready, s.waiting, s.needs_validation], [1, 1, 1]);
    const parts = ['completed', 'in_progress', 'retrying', 'failed', 'blocked', 'pending'] as const;
    assert.equal(
      parts.reduce((n, k) => n + Number(s[k]), 0),
      s.tasks_total,
    );
    assert.equal(s.session_count, 4);
    assert.equal(s.last_session, '2025-07-01T10:12:03Z');
    assert.equal(s.attempts_total, 6);
    assert.deepEqual(
      s.tasks.map((t) => t.id),
      MIXED.tasks.map((t) => t.id),
    );
    for (const t of s.tasks) {
      for (const key of ['id', 'title', 'status', 'attempts', 'max_attempts']) assert.ok(key in t, `${t.id} lacks ${key}`);
      assert.equal(t.title, `title of ${t.id}`);
    }
    const byId = new Map(s.tasks.map((t) => [t.id, t]));
    assert.deepEqual(
      {
        status: byId.get('exhausted')!.status,
        attempts: byId.get('exhausted')!.attempts,
        max_attempts: byId.get('exhausted')!.max_attempts,
      },
      { status: 'failed', attempts: 3, max_attempts: 3 },
    );
    assert.equal(byId.get('ready')!.max_attempts, 3, 'the default max_attempts');
    assert.equal(byId.get('ready')!.attempts, 0, 'the default attempts');
    const states = Object.fromEntries(s.tasks.map((t) => [t.id, t.state]));
    assert.deepEqual(states, {
      done: 'completed',
      ready: 'ready',
      running: 'interrupted',
      waiting: 'waiting',
      retryable: 'retryable',
      exhausted: 'failed',
      'chain-1': 'blocked',
      'chain-2': 'blocked',
      'chain-3': 'blocked',
      'cyc-a': 'blocked',
      'cyc-b': 'blocked',
      self: 'blocked',
      orphan: 'blocked',
      'no-validation': 'needs_validation',
    });
    // Blocked is computed, never stored: the task's status stays what the file says.
    assert.equal(byId.get('chain-3')!.status, 'pending');
    assert.equal(byId.get('cyc-a')!.blocked_reason, '[DEPENDENCY] Circular dependency detected: cyc-a -> cyc-b -> cyc-a');
    assert.equal(byId.get('cyc-b')!.blocked_reason, '[DEPENDENCY] Circular dependency detected: cyc-b -> cyc-a -> cyc-b');
    assert.equal(byId.get('self')!.blocked_reason, '[DEPENDENCY] Circular dependency detected: self -> self');
    assert.equal(byId.get('orphan')!.blocked_reason, '[DEPENDENCY] Unknown dependency ghost');
    assert.equal(byId.get('chain-1')!.blocked_reason, '[DEPENDENCY] Blocked by failed exhausted');
    assert.equal(byId.get('chain-2')!.blocked_reason, '[DEPENDENCY] Blocked by failed chain-1');
    assert.equal(byId.get('chain-3')!.blocked_reason, '[DEPENDENCY] Blocked by failed chain-2');
    assert.equal(byId.get('ready')!.blocked_reason, null);
  });

  it('text: a summary line and one line per task with why it is blocked, failed or waiting', () => {
    const dir = stateRoot(MIXED);
    const r = cli(['status'], { cwd: dir });
    const out = r.stdout;
    assert.ok(out.startsWith(`Launchpad: ${dir}\n`), out);
    assert.match(
      out,
      /^Tasks: 1\/14 completed · 1 interrupted · 1 to retry · 1 failed · 7 blocked · 1 without validation · 1 ready · 1 waiting \(attempts 6\)$/m,
    );
    assert.match(out, /^Sessions: 4 \(last 2025-07-01T10:12:03Z\)$/m);
    const expected = [
      '[completed] done: title of done (1/3)',
      '[pending] ready: title of ready (0/3) - ready',
      '[in_progress] running: title of running (1/3) [agent=agent_abc123] - interrupted: the next run resumes it',
      '[pending] waiting: title of waiting (0/3) - waiting on dependencies',
      '[failed] retryable: title of retryable (1/3) - will be retried: [TEST_FAIL] expected 429 got 200',
      '[failed] exhausted: title of exhausted (3/3) - attempts exhausted: [AGENT_FAIL] gave up',
      '[blocked] chain-1: title of chain-1 (0/3): [DEPENDENCY] Blocked by failed exhausted',
      '[blocked] chain-2: title of chain-2 (0/3): [DEPENDENCY] Blocked by failed chain-1',
      '[blocked] chain-3: title of chain-3 (0/3): [DEPENDENCY] Blocked by failed chain-2',
      '[blocked] cyc-a: title of cyc-a (0/3): [DEPENDENCY] Circular dependency detected: cyc-a -> cyc-b -> cyc-a',
      '[blocked] cyc-b: title of cyc-b (0/3): [DEPENDENCY] Circular dependency detected: cyc-b -> cyc-a -> cyc-b',
      '[blocked] self: title of self (0/3): [DEPENDENCY] Circular dependency detected: self -> self',
      '[blocked] orphan: title of orphan (0/3): [DEPENDENCY] Unknown dependency ghost',
      '[pending] no-validation: title of no-validation (0/3) - needs a validation command',
    ];
    const taskLines = out.split('\n').filter((l) => l.startsWith('['));
    assert.deepEqual(taskLines, expected);
    assert.match(out, /\nWorktrees:\n {2}\(none\)\n/);
    assert.match(out, /\nRecent log:\n {2}\(empty\)\n$/);
  });

  it('is read-only: no lock, no .bak, no marking of blocked tasks, nothing in .git', () => {
    const repo = makeRepo();
    stateRoot(MIXED, repo);
    writeFileSync(join(repo, PROGRESS), '[2025-07-01T10:00:00Z] [SESSION-1] INIT here\n');
    const before = snapshot(repo);
    cli(['status'], { cwd: repo });
    cli(['status', '--json'], { cwd: repo });
    assertUnchanged(before, repo, 'status');
  });

  it('an empty harness: zero counts, a hint to add a task', () => {
    const dir = tempDir();
    cli(['init'], { cwd: dir });
    const s = statusJson(dir);
    assert.deepEqual(
      [s.tasks_total, s.completed, s.failed, s.pending, s.in_progress, s.blocked, s.session_count, s.last_session, s.tasks],
      [0, 0, 0, 0, 0, 0, 0, null, []],
    );
    assert.match(cli(['status'], { cwd: dir }).stdout, /\(no tasks yet: launchpad add "Title" --validate "CMD"\)/);
  });

  it('shows the last five log lines', () => {
    const dir = stateRoot({ version: 3, tasks: [] });
    const lines = Array.from({ length: 8 }, (_, i) => `[2025-07-01T10:00:0${i}Z] [SESSION-1] WARN line ${i}`);
    writeFileSync(join(dir, PROGRESS), lines.join('\n') + '\n');
    assert.deepEqual(statusJson(dir).recent_log, lines.slice(3));
    assert.ok(
      cli(['status'], { cwd: dir }).stdout.endsWith(
        `Recent log:\n${lines
          .slice(3)
          .map((l) => `  ${l}\n`)
          .join('')}`,
      ),
    );
  });

  it('lists the worktrees of harness branches (and only those)', () => {
    const repo = makeRepo();
    cli(['init'], { cwd: repo });
    cli(['add', 'one', '--validate', 'true'], { cwd: repo });
    const wtRoot = tempDir('launchpad-wt-');
    const harnessWt = join(wtRoot, 'harness-task-001');
    git(repo, 'worktree', 'add', '-q', '-b', 'harness-task-001', harnessWt);
    git(repo, 'worktree', 'add', '-q', '-b', 'feature/other', join(wtRoot, 'other'));
    const s = statusJson(repo);
    const real = git(harnessWt, 'rev-parse', '--show-toplevel');
    assert.deepEqual(s.worktrees, [{ path: real, branch: 'harness-task-001', task: 'task-001' }]);
    const text = cli(['status'], { cwd: repo }).stdout;
    assert.ok(text.includes(`Worktrees:\n  harness-task-001  ${real}\n`), text);
    assert.doesNotMatch(text, /feature\/other/);
  });

  it('names the live run holding the session lock, and ignores a stale one', () => {
    const dir = stateRoot({ version: 3, tasks: [] });
    const lockDir = holdLock(dir, liveHolder('launchpad run'), 'session.lock');
    const s = statusJson(dir);
    assert.deepEqual((({ pid, command }) => ({ pid, command }))(s.active_session as { pid: number; command: string }), {
      pid: process.pid,
      command: 'launchpad run',
    });
    assert.match(
      cli(['status'], { cwd: dir }).stdout,
      new RegExp(`^Active run: launchpad run \\(pid=${process.pid}, since 2025-07-01T10:00:10Z\\)$`, 'm'),
    );
    writeFileSync(join(lockDir, 'holder.json'), JSON.stringify({ ...liveHolder(), identity: 'reused' }));
    assert.equal(statusJson(dir).active_session, null);
    assert.doesNotMatch(cli(['status'], { cwd: dir }).stdout, /Active run/);
  });

  it('a task in progress is running while a run holds the lock or a worker its lease, else interrupted', () => {
    const dir = stateRoot({
      version: 3,
      tasks: [
        rawTask('leased', { status: 'in_progress', attempts: 1, claimed_by: 'w1', lease_expires_at: '2999-01-01T00:00:00Z' }),
        rawTask('lapsed', { status: 'in_progress', attempts: 1, claimed_by: 'w2', lease_expires_at: '2000-01-01T00:00:00Z' }),
        rawTask('left', { status: 'in_progress', attempts: 1 }),
      ],
    });
    const hints = () =>
      cli(['status'], { cwd: dir })
        .stdout.split('\n')
        .filter((l) => l.startsWith('[in_progress]'));
    assert.deepEqual(hints(), [
      '[in_progress] leased: title of leased (1/3) - running',
      '[in_progress] lapsed: title of lapsed (1/3) - interrupted: the next run resumes it',
      '[in_progress] left: title of left (1/3) - interrupted: the next run resumes it',
    ]);
    holdLock(dir, liveHolder('launchpad run'), 'session.lock');
    assert.deepEqual(
      hints().map((l) => l.replace(/^.* - /, '')),
      ['running', 'running', 'running'],
    );
  });

  it('from a subdirectory, with --dir and with HARNESS_STATE_ROOT', () => {
    const dir = stateRoot({ version: 3, tasks: [rawTask('only')] });
    const sub = join(dir, 'a', 'b');
    mkdirSync(sub, { recursive: true });
    const elsewhere = tempDir();
    for (const [cwd, args, env] of [
      [sub, ['status', '--json'], {}],
      [elsewhere, ['--dir', dir, 'status', '--json'], {}],
      [elsewhere, ['status', '--json', '--dir', dir], {}],
      [elsewhere, ['status', '--json'], { HARNESS_STATE_ROOT: dir }],
    ] as const) {
      const r = cli([...args], { cwd, env });
      const s = JSON.parse(r.stdout);
      assert.equal(s.root, dir);
      assert.deepEqual(
        s.tasks.map((t: JsonTask) => t.id),
        ['only'],
      );
    }
  });
});
