// Workers on other machines through BullMQ on a real Redis: a controller, a bare remote, and
// worker processes each with its own clone. A DAG completes with each task merged once; a worker
// killed with SIGKILL mid-attempt loses nothing (its job goes to another worker, which resumes
// from the partial work it pushed) and duplicates nothing; a controller killed mid-run is
// restarted and follows the jobs still in flight.
import * as assert from 'node:assert/strict';

import { QUEUE_NAME } from '../../../src/core/queue/job';
import { installFake } from '../agents/fakeAgents';
import * as T from '../agents/transcripts';
import { runCli, startCli } from '../helpers/cli';
import { git } from '../helpers/gitRepo';
import { readLog, readTasks } from '../helpers/harness';
import { tempDir } from '../helpers/tmp';
import { requireBullmq } from './queuePackages';
import { AGENT, agentPids, groupAlive, processGroupOf, type QueueRig, until, useQueueRig } from './queueRig';

describe('queue executor: workers on other machines (BullMQ on Redis)', function () {
  this.timeout(120_000);
  const q = useQueueRig();

  const setup = (...args: Parameters<QueueRig['setup']>) => q.rig.setup(...args);
  const worker = (...args: Parameters<QueueRig['worker']>) => q.rig.worker(...args);
  const controller = (...args: Parameters<QueueRig['controller']>) => q.rig.controller(...args);
  const assertMergedOnce = (root: string, ids: string[]) => q.rig.assertMergedOnce(root, ids);
  const assertNoSecret = (...o: Array<{ stdout: string; stderr: string }>) => q.rig.assertNoSecret(...o);

  it('a 30-task DAG completes on three workers, each task merged once, who ran it shown', async () => {
    // Three layers of ten: t11 needs t01, t21 needs t11, …
    const ids = Array.from({ length: 30 }, (_, i) => `t${String(i + 1).padStart(2, '0')}`);
    const tasks = ids.map((id, i) => ({ id, dependsOn: i >= 10 ? [ids[i - 10]!] : [] }));
    const { root, env } = setup(tasks, 6);
    const workers = ['w1', 'w2', 'w3'].map((id) => worker(id, env, { QUEUE_AGENT_SLEEP: '0.1' }));
    const run = controller(root, env);
    const end = await run.done;
    assert.equal(end.code, 0, `${end.stdout}\n${end.stderr}`);
    assertMergedOnce(root, ids);
    assertNoSecret(end, ...workers.map((w) => w.output()));
    assert.match(workers[0]!.output().stderr, /queue redis:\/\/:\*\*\*@127\.0\.0\.1:\d+/);
    const log = readLog(root);
    // Each attempt ran on a named worker, recorded through claimed_by (the Tasks view shows it).
    const runners = new Set(log.flatMap((l) => /running on queue worker (w\d)/.exec(l)?.[1] ?? []));
    assert.ok(runners.size >= 2, `attempts spread over workers: ${[...runners].join(', ')}`);
    assert.equal(log.filter((l) => / AGENT_DONE .*worker=w\d/.test(l)).length, 30);
    // The dependency order held: a task's merge comes after its dependency's.
    const mergedAt = (id: string) => log.findIndex((l) => / MERGE /.test(l) && l.includes(`branch=harness-${id} `));
    for (let i = 10; i < 30; i++) {
      assert.ok(mergedAt(ids[i - 10]!) >= 0, `${ids[i - 10]} has a MERGE line`);
      assert.ok(mergedAt(ids[i]!) > mergedAt(ids[i - 10]!), `${ids[i]} merged after ${ids[i - 10]}`);
    }
  });

  it('a worker killed with SIGKILL mid-attempt: its job goes to another worker, which resumes from the pushed partial work', async () => {
    const ids = Array.from({ length: 6 }, (_, i) => `k${i + 1}`);
    const { root, remote, env } = setup(
      ids.map((id) => ({ id })),
      6,
    );
    const pids = tempDir('launchpad-pids-');
    const workers = new Map(['w1', 'w2', 'w3'].map((id) => [id, worker(id, env, { QUEUE_AGENT_SLEEP: '2', QUEUE_AGENT_PIDS: pids })]));
    const run = controller(root, env);
    // A task whose worker committed and pushed part 1 (its CHECKPOINT is logged): kill that worker.
    let victim: { task: string; worker: string } | undefined;
    await until('a checkpoint on a queue worker', () => {
      const log = readLog(root);
      for (const l of log) {
        const m = /\[(k\d)\] CHECKPOINT/.exec(l) ?? /CHECKPOINT \[(k\d)\]/.exec(l);
        if (!m) continue;
        const t = readTasks(root).tasks.find((x) => x.id === m[1]);
        const w = /^queue:(w\d)$/.exec(t?.claimed_by ?? '')?.[1];
        if (w && t?.status === 'in_progress') {
          victim = { task: m[1]!, worker: w };
          return true;
        }
      }
      return false;
    });
    // Its push of part 1 (made at the checkpoint) has landed on the remote.
    await until('the partial work on the remote', () =>
      git(remote, 'for-each-ref', '--format=%(refname)', `refs/launchpad/queue/${victim!.task}/`).includes('/partial'),
    );
    const orphans = agentPids(pids)
      .filter((a) => a.worker === victim!.worker)
      .map((a) => processGroupOf(a.pid))
      .filter((g) => g !== undefined);
    workers.get(victim!.worker)!.child.kill('SIGKILL');
    // Its agents end with it (its guard ends them): they would bill beside the worker taking over.
    await until("the dead worker's agents to end", () => orphans.every((g) => !groupAlive(g)), 5000);
    const end = await run.done;
    assert.equal(end.code, 0, `${end.stdout}\n${end.stderr}`);
    assertMergedOnce(root, ids);
    // Nothing lost: part 1 is the dead worker's, the end another's, and the log says it resumed.
    assert.equal(git(root, 'show', `main:src/${victim!.task}/part1.txt`), `part 1 by ${victim!.worker}`);
    assert.notEqual(git(root, 'show', `main:src/${victim!.task}/done.txt`), `done by ${victim!.worker}`);
    const log = readLog(root);
    assert.ok(
      log.some((l) => l.includes(victim!.task) && / AGENT_DONE .*resumed_from=/.test(l)),
      `resumed from the partial branch:\n${log.filter((l) => l.includes(victim!.task)).join('\n')}`,
    );
    // One attempt charged: the job came back, the attempt is the same.
    assert.equal(readTasks(root).tasks.find((t) => t.id === victim!.task)!.attempts, 1);
  });

  it('a controller killed mid-run is restarted and follows the jobs still in flight', async () => {
    const ids = Array.from({ length: 8 }, (_, i) => `c${i + 1}`);
    const { root, env } = setup(
      ids.map((id) => ({ id })),
      4,
    );
    for (const id of ['w1', 'w2', 'w3']) worker(id, env, { QUEUE_AGENT_SLEEP: '1' });
    const first = controller(root, env);
    // Killed once attempts run on workers (published, taken: claimed_by names the worker).
    const onWorkers = () => readTasks(root).tasks.filter((t) => t.status === 'in_progress' && t.claimed_by?.startsWith('queue:'));
    await until('attempts on workers', () => onWorkers().length >= 2);
    first.child.kill('SIGKILL');
    await first.done;
    const inFlight = onWorkers().map((t) => t.id);
    assert.ok(inFlight.length >= 2, 'attempts were in flight when the controller died');
    const second = controller(root, env);
    const end = await second.done;
    assert.equal(end.code, 0, `${end.stdout}\n${end.stderr}`);
    assertMergedOnce(root, ids);
    const log = readLog(root);
    for (const id of inFlight)
      assert.ok(
        log.some((l) => l.includes(id) && l.includes('action="followed queued attempt"')),
        `${id} followed, not started afresh:\n${log.filter((l) => l.includes(id)).join('\n')}`,
      );
    // Followed, not run again: each in-flight task took one attempt.
    for (const id of inFlight) assert.equal(readTasks(root).tasks.find((t) => t.id === id)!.attempts, 1, id);
    assert.ok(!readLog(root).some((l) => l.includes('result refused')));
  });

  it('a stale worker that comes back cannot deliver: the attempt is merged once, from the worker that took its job over', async () => {
    const { root, env } = setup([{ id: 's1' }], 1);
    const stale = worker('w1', env, { QUEUE_AGENT_SLEEP: '1.5' });
    const run = controller(root, env);
    await until('s1 running on w1', () => readTasks(root).tasks.find((t) => t.id === 's1')?.claimed_by === 'queue:w1');
    // Frozen (not dead): it stops renewing its job's lock; its agent goes on and ends on its own.
    stale.child.kill('SIGSTOP');
    worker('w2', env, { QUEUE_AGENT_SLEEP: '0.2' });
    const end = await run.done;
    assert.equal(end.code, 0, `${end.stdout}\n${end.stderr}`);
    const merged = git(root, 'rev-parse', 'main');
    // Back: it finishes its attempt and tries to deliver it.
    stale.child.kill('SIGCONT');
    await until(
      'the stale worker to give up its job',
      () => /(Missing lock|Lock mismatch) for job s1\./.test(stale.output().stderr),
      20_000,
      () => stale.output().stderr,
    );
    assertMergedOnce(root, ['s1']);
    assert.equal(git(root, 'rev-parse', 'main'), merged, 'nothing merged after the stale worker came back');
    assert.equal(git(root, 'show', 'main:src/s1/done.txt'), 'done by w2');
    assert.ok(!stale.output().stderr.includes('s1: delivered'), stale.output().stderr);
  });

  it('a worker with --idle-exit stops with exit 0 "(idle)" once nothing has run that long, never during an attempt', async () => {
    const { root, env } = setup([{ id: 'i1' }], 1);
    // An empty queue: it stops after the idle time, not before.
    const started = Date.now();
    const empty = await worker('w1', env, {}, 1, ['--idle-exit', '1']).done;
    assert.equal(empty.code, 0, empty.stderr);
    assert.match(empty.stderr, /worker stopped \(idle\): 0 attempt\(s\) delivered, 0 failed/);
    assert.ok(Date.now() - started >= 1000, `stopped after ${Date.now() - started} ms`);
    // A job waiting: the worker takes it, and an agent that runs past the idle time is not cut short.
    const run = controller(root, env);
    const { Queue } = requireBullmq();
    const queue = new Queue(QUEUE_NAME, { connection: { url: q.redis.url }, prefix: env.LAUNCHPAD_QUEUE_PREFIX! });
    try {
      let waiting = 0;
      for (const end = Date.now() + 30_000; waiting === 0 && Date.now() < end; await new Promise((r) => setTimeout(r, 50)))
        waiting = (await queue.getJobs(['waiting'])).length;
      assert.equal(waiting, 1, 'the job waits for a worker');
    } finally {
      await queue.close();
    }
    const busy = await worker('w2', env, { QUEUE_AGENT_SLEEP: '3' }, 1, ['--idle-exit', '2']).done;
    assert.equal(busy.code, 0, busy.stderr);
    assert.match(busy.stderr, /worker stopped \(idle\): 1 attempt\(s\) delivered, 0 failed/);
    const end = await run.done;
    assert.equal(end.code, 0, `${end.stdout}\n${end.stderr}`);
    assertMergedOnce(root, ['i1']);
  });

  it("a tool's usage limit on a worker is not the task's failure: the attempt is given back and the run stops with exit 7", async () => {
    const { root, env } = setup([{ id: 'l1' }], 1);
    const bin = tempDir('launchpad-fake-bin-');
    installFake(bin, 'claude', { output: T.CLAUDE_USAGE_LIMIT, work: false });
    const withFake = { ...env, PATH: `${bin}:${process.env.PATH}`, FAKE_AGENT_LOG: tempDir('launchpad-fake-log-') };
    worker('w1', withFake);
    const run = startCli(['run', '--agent', 'claude', '--executor', 'queue'], { cwd: root, env: withFake });
    q.rig.procs.push(run);
    const end = await run.done;
    assert.equal(end.code, 7, `${end.stdout}\n${end.stderr}`);
    const task = readTasks(root).tasks.find((t) => t.id === 'l1')!;
    assert.equal(task.status, 'pending');
    assert.equal(task.attempts, 0, 'the attempt was given back');
    assert.deepEqual(task.error_log, []);
    assert.match(end.stdout + end.stderr, /usage limit of claude/);
    assert.ok(!readLog(root).some((l) => / ERROR \[l1\]/.test(l)), readLog(root).join('\n'));
  });

  it("a worker's attempt that changes a protected file fails charged (TEST_FAIL) naming it; nothing merged, its work kept", async () => {
    const { root, env } = setup(
      [{ id: 'p1', validate: 'sh tests/check.sh', maxAttempts: 1 }],
      1,
      { protected_paths: ['tests'] },
      {
        'tests/check.sh': 'grep -qx right src/p1/done.txt\n',
      },
    );
    worker('w1', env);
    const weakens =
      'mkdir -p src/p1 && echo wrong > src/p1/done.txt && echo "exit 0" > tests/check.sh && git add -A && git commit -qm work && echo RESULT:SUCCESS';
    const run = startCli(['run', '--agent', weakens, '--executor', 'queue'], { cwd: root, env });
    q.rig.procs.push(run);
    const end = await run.done;
    assert.equal(end.code, 1, `${end.stdout}\n${end.stderr}`);
    const task = readTasks(root).tasks.find((t) => t.id === 'p1')!;
    assert.equal(task.status, 'failed');
    assert.equal(task.attempts, 1);
    assert.deepEqual(task.error_log, ['[TEST_FAIL] changed protected files: tests/check.sh (protected_paths)']);
    assert.ok(
      readLog(root).some((l) => / VALIDATE \[p1\] .*result=FAIL worker=w1/.test(l)),
      readLog(root).join('\n'),
    );
    assert.equal(git(root, 'rev-list', '--merges', 'main'), '', 'nothing merged');
    assert.equal(git(root, 'show', 'refs/launchpad/attempts/p1/1:tests/check.sh'), 'exit 0');
  });

  it('refuses a remote it cannot reach, before anything is dispatched, its password redacted', () => {
    const { root, env } = setup([{ id: 'r1' }], 1);
    const r = runCli(['run', '--agent', AGENT, '--executor', 'queue', '--remote', 'https://bob:hunter2@127.0.0.1:1/nothing.git'], {
      cwd: root,
      env,
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--remote: cannot reach "https:\/\/bob:\*\*\*@127\.0\.0\.1:1\/nothing\.git"/);
    assert.ok(!r.stderr.includes('hunter2') && !r.stderr.includes(q.redis.password));
    assert.equal(readTasks(root).tasks[0]!.status, 'pending');
    assert.deepEqual(readLog(root), []);
  });
});
