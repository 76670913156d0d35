// What a client sees of a run it did not start, through the built CLI: `run --events` prints the
// event stream, the same lines the run writes to its session file (which a late reader catches up
// on); `launchpad stop ID` ends one task's agent, fenced by that attempt's agent id; `launchpad
// stop` asks the run to stop as Ctrl-C does and, asked again, ends it at once; no signal ever
// reaches a process that only reuses a run's pid.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

import { stopTask } from '../../../src/core/runControl';
import { StatePaths } from '../../../src/core/statePaths';
import {
  agentCmd,
  alive,
  assertAllGone,
  byTask,
  git,
  harness,
  launchpad,
  linesOf,
  pidsOf,
  readLog,
  run,
  show,
  startRun,
  taskById,
  tempDir,
  waitFor,
  waitForLog,
} from './support';

const records = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown> & { type: string; seq: number });

const eventFile = (root: string) => {
  const dir = join(root, '.launchpad/events');
  const names = existsSync(dir) ? readdirSync(dir) : [];
  return names.length === 1 ? join(dir, names[0]!) : undefined;
};

describe('run events and launchpad stop', function () {
  this.timeout(120_000);

  it('run --events prints the stream as JSON lines, the same lines as its session file, in order', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }, { id: 'task-002', dependsOn: ['task-001'] }] });
    const started = startRun(root, agentCmd('checkpoints.sh'), ['--events']);
    const r = await started.done;
    assert.equal(r.code, 0, show(r, root));
    const file = eventFile(root);
    assert.ok(file, 'one session file');
    assert.equal(r.stdout, readFileSync(file, 'utf8'), 'stdout is the session file, line for line');
    const all = records(r.stdout);
    assert.deepEqual(
      all.map((x) => x.seq),
      all.map((_, i) => i),
    );
    assert.ok(all.every((x) => x.v === 1));
    assert.equal(all[0]!.type, 'session');
    assert.equal(all[0]!.pid, started.child.pid);
    assert.equal(all.at(-1)!.type, 'end');
    assert.deepEqual((all.at(-1)!.outcome as Record<string, unknown>).exit_code, 0);

    // Every line of the progress log this session wrote, as it wrote them.
    const logged = all.filter((x) => x.type === 'log').map((x) => x.line);
    assert.deepEqual(logged, readLog(root));

    for (const id of ['task-001', 'task-002']) {
      const attempt = all.find((x) => x.type === 'attempt' && x.task === id)!;
      assert.equal(attempt.transcript, `.launchpad/runs/${id}/attempt-1/transcript.log`);
      assert.equal(attempt.agent, taskById(root, id).agent_id ?? attempt.agent);
      assert.match(readFileSync(join(root, String(attempt.transcript)), 'utf8'), /CHECKPOINT step=1\/2/);
      const events = all.filter((x) => x.type === 'task' && x.task === id);
      assert.deepEqual(
        events.map((x) => x.event),
        ['dispatched', 'checkpoint', 'checkpoint', 'agent-done', 'validated', 'completed'],
      );
      assert.deepEqual([events[1]!.step, events[1]!.total, events[1]!.description], [1, 2, 'wrote the file']);
      assert.ok(all.indexOf(attempt) < all.indexOf(events[1]!), 'the attempt is announced before its agent reports');
    }
  });

  it('run --events with --json is a usage error; a run refused before its session prints its end with the error', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    const both = await launchpad(root, ['run', '--events', '--json', '--agent', 'true']);
    assert.equal(both.code, 2, show(both));
    assert.match(both.stderr, /--json or --events, not both/);

    writeFileSync(join(root, 'README.md'), 'changed\n');
    const refused = await run(root, agentCmd('writes-done.sh'), ['--events']);
    assert.equal(refused.code, 2, show(refused));
    const [end, ...rest] = records(refused.stdout);
    assert.equal(rest.length, 0, refused.stdout);
    assert.equal(end!.type, 'end');
    assert.match(String(end!.error), /uncommitted changes to tracked files: README.md/);
    assert.equal(eventFile(root), undefined, 'no session, no session file');
  });

  it("stop ID ends that task's agent only when the request names its attempt; the attempt fails, its commits kept", async () => {
    const pids = tempDir();
    const root = harness({ tasks: [{ id: 'task-001', maxAttempts: 1 }, { id: 'task-002' }] });
    const agent = byTask({ 'task-001': agentCmd('commits-then-hangs.sh') }, agentCmd('writes-done.sh'));
    const started = startRun(root, agent, [], { PID_DIR: pids });
    const procs = await pidsOf(pids, 'task-001');
    const agentId = String(taskById(root, 'task-001').agent_id);

    // A request naming another agent (an earlier attempt's) stops nothing and is withdrawn.
    const paths = new StatePaths(root);
    assert.equal(await stopTask(paths, 'task-001', 'agent_00000000', 1500), 'not-taken');
    assert.ok(procs.every(alive), 'the running agent was not stopped');
    assert.deepEqual(readdirSync(paths.stopRequests), []);

    const stop = await launchpad(root, ['stop', 'task-001']);
    assert.equal(stop.code, 0, show(stop, root));
    assert.match(stop.stdout, new RegExp(`task-001: its agent \\(${agentId}\\) is being ended`));
    const r = await started.done;
    assert.equal(r.code, 1, show(r, root));
    await assertAllGone(procs, 'the stopped agent and what it started');
    const t1 = taskById(root, 'task-001');
    assert.equal(t1.status, 'failed');
    assert.equal(t1.attempts, 1);
    assert.equal(String((t1.error_log as string[]).at(-1)), '[AGENT_FAIL] stopped by a person (launchpad stop)');
    assert.equal(taskById(root, 'task-002').status, 'completed', 'the rest of the run went on');
    assert.match(linesOf(root, 'WARN', 'task-001')[0]!.raw, new RegExp(`agent=${agentId} stopped by a person`));
    assert.ok(git(root, 'for-each-ref', 'refs/launchpad/attempts/task-001/').trim(), 'its commits are kept');
    const answer = records(readFileSync(eventFile(root)!, 'utf8')).find((x) => x.type === 'stop');
    assert.deepEqual(answer && [answer.scope, answer.task, answer.agent, answer.taken], ['task', 'task-001', agentId, true]);

    const again = await launchpad(root, ['stop', 'task-001']);
    assert.equal(again.code, 1, show(again));
    assert.match(again.stdout, /task-001 is failed: no agent of it runs/);
  });

  it('stop ID before the agent starts (its worktree being set up) ends it as it starts; after it ended, the attempt goes on', async () => {
    const root = harness({
      tasks: [
        { id: 'task-001', maxAttempts: 1 },
        // A validation slow enough to ask for a stop while it runs.
        { id: 'task-002', validate: 'sleep 3 && test -f src/task-002/done.txt' },
      ],
      sessionConfig: { worktree_setup: 'sleep 3', max_parallel_agents: 2 },
    });
    const started = startRun(root, agentCmd('writes-done.sh'));
    await waitForLog(root, /DISPATCH \[task-001\]/);
    const early = await launchpad(root, ['stop', 'task-001']);
    assert.equal(early.code, 0, show(early, root));
    assert.match(early.stdout, /task-001: its agent \(agent_\w+\) is being ended/);
    await waitForLog(root, /VALIDATE \[task-002\]|AGENT_DONE \[task-002\]/);
    const late = await launchpad(root, ['stop', 'task-002']);
    assert.equal(late.code, 1, show(late, root));
    assert.match(late.stdout, /task-002: its agent \(agent_\w+\) had ended already; the attempt goes on/);
    const r = await started.done;
    assert.equal(r.code, 1, show(r, root));
    const t1 = taskById(root, 'task-001');
    assert.equal(t1.status, 'failed');
    assert.equal(String((t1.error_log as string[]).at(-1)), '[AGENT_FAIL] stopped by a person (launchpad stop)');
    assert.equal(readFileSync(join(root, '.launchpad/runs/task-001/attempt-1/transcript.log'), 'utf8'), '', 'its agent wrote nothing');
    assert.equal(taskById(root, 'task-002').status, 'completed', 'a stop after its agent ended changes nothing');
  });

  it('stop asks the run to stop as Ctrl-C does; asked again while it stops, the run ends at once', async () => {
    const pids = tempDir();
    // Agents that ignore SIGTERM: the first stop waits for their grace period to kill them.
    const root = harness({ tasks: [{ id: 'task-001' }] });
    const started = startRun(root, agentCmd('ignores-term.sh'), [], { PID_DIR: pids });
    const procs = await pidsOf(pids, 'task-001', ['agent', 'grandchild']);

    const first = await launchpad(root, ['stop']);
    assert.equal(first.code, 0, show(first, root));
    assert.match(first.stdout, new RegExp(`pid ${started.child.pid}: stopping`));
    await waitFor("the stop in the run's stream", () => readFileSync(eventFile(root)!, 'utf8').includes('"type":"stop"'));
    const second = await launchpad(root, ['stop']);
    assert.match(second.stdout, new RegExp(`pid ${started.child.pid}: ended at once`), show(second, root));
    const r = await started.done;
    assert.equal(r.code, 130, show(r, root));
    await assertAllGone(procs, 'the agent and its grandchild');
    assert.equal(linesOf(root, 'STATS').length, 0, 'no session end: it ended at once');
    const last = records(readFileSync(eventFile(root)!, 'utf8')).at(-1)!;
    assert.equal(last.type, 'end');
    assert.match(String(last.error), /ended at once/);
    assert.equal(taskById(root, 'task-001').status, 'in_progress', 'left for the next run to recover');

    const none = await launchpad(root, ['stop']);
    assert.equal(none.code, 1);
    assert.match(none.stdout, /no run of this state root is running/);
  });

  it("never signals a process that only reuses a run's pid", async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    const other = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const holder = {
        pid: other.pid,
        identity: 'not this process',
        host: hostname(),
        command: 'launchpad run',
        acquired_at: new Date().toISOString(),
      };
      mkdirSync(join(root, '.launchpad/session.lock'), { recursive: true });
      writeFileSync(join(root, '.launchpad/session.lock/holder.json'), JSON.stringify(holder));
      mkdirSync(join(root, '.launchpad/events'), { recursive: true });
      const session = {
        v: 1,
        seq: 0,
        at: new Date().toISOString(),
        type: 'session',
        session: 1,
        pid: other.pid,
        identity: 'not this process',
        host: hostname(),
        root,
        base_branch: 'main',
        mode: 'worktrees',
        worker: null,
      };
      writeFileSync(join(root, '.launchpad/events/session-1.jsonl'), JSON.stringify(session) + '\n');
      const r = await launchpad(root, ['stop']);
      assert.equal(r.code, 1, show(r));
      assert.match(r.stdout, /no run of this state root is running/);
      assert.ok(alive(other.pid!), 'the process with the reused pid was left alone');
    } finally {
      other.kill('SIGKILL');
    }
  });
});
