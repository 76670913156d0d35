// Batch selection and dispatch ("Batch Selection Algorithm", "Sub-agent Dispatch
// Protocol"): dependency validation first, the eligible pool's order, batch rules (no
// dependency inside, no files_hint overlap, empty hint solo), rolling refills up to
// max_parallel_agents, agents really concurrent, each in its own worktree from the base head,
// with the env contract and the prompt on stdin.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  agentCmd,
  batches,
  byTask,
  defaultWorktreeRoot,
  git,
  harness,
  launchpad,
  linesOf,
  logLines,
  read,
  run,
  show,
  stats,
  taskById,
  tempDir,
} from './support';

interface Interval {
  id: string;
  start: bigint;
  end: bigint;
}

/** The [start, end] of every agent from records-times.sh's file. */
function intervals(file: string): Interval[] {
  const marks = new Map<string, Partial<Interval>>();
  for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const [id, kind, ns] = line.split(' ');
    const m = marks.get(id!) ?? { id: id! };
    m[kind as 'start' | 'end'] = BigInt(ns!);
    marks.set(id!, m);
  }
  return [...marks.values()].map((m) => {
    assert.ok(m.start !== undefined && m.end !== undefined, `incomplete interval for ${m.id}`);
    return m as Interval;
  });
}

/** The most intervals running at one instant. */
function maxConcurrency(list: Interval[]): number {
  const events = list.flatMap((i) => [
    { t: i.start, d: 1 },
    { t: i.end, d: -1 },
  ]);
  events.sort((a, b) => (a.t === b.t ? a.d - b.d : a.t < b.t ? -1 : 1));
  let now = 0;
  let max = 0;
  for (const e of events) max = Math.max(max, (now += e.d));
  return max;
}

/** Index of the first log line matching type and task. */
function at(root: string, type: string, task: string): number {
  const i = logLines(root).findIndex((l) => l.type === type && l.task === task);
  assert.ok(i >= 0, `no ${type} line for ${task}`);
  return i;
}

describe('controller: batches and dispatch', function () {
  this.timeout(120_000);

  it("dependency validation first: cycles (and self-references) fail with the protocol's message, failures propagate as blocked", async () => {
    const root = harness({
      tasks: [
        { id: 'task-a', dependsOn: ['task-b'] },
        { id: 'task-b', dependsOn: ['task-a'] },
        { id: 'task-c', dependsOn: ['task-a'] },
        { id: 'task-d' },
        { id: 'task-e', dependsOn: ['task-e'] },
        { id: 'task-f', maxAttempts: 1 },
        { id: 'task-g', dependsOn: ['task-f'] },
        { id: 'task-h', dependsOn: ['task-g'] },
      ],
    });
    const r = await run(root, byTask({ 'task-f': agentCmd('fails.sh') }, agentCmd('writes-done.sh')));
    assert.equal(r.code, 1, show(r, root));
    const log = (id: string) => taskById(root, id).error_log;
    assert.deepEqual(log('task-a'), ['[DEPENDENCY] Circular dependency detected: task-a -> task-b -> task-a']);
    assert.deepEqual(log('task-b'), ['[DEPENDENCY] Circular dependency detected: task-b -> task-a -> task-b']);
    assert.deepEqual(log('task-c'), ['[DEPENDENCY] Blocked by failed task-a']);
    assert.deepEqual(log('task-e'), ['[DEPENDENCY] Circular dependency detected: task-e -> task-e']);
    assert.deepEqual(log('task-g'), ['[DEPENDENCY] Blocked by failed task-f']);
    assert.deepEqual(log('task-h'), ['[DEPENDENCY] Blocked by failed task-g']);
    for (const id of ['task-a', 'task-b', 'task-c', 'task-e', 'task-g', 'task-h']) {
      const t = taskById(root, id);
      assert.equal(t.status, 'failed', id);
      assert.equal(t.attempts, 0, `${id} was dispatched`);
      const err = linesOf(root, 'ERROR', id);
      assert.equal(err.length, 1, `${id}: ${err.map((l) => l.raw).join('\n')}`);
      assert.equal(err[0]!.category, 'DEPENDENCY');
      assert.equal(`[DEPENDENCY] ${err[0]!.message}`, t.error_log[0]);
    }
    assert.equal(taskById(root, 'task-d').status, 'completed');
    // The cycle was found before anything was dispatched.
    assert.ok(at(root, 'ERROR', 'task-a') < at(root, 'DISPATCH', 'task-d'));
    const st = stats(root);
    assert.equal(st.completed, 1);
    assert.equal(st.completed! + st.failed! + st.blocked! + st.pending! + st.in_batch!, 8);
  });

  it('agents of one batch really run at the same time (their [start, end] intervals overlap)', async () => {
    const times = join(tempDir(), 'times');
    const root = harness({ tasks: [{ id: 'task-001' }, { id: 'task-002' }, { id: 'task-003' }] });
    const r = await run(root, agentCmd('records-times.sh'), [], { AGENT_TIMES: times, AGENT_BARRIER: '3' });
    assert.equal(r.code, 0, show(r, root));
    assert.deepEqual(batches(root), [['task-001', 'task-002', 'task-003']]);
    const list = intervals(times);
    assert.equal(list.length, 3);
    for (const a of list)
      for (const b of list) if (a !== b) assert.ok(a.start < b.end && b.start < a.end, `${a.id} and ${b.id} did not overlap`);
  });

  it('no more than max_parallel_agents (--max-parallel) at once; free slots are refilled, each refill a BATCH line', async () => {
    const times = join(tempDir(), 'times');
    const root = harness({
      tasks: ['task-001', 'task-002', 'task-003', 'task-004'].map((id) => ({ id })),
      sessionConfig: { max_parallel_agents: 3 },
    });
    const r = await run(root, agentCmd('records-times.sh'), ['--max-parallel', '2'], { AGENT_TIMES: times, AGENT_BARRIER: '2' });
    assert.equal(r.code, 0, show(r, root));
    const b = batches(root);
    assert.deepEqual(b[0], ['task-001', 'task-002']);
    assert.ok(
      b.every((x) => x.length <= 2),
      JSON.stringify(b),
    );
    assert.deepEqual(b.flat().sort(), ['task-001', 'task-002', 'task-003', 'task-004']);
    assert.ok(b.length >= 2, 'no refill BATCH line');
    assert.equal(maxConcurrency(intervals(times)), 2);
    assert.equal(stats(root).batches_dispatched, b.length);
  });

  it('the eligible pool goes by priority (P0 > P1 > P2), then id', async () => {
    const root = harness({
      tasks: [
        { id: 'task-001', priority: 'P2' },
        { id: 'task-002', priority: 'P0' },
        { id: 'task-004', priority: 'P1' },
        { id: 'task-003', priority: 'P1' },
      ],
      sessionConfig: { max_parallel_agents: 1 },
    });
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 0, show(r, root));
    assert.deepEqual(batches(root), [['task-002'], ['task-003'], ['task-004'], ['task-001']]);
  });

  it('within a priority, the task that the most work waits on goes first: a hub before lower-id leaves', async () => {
    const root = harness({
      tasks: [
        { id: 'task-001' },
        { id: 'task-002' },
        { id: 'task-003' },
        ...['task-004', 'task-005', 'task-006'].map((id) => ({ id, dependsOn: ['task-003'] })),
      ],
      sessionConfig: { max_parallel_agents: 1 },
    });
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 0, show(r, root));
    assert.deepEqual(batches(root), [['task-003'], ['task-001'], ['task-002'], ['task-004'], ['task-005'], ['task-006']]);
  });

  it('each task in its own worktree on harness-<id> from the current head of the base branch; a dependent waits for its dependency', async () => {
    const echo = tempDir();
    const root = harness({ tasks: [{ id: 'task-001' }, { id: 'task-002', dependsOn: ['task-001'] }] });
    const initial = git(root, 'rev-parse', 'HEAD');
    const r = await run(root, agentCmd('echoes-env.sh'), [], { ECHO_DIR: echo });
    assert.equal(r.code, 0, show(r, root));
    assert.deepEqual(batches(root), [['task-001'], ['task-002']]);
    const mergeOf1 = git(root, 'log', '--format=%H', '--grep', '^Merge \\[task-001\\]', 'main');
    assert.equal(read(join(echo, 'task-001.1.head')).trim(), initial);
    assert.equal(read(join(echo, 'task-002.1.head')).trim(), mergeOf1, 'task-002 did not start from the head after task-001 was merged');
    for (const id of ['task-001', 'task-002']) {
      assert.equal(read(join(echo, `${id}.1.branch`)).trim(), `harness-${id}`);
      assert.equal(read(join(echo, `${id}.1.pwd`)).trim(), join(defaultWorktreeRoot(root), id));
    }
    assert.ok(at(root, 'Completed', 'task-001') < at(root, 'DISPATCH', 'task-002'));
  });

  it('the agent gets the env contract and the prompt on stdin (= prompt.md); its output is the transcript', async () => {
    const echo = tempDir();
    const root = harness({
      tasks: [
        { id: 'task-001', title: 'Add rate limiting', context: 'Redis-backed, 100 req/min per IP', files: ['src/task-001/', 'src/mw.ts'] },
      ],
    });
    const r = await run(root, agentCmd('echoes-env.sh'), [], { ECHO_DIR: echo });
    assert.equal(r.code, 0, show(r, root));
    const attempt = join(root, '.launchpad/runs/task-001/attempt-1');
    const worktree = join(defaultWorktreeRoot(root), 'task-001');
    const env = read(join(echo, 'task-001.1.env')).trim().split('\n');
    // The task's port block (its base depends on the state root and on which ports are free).
    const ports = env.filter((l) => l.startsWith('LAUNCHPAD_PORT_'));
    assert.match(ports[0] ?? '', /^LAUNCHPAD_PORT_BASE=(2\d{4}|3[01]\d{3})$/);
    assert.deepEqual(ports.slice(1), ['LAUNCHPAD_PORT_COUNT=10']);
    assert.deepEqual(
      env.filter((l) => !l.startsWith('LAUNCHPAD_PORT_')),
      [
        'LAUNCHPAD_ATTEMPT=1',
        'LAUNCHPAD_BRANCH=harness-task-001',
        `LAUNCHPAD_PROMPT_FILE=${join(attempt, 'prompt.md')}`,
        'LAUNCHPAD_TASK_ID=task-001',
        'LAUNCHPAD_TASK_TITLE=Add rate limiting',
        `LAUNCHPAD_WORKTREE=${worktree}`,
      ],
    );
    const prompt = read(join(attempt, 'prompt.md'));
    assert.equal(read(join(echo, 'task-001.1.stdin')), prompt);
    assert.match(prompt, /^You are a worker agent executing a single task for a Launchpad-managed project\.$/m);
    assert.match(prompt, /^- Title: Add rate limiting$/m);
    assert.match(prompt, /^- Description: Redis-backed, 100 req\/min per IP$/m);
    assert.match(prompt, /^- Focus on these files\/directories: src\/task-001\/, src\/mw\.ts$/m);
    assert.match(prompt, /^test -f src\/task-001\/done\.txt$/m);
    assert.match(prompt, /^- Commit all changes with message: "\[task-001\] Add rate limiting"$/m);
    assert.ok(prompt.includes(`- Project root: ${worktree}`));
    assert.match(prompt, /^- Current branch: harness-task-001/m);
    assert.match(read(join(attempt, 'transcript.log')), /^hello from task-001\nRESULT:SUCCESS\n$/);
  });

  it('files_hint overlap keeps two tasks apart (directory level); others still run beside them', async () => {
    const root = harness({
      tasks: [
        { id: 'task-001', files: ['src/auth/'] },
        { id: 'task-002', files: ['src/auth/oauth/'] },
        { id: 'task-003', files: ['src/authz/'] },
      ],
      sessionConfig: { max_parallel_agents: 3 },
    });
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 0, show(r, root));
    const b = batches(root);
    assert.deepEqual(b[0], ['task-001', 'task-003']);
    assert.ok(!b.some((x) => x.includes('task-001') && x.includes('task-002')));
    assert.ok(at(root, 'Completed', 'task-001') < at(root, 'DISPATCH', 'task-002'), 'task-002 started while task-001 ran');
    // Said once, with the file: a slot was free, and a narrower files_hint would use it.
    assert.deepEqual(
      linesOf(root, 'WARN')
        .filter((l) => l.message.startsWith('waits'))
        .map((l) => [l.task, l.message]),
      [['task-002', 'waits although a slot is free: shares src/auth/oauth/ with task-001']],
    );
  });

  it('an empty files_hint runs solo: alone in its batch, with nothing running beside it', async () => {
    const first = harness({ tasks: [{ id: 'task-001', files: [] }, { id: 'task-002' }, { id: 'task-003' }] });
    const r1 = await run(first, agentCmd('writes-done.sh'));
    assert.equal(r1.code, 0, show(r1, first));
    assert.deepEqual(batches(first), [['task-001'], ['task-002', 'task-003']]);
    assert.ok(at(first, 'Completed', 'task-001') < at(first, 'DISPATCH', 'task-002'));

    // Not first in the pool: it waits for the running tasks instead of joining them.
    const later = harness({ tasks: [{ id: 'task-001' }, { id: 'task-002', files: [] }, { id: 'task-003' }] });
    const r2 = await run(later, agentCmd('writes-done.sh'));
    assert.equal(r2.code, 0, show(r2, later));
    assert.deepEqual(batches(later), [['task-001', 'task-003'], ['task-002']]);
    const dispatch2 = at(later, 'DISPATCH', 'task-002');
    assert.ok(at(later, 'Completed', 'task-001') < dispatch2 && at(later, 'Completed', 'task-003') < dispatch2);
  });

  it('a task without validation.command is never dispatched: one WARN per task and session, no ERROR, nothing charged', async () => {
    const root = harness({ tasks: [{ id: 'task-001', validate: null }, { id: 'task-002' }, { id: 'task-003', dependsOn: ['task-002'] }] });
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 1, show(r, root));
    const again = await run(root, agentCmd('writes-done.sh'));
    assert.equal(again.code, 1, show(again, root));
    assert.deepEqual(linesOf(root, 'ERROR'), []);
    const said = 'not started: no validation command to prove it done (launchpad edit task-001 --validate "CMD")';
    assert.deepEqual(
      linesOf(root, 'WARN', 'task-001').map((l) => [l.session, l.message]),
      [
        [1, said],
        [2, said],
      ],
    );
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'pending');
    assert.equal(t.attempts, 0);
    assert.equal(linesOf(root, 'DISPATCH', 'task-001').length, 0);
    assert.equal(taskById(root, 'task-003').status, 'completed');
  });

  it('the agent command: --agent, else $LAUNCHPAD_AGENT, else session_config.agent_command; none at all → ERROR [CONFIG], nothing dispatched, exit 2', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }], sessionConfig: { agent_command: agentCmd('fails.sh') } });
    const none = harness({ tasks: [{ id: 'task-001' }] });
    const r0 = await launchpad(none, ['run']);
    assert.equal(r0.code, 2, show(r0, none));
    assert.match(linesOf(none, 'ERROR')[0]!.raw, /ERROR \[CONFIG\] No agent command: pass --agent, set LAUNCHPAD_AGENT/);
    assert.equal(linesOf(none, 'DISPATCH').length, 0);
    assert.equal(taskById(none, 'task-001').status, 'pending');

    // $LAUNCHPAD_AGENT beats session_config.agent_command (which would fail the task).
    const r1 = await launchpad(root, ['run'], { LAUNCHPAD_AGENT: agentCmd('writes-done.sh') });
    assert.equal(r1.code, 0, show(r1, root));

    const cfg = harness({ tasks: [{ id: 'task-001' }], sessionConfig: { agent_command: agentCmd('writes-done.sh') } });
    const r2 = await launchpad(cfg, ['run']);
    assert.equal(r2.code, 0, show(r2, cfg));

    // --agent beats $LAUNCHPAD_AGENT.
    const flag = harness({ tasks: [{ id: 'task-001', maxAttempts: 1 }] });
    const r3 = await launchpad(flag, ['run', '--agent', agentCmd('fails.sh')], { LAUNCHPAD_AGENT: agentCmd('writes-done.sh') });
    assert.equal(r3.code, 1, show(r3, flag));
    assert.deepEqual(taskById(flag, 'task-001').error_log, ['[AGENT_FAIL] could not resolve import errors']);
  });
});
