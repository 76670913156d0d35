// The hooks' pure parts on literal strings: the agents' JSON input, the Stop rule, and the
// context a fresh session is given.
import assert from 'node:assert/strict';

import { AGENT_HOOKS } from '../../../src/core/hooks/agents';
import { type HookInput, parseHookInput } from '../../../src/core/hooks/input';
import { sessionStartContext } from '../../../src/core/hooks/sessionContext';
import type { StateSnapshot } from '../../../src/core/hooks/stateView';
import { decideStop } from '../../../src/core/hooks/stopDecision';
import { parseTaskFile } from '../../../src/core/taskFile/parse';

/** Claude Code's documented Stop input (https://code.claude.com/docs/en/hooks#stop-input). */
const CLAUDE_STOP = `{
  "session_id": "abc123",
  "transcript_path": "~/.claude/projects/.../00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl",
  "cwd": "/Users/me/project",
  "permission_mode": "default",
  "hook_event_name": "Stop",
  "stop_hook_active": true,
  "last_assistant_message": "I've completed the refactoring. Here's a summary..."
}`;

const TASKS = `{
  "version": 2,
  "tasks": [
    { "id": "task-001", "title": "Implement user authentication", "status": "completed", "priority": "P0",
      "validation": { "command": "npm test -- auth" } },
    { "id": "task-002", "title": "Add rate limiting", "status": "in_progress", "priority": "P1", "attempts": 1,
      "depends_on": ["task-001"], "files_hint": ["src/middleware/"],
      "context": "Redis-backed,\\n100 req/min per IP",
      "validation": { "command": "npm test -- rate-limit", "timeout_seconds": 120 },
      "error_log": ["[TASK_EXEC] Redis connection refused"],
      "checkpoints": [
        { "step": 1, "total": 4, "description": "limiter module", "timestamp": "2025-07-01T10:03:00Z" },
        { "step": 2, "total": 4, "description": "auth routes created, tests pending", "timestamp": "2025-07-01T10:05:00Z" }
      ] },
    { "id": "task-003", "title": "Add OAuth providers", "status": "pending", "depends_on": ["task-001"],
      "validation": { "command": "npm test -- oauth" } },
    { "id": "task-004", "title": "Docs", "status": "pending", "depends_on": ["task-002"], "validation": { "command": "true" } },
    { "id": "task-005", "title": "Flaky thing", "status": "failed", "attempts": 3, "max_attempts": 3,
      "validation": { "command": "false" }, "error_log": ["[TEST_FAIL] nope"] }
  ]
}`;

const LOG = [
  '[2025-07-01T10:00:11Z] [SESSION-1] Starting [task-001] Implement user authentication (base=def5678)',
  '[2025-07-01T10:15:30Z] [SESSION-1] Completed [task-001] (commit abc1234)',
  '[2025-07-01T10:15:31Z] [SESSION-1] Starting [task-002] Add rate limiting (base=abc1234)',
  '[2025-07-01T10:20:00Z] [SESSION-1] ERROR [task-002] [TASK_EXEC] Redis connection refused',
  '[2025-07-01T10:22:00Z] [SESSION-2] CHECKPOINT [task-002] step=2/4 "auth routes created, tests pending"',
];

function snapshot(tasks: string | undefined, over: Partial<StateSnapshot> = {}): StateSnapshot {
  const parsed = tasks === undefined ? undefined : parseTaskFile(tasks);
  if (parsed && !parsed.ok) throw parsed.error;
  return {
    root: '/work/project',
    file: parsed?.ok ? parsed.file : undefined,
    fileError: tasks === undefined ? "harness-tasks.json: line 3, column 1: trailing comma before '}'" : undefined,
    recentLog: LOG,
    fingerprint: 'f1',
    run: undefined,
    workerId: undefined,
    ...over,
  };
}

const fresh: HookInput = parseHookInput('{"session_id":"s","cwd":"/work/project","hook_event_name":"Stop","stop_hook_active":false}');
const again: HookInput = { ...fresh, stopHookActive: true };

describe('hooks: the input agents send', () => {
  it("Claude Code's Stop input", () => {
    assert.deepEqual(parseHookInput(CLAUDE_STOP), {
      cwd: '/Users/me/project',
      sessionId: 'abc123',
      stopHookActive: true,
      source: undefined,
      interrupted: false,
    });
  });

  it("Claude Code's SessionStart input", () => {
    const input = parseHookInput(
      '{"session_id":"abc123","transcript_path":"/x.jsonl","cwd":"/p","hook_event_name":"SessionStart","source":"compact","model":"claude-sonnet-4-6"}',
    );
    assert.equal(input.source, 'compact');
    assert.equal(input.stopHookActive, false);
  });

  it("Cursor's stop input: conversation_id, workspace_roots, loop_count, status", () => {
    const input = parseHookInput(
      '{"conversation_id":"c1","generation_id":"g","hook_event_name":"stop","workspace_roots":["/w/a","/w/b"],"status":"completed","loop_count":2}',
    );
    assert.deepEqual(input, { cwd: '/w/a', sessionId: 'c1', stopHookActive: true, source: undefined, interrupted: false });
    assert.equal(parseHookInput('{"status":"aborted","loop_count":0}').interrupted, true);
    assert.equal(parseHookInput('{"status":"aborted","loop_count":0}').stopHookActive, false);
  });

  it('input that is not a JSON object reads as empty, never throws', () => {
    for (const text of ['', 'not json', '[1,2]', 'null', '{"cwd": 5, "stop_hook_active": "yes"}']) {
      assert.deepEqual(
        parseHookInput(text),
        { cwd: undefined, sessionId: undefined, stopHookActive: false, source: undefined, interrupted: false },
        text,
      );
    }
  });
});

describe('hooks: the Stop rule', () => {
  it('keeps the agent on an in-progress task that has not passed its validation, naming it, its command and what follows', () => {
    const out = decideStop(fresh, snapshot(TASKS), undefined);
    assert.equal(out.decision.kind, 'continue');
    const reason = out.decision.kind === 'continue' ? out.decision.reason : '';
    assert.match(reason, /Current task task-002 "Add rate limiting" is in progress and not validated yet/);
    assert.match(reason, /run its validation \(npm test -- rate-limit\)/);
    assert.match(reason, /Then task-003 "Add OAuth providers"\./);
    assert.deepEqual(out.memory, { fingerprint: 'f1' });
  });

  it('stop_hook_active and nothing changed since our last refusal: the stop is allowed and the memory cleared', () => {
    const out = decideStop(again, snapshot(TASKS), { fingerprint: 'f1' });
    assert.equal(out.decision.kind, 'allow');
    assert.match(out.decision.kind === 'allow' ? out.decision.why : '', /nothing changed/);
    assert.equal(out.memory, null);
  });

  it('stop_hook_active but the files changed since (progress was made): asked to continue again', () => {
    assert.equal(decideStop(again, snapshot(TASKS, { fingerprint: 'f2' }), { fingerprint: 'f1' }).decision.kind, 'continue');
  });

  it('stop_hook_active without a refusal of ours on record (another hook refused): asked to continue', () => {
    assert.equal(decideStop(again, snapshot(TASKS), undefined).decision.kind, 'continue');
  });

  it('a fresh stop (stop_hook_active false) is refused even when an old memory matches', () => {
    assert.equal(decideStop(fresh, snapshot(TASKS), { fingerprint: 'f1' }).decision.kind, 'continue');
  });

  it('nothing in progress but an eligible task: asked to start it', () => {
    const tasks = TASKS.replace('"status": "in_progress"', '"status": "completed"');
    const out = decideStop(fresh, snapshot(tasks), undefined);
    const reason = out.decision.kind === 'continue' ? out.decision.reason : '';
    assert.match(reason, /^Launchpad: the task list is not done/);
    assert.match(reason, /Next task task-003 "Add OAuth providers": mark it in_progress/);
    assert.match(reason, /Then task-004 "Docs"\./);
  });

  it('in progress and validated (a passing VALIDATE line since it started), with nothing else eligible: allowed', () => {
    const tasks = TASKS.replace('"status": "pending", "depends_on": ["task-001"]', '"status": "completed", "depends_on": ["task-001"]');
    const validated = [...LOG, '[2025-07-01T10:30:00Z] [SESSION-2] VALIDATE [task-002] command="npm test -- rate-limit" result=PASS'];
    assert.equal(decideStop(fresh, snapshot(tasks, { recentLog: validated }), undefined).decision.kind, 'allow');
    const failed = [...LOG, '[2025-07-01T10:30:00Z] [SESSION-2] VALIDATE [task-002] command="npm test -- rate-limit" result=FAIL'];
    assert.equal(decideStop(fresh, snapshot(tasks, { recentLog: failed }), undefined).decision.kind, 'continue');
    const restarted = [...validated, '[2025-07-01T10:31:00Z] [SESSION-3] Starting [task-002] Add rate limiting (base=abc1234)'];
    assert.equal(decideStop(fresh, snapshot(tasks, { recentLog: restarted }), undefined).decision.kind, 'continue');
  });

  it('nothing can run (all completed, failed for good, or blocked): allowed', () => {
    const tasks = `{"tasks":[
      {"id":"a","title":"A","status":"completed","validation":{"command":"true"}},
      {"id":"b","title":"B","status":"failed","attempts":3,"max_attempts":3,"validation":{"command":"false"}},
      {"id":"c","title":"C","status":"pending","depends_on":["b"],"validation":{"command":"true"}},
      {"id":"d","title":"D","status":"pending"}]}`;
    const out = decideStop(fresh, snapshot(tasks), { fingerprint: 'f1' });
    assert.deepEqual(out, { decision: { kind: 'allow', why: 'no task is in progress and none can start' }, memory: null });
  });

  it('an interrupted turn is never refused', () => {
    assert.equal(decideStop({ ...fresh, interrupted: true }, snapshot(TASKS), undefined).decision.kind, 'allow');
  });

  it('while a launchpad run holds the session lock the agent may stop: the controller works the list', () => {
    const out = decideStop(fresh, snapshot(TASKS, { run: { pid: 4242, command: 'launchpad run' } }), undefined);
    assert.deepEqual(out.decision, { kind: 'allow', why: 'launchpad run (pid=4242) is working the task list' });
  });

  it('HARNESS_WORKER_ID: the task this worker claimed is the current one', () => {
    const tasks = TASKS.replace(
      '"status": "pending", "depends_on": ["task-001"]',
      '"status": "in_progress", "claimed_by": "w2", "depends_on": ["task-001"]',
    );
    const out = decideStop(fresh, snapshot(tasks, { workerId: 'w2' }), undefined);
    assert.match(out.decision.kind === 'continue' ? out.decision.reason : '', /Current task task-003 /);
  });

  it('an unreadable task file: asked to repair it, once', () => {
    const out = decideStop(fresh, snapshot(undefined), undefined);
    assert.match(
      out.decision.kind === 'continue' ? out.decision.reason : '',
      /harness-tasks\.json cannot be used: .*line 3, column 1[\s\S]*harness-tasks\.json\.bak/,
    );
    assert.equal(decideStop(again, snapshot(undefined), out.memory!).decision.kind, 'allow');
  });
});

describe('hooks: what each agent reads back', () => {
  it('Claude Code and Codex: decision block with the reason; SessionStart additionalContext', () => {
    for (const agent of ['claude', 'codex'] as const) {
      assert.equal(AGENT_HOOKS[agent].continueOutput('go on'), '{"decision":"block","reason":"go on"}');
      assert.equal(
        AGENT_HOOKS[agent].contextOutput('state'),
        '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"state"}}',
      );
    }
  });

  it('Gemini CLI: decision deny with the reason; Cursor: followup_message and additional_context', () => {
    assert.equal(AGENT_HOOKS.gemini.continueOutput('go on'), '{"decision":"deny","reason":"go on"}');
    assert.equal(AGENT_HOOKS.cursor.continueOutput('go on'), '{"followup_message":"go on"}');
    assert.equal(AGENT_HOOKS.cursor.contextOutput('state'), '{"additional_context":"state"}');
  });
});

describe('hooks: the context a fresh session gets', () => {
  it('the current task with its validation, dependencies, files, context, last error and checkpoints; the next eligible; the last log lines', () => {
    const text = sessionStartContext(snapshot(TASKS), 'compact');
    const expected = [
      'Launchpad harness in /work/project (session compact): .harness-active is present, so work remains.',
      'Tasks: 5 total, 1 completed, 1 in progress, 2 pending, 1 failed, 0 blocked.',
      '',
      'Current task: task-002 "Add rate limiting" (in progress: resume it from its last checkpoint; attempts used 1 of 3, P1)',
      '  Validation: npm test -- rate-limit (timeout 120 s)',
      '  Depends on: task-001',
      '  Files: src/middleware/',
      '  Context: Redis-backed, 100 req/min per IP',
      '  Last error: [TASK_EXEC] Redis connection refused',
      '  Checkpoints:',
      '    step 1/4 limiter module (2025-07-01T10:03:00Z)',
      '    step 2/4 auth routes created, tests pending (2025-07-01T10:05:00Z)',
      '',
      'Next eligible:',
      '  task-003 "Add OAuth providers" (pending, P1)',
      '',
      'Last lines of harness-progress.txt:',
      ...LOG.map((l) => `  ${l}`),
      '',
    ].join('\n');
    assert.ok(text.startsWith(expected), text);
    assert.match(text, /run its validation command, record the outcome in harness-tasks\.json and harness-progress\.txt/);
  });

  it('nothing in progress: the next eligible task is the current one', () => {
    const text = sessionStartContext(snapshot(TASKS.replace('"status": "in_progress"', '"status": "completed"')));
    assert.match(text, /^Current task: task-003 "Add OAuth providers" \(not started: it is the next eligible task; /m);
    assert.match(text, /^Next eligible:\n {2}task-004 "Docs" \(pending, P1\)$/m);
  });

  it('a run in progress, an unreadable task file, an empty log', () => {
    const text = sessionStartContext(snapshot(undefined, { recentLog: [], run: { pid: 7, command: 'launchpad run' } }));
    assert.match(text, /^launchpad run \(pid=7\) is working this task list now: do not work its tasks by hand as well\.$/m);
    assert.match(text, /^harness-tasks\.json cannot be used: harness-tasks\.json: line 3/m);
    assert.match(text, /^Last lines of harness-progress\.txt:\n {2}\(empty\)$/m);
  });

  it("stays under the agents' context limits however long the tasks and log are", () => {
    const long = 'x'.repeat(50_000);
    const tasks = TASKS.replace('"limiter module"', JSON.stringify(long)).replace('"Add OAuth providers"', JSON.stringify('x'.repeat(500))); // the longest title allowed
    const text = sessionStartContext(snapshot(tasks, { recentLog: Array.from({ length: 200 }, () => long) }));
    assert.ok(text.length <= 8000, String(text.length));
  });
});
