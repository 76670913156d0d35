// `launchpad hook session-start|stop` through the built CLI, fed the JSON the agents document on
// stdin, in a real git repository with a harness: the marker switches them, the Stop rule holds
// across a stop cycle, and nothing in the repository is touched.
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { assertUnchanged, holdLock, liveHolder, snapshot } from '../cli/util';
import { type CliResult, runCli } from '../helpers/cli';
import { git } from '../helpers/gitRepo';
import { makeHarness } from '../helpers/harness';
import { tempDir } from '../helpers/tmp';

let sessions = 0;

/** Claude Code's SessionStart input (https://code.claude.com/docs/en/hooks#sessionstart-input). */
function sessionStartInput(cwd: string, source = 'startup'): string {
  return JSON.stringify({
    session_id: `s${++sessions}`,
    transcript_path: '/tmp/t.jsonl',
    cwd,
    hook_event_name: 'SessionStart',
    source,
    model: 'claude-sonnet-4-6',
  });
}

/** Claude Code's Stop input (https://code.claude.com/docs/en/hooks#stop-input). */
function stopInput(cwd: string, session: string, stopHookActive: boolean): string {
  return JSON.stringify({
    session_id: session,
    transcript_path: '/tmp/t.jsonl',
    cwd,
    permission_mode: 'default',
    hook_event_name: 'Stop',
    stop_hook_active: stopHookActive,
    last_assistant_message: 'Done for now.',
  });
}

function hook(args: string[], input: string, cwd: string, env: NodeJS.ProcessEnv = {}): CliResult {
  return runCli(['hook', ...args], { cwd, input, env: { LAUNCHPAD_TASK_ID: '', HARNESS_WORKER_ID: '', ...env } });
}

function harness(): string {
  const root = makeHarness({
    tasks: [
      { id: 'task-001', title: 'Write the parser', validate: 'test -f src/parser.ts', context: 'A small recursive-descent parser' },
      { id: 'task-002', title: 'Document it', dependsOn: ['task-001'], validate: 'test -f docs/parser.md' },
    ],
  });
  writeFileSync(join(root, '.harness-active'), '');
  mkdirSync(join(root, 'src', 'deep'), { recursive: true });
  return root;
}

function parsed(r: CliResult): Record<string, unknown> {
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe('launchpad hook (through dist/cli.js)', function () {
  this.timeout(60_000);

  it('session-start, with the marker: the current task, the next ones and the log, as additionalContext; found from a subdirectory', () => {
    const root = harness();
    appendFileSync(join(root, 'harness-progress.txt'), '[2025-07-01T10:00:00Z] [SESSION-1] INIT Harness initialized\n');
    const out = parsed(hook(['session-start'], sessionStartInput(join(root, 'src', 'deep'), 'compact'), tempDir()));
    const specific = out.hookSpecificOutput as { hookEventName: string; additionalContext: string };
    assert.equal(specific.hookEventName, 'SessionStart');
    const text = specific.additionalContext;
    assert.match(text, new RegExp(`^Launchpad harness in ${root} \\(session compact\\)`));
    assert.match(text, /^Current task: task-001 "Write the parser" \(not started: it is the next eligible task;/m);
    assert.match(text, /^ {2}Validation: test -f src\/parser\.ts \(timeout 60 s\)$/m);
    assert.match(text, /^ {2}Context: A small recursive-descent parser$/m);
    assert.match(text, /^ {2}\[2025-07-01T10:00:00Z\] \[SESSION-1\] INIT Harness initialized$/m);
  });

  it('without the marker every hook exits 0 at once printing nothing, and touches nothing', () => {
    const root = harness();
    rmSync(join(root, '.harness-active'));
    const before = snapshot(root);
    for (const [args, input] of [
      [['session-start'], sessionStartInput(root)],
      [['stop'], stopInput(root, 'no-marker', false)],
      [
        ['stop', '--agent', 'cursor'],
        JSON.stringify({ conversation_id: 'c', workspace_roots: [root], status: 'completed', loop_count: 0 }),
      ],
    ] as const) {
      const r = hook([...args], input, root);
      assert.deepEqual([r.code, r.stdout, r.stderr], [0, '', ''], args.join(' '));
    }
    assertUnchanged(before, root, 'hooks without the marker');
  });

  it('outside any harness: nothing', () => {
    const r = hook(['stop'], stopInput(tempDir(), 'nowhere', false), tempDir());
    assert.deepEqual([r.code, r.stdout, r.stderr], [0, '', '']);
  });

  it('stop: refused while work remains; with stop_hook_active and nothing changed, allowed; after progress, refused again', () => {
    const root = harness();
    const before = snapshot(root);
    const refused = parsed(hook(['stop'], stopInput(root, 'cycle', false), root));
    assert.equal(refused.decision, 'block');
    assert.match(String(refused.reason), /Next task task-001 "Write the parser": mark it in_progress/);
    assert.match(String(refused.reason), /run its validation \(test -f src\/parser\.ts\)/);
    assert.doesNotMatch(String(refused.reason), /task-002/, 'task-002 waits for task-001: not eligible');

    const allowed = hook(['stop', '--verbose'], stopInput(root, 'cycle', true), root);
    assert.deepEqual([allowed.code, allowed.stdout], [0, '']);
    assert.match(allowed.stderr, /stop allowed: nothing changed in harness-tasks\.json or harness-progress\.txt/);
    assertUnchanged(before, root, 'the stop hook');

    // The agent claims the task and checkpoints: that is progress, so the next stop is refused.
    const tasks = join(root, 'harness-tasks.json');
    writeFileSync(tasks, readFileSync(tasks, 'utf8').replace('"status": "pending"', '"status": "in_progress"'));
    appendFileSync(join(root, 'harness-progress.txt'), '[2025-07-01T10:05:00Z] [SESSION-1] CHECKPOINT [task-001] step=1/2 "lexer"\n');
    const again = parsed(hook(['stop'], stopInput(root, 'cycle', true), root));
    assert.match(String(again.reason), /Current task task-001 "Write the parser" is in progress and not validated yet/);
    assert.equal(hook(['stop'], stopInput(root, 'cycle', true), root).stdout, '');
  });

  it('stop: allowed when nothing can run', () => {
    const root = makeHarness({
      tasks: [
        { id: 'task-001', status: 'completed', validate: 'true' },
        { id: 'task-002', validate: null },
      ],
    });
    writeFileSync(join(root, '.harness-active'), '');
    const r = hook(['stop'], stopInput(root, 'done', false), root);
    assert.deepEqual([r.code, r.stdout, r.stderr], [0, '', '']);
  });

  it('stop: allowed while a launchpad run holds the session lock; session-start says so', () => {
    const root = harness();
    holdLock(root, liveHolder('launchpad run'), 'session.lock');
    assert.equal(hook(['stop'], stopInput(root, 'with-run', false), root).stdout, '');
    const context = (parsed(hook(['session-start'], sessionStartInput(root), root)).hookSpecificOutput as { additionalContext: string })
      .additionalContext;
    assert.match(context, new RegExp(`^launchpad run \\(pid=${process.pid}\\) is working this task list now`, 'm'));
  });

  it('HARNESS_STATE_ROOT names the state root when the agent works elsewhere', () => {
    const root = harness();
    const elsewhere = tempDir();
    const r = parsed(hook(['stop'], stopInput(elsewhere, 'env', false), elsewhere, { HARNESS_STATE_ROOT: root }));
    assert.equal(r.decision, 'block');
  });

  it('inside an agent started by launchpad run (LAUNCHPAD_TASK_ID set): nothing', () => {
    const root = harness();
    const r = hook(['stop'], stopInput(root, 'worker', false), root, { LAUNCHPAD_TASK_ID: 'task-001' });
    assert.deepEqual([r.code, r.stdout, r.stderr], [0, '', '']);
  });

  it('input that is not JSON: the hook falls back to its own directory', () => {
    const root = harness();
    assert.equal(parsed(hook(['stop'], 'garbage', root)).decision, 'block');
  });

  it('Gemini CLI (AfterAgent) and Cursor (stop) get their own answers', () => {
    const root = harness();
    const gemini = parsed(
      hook(
        ['stop', '--agent', 'gemini'],
        JSON.stringify({
          session_id: 'g',
          cwd: root,
          hook_event_name: 'AfterAgent',
          timestamp: '2025-07-01T10:00:00Z',
          prompt: 'go',
          prompt_response: 'done',
          stop_hook_active: false,
        }),
        root,
      ),
    );
    assert.equal(gemini.decision, 'deny');
    assert.match(String(gemini.reason), /task-001/);
    const cursor = parsed(
      hook(
        ['stop', '--agent', 'cursor'],
        JSON.stringify({
          conversation_id: 'c',
          generation_id: 'g',
          hook_event_name: 'stop',
          workspace_roots: [root],
          status: 'completed',
          loop_count: 0,
        }),
        root,
      ),
    );
    assert.match(String(cursor.followup_message), /task-001/);
    const aborted = hook(
      ['stop', '--agent', 'cursor'],
      JSON.stringify({ conversation_id: 'c', workspace_roots: [root], status: 'aborted', loop_count: 0 }),
      root,
    );
    assert.equal(aborted.stdout, '');
    const context = parsed(
      hook(['session-start', '--agent', 'cursor'], JSON.stringify({ conversation_id: 'c', workspace_roots: [root] }), root),
    );
    assert.match(String(context.additional_context), /^Launchpad harness in /);
  });

  it('a mistyped hook exits 1, never 2 (which an agent would read as a refusal)', () => {
    const root = harness();
    for (const args of [['stop', '--agent', 'nope'], ['stopp'], ['stop', '--bogus'], []]) {
      const r = hook(args, stopInput(root, 'typo', false), root);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^launchpad: /);
    }
  });

  it('the repository stays clean: the hooks write nothing into it', () => {
    const root = harness();
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'state');
    parsed(hook(['stop'], stopInput(root, 'clean', false), root));
    hook(['stop'], stopInput(root, 'clean', true), root);
    parsed(hook(['session-start'], sessionStartInput(root), root));
    assert.equal(git(root, 'status', '--porcelain', '--ignored'), '');
  });
});
