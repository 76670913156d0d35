// The queue's own faults, each on a real repository with real Redis, worker and controller
// processes: none is charged to a task (attempts counted once, at dispatch; no error_log entry),
// none loses the work pushed so far, none leaves two agents on one attempt, and the run never
// waits on a job without a time limit.
import * as assert from 'node:assert/strict';
import { chmodSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Queue } from '../../../src/core/queue/bull';
import { type AttemptJob, type AttemptResult, QUEUE_NAME } from '../../../src/core/queue/job';
import { git } from '../helpers/gitRepo';
import { readLog, readTasks } from '../helpers/harness';
import { tempDir } from '../helpers/tmp';
import { queuePackages, requireBullmq } from './queuePackages';
import { agentPids, attemptRefs, charges, groupAlive, processGroupOf, QueueRig, until } from './queueRig';
import { startRedis } from './redisServer';

type Redis = Awaited<ReturnType<typeof startRedis>>;

describe('queue faults: none is charged, none is waited on forever', function () {
  this.timeout(120_000);
  const rigs: QueueRig[] = [];
  const servers: Redis[] = [];
  before(function () {
    this.timeout(180_000);
    queuePackages();
  });

  async function redisAndRig(opts: { persistent?: boolean } = {}): Promise<{ redis: Redis; rig: QueueRig }> {
    const redis = await startRedis(opts);
    servers.push(redis);
    const rig = new QueueRig(redis);
    rigs.push(rig);
    return { redis, rig };
  }
  afterEach(async () => {
    for (const rig of rigs.splice(0)) rig.killAll();
    for (const redis of servers.splice(0)) await redis.stop();
  });

  /** A pre-receive hook on the remote that holds pushes of the published base while `<gate>/hold` exists. */
  function holdBasePushes(remote: string): { held: () => boolean; release: () => void } {
    const gate = tempDir('launchpad-gate-');
    writeFileSync(join(gate, 'hold'), '');
    const hook = join(remote, 'hooks', 'pre-receive');
    writeFileSync(
      hook,
      [
        '#!/bin/sh',
        'while read old new ref; do',
        '  case "$ref" in refs/launchpad/queue/base/*)',
        `    if [ -f '${gate}/hold' ]; then touch '${gate}/held'; while [ -f '${gate}/hold' ]; do sleep 0.05; done; fi;;`,
        '  esac',
        'done',
        '',
      ].join('\n'),
    );
    chmodSync(hook, 0o755);
    return { held: () => existsSync(join(gate, 'held')), release: () => rmSync(join(gate, 'hold'), { force: true }) };
  }

  function jobsIn(redis: Redis, prefix: string): Queue<AttemptJob, AttemptResult> {
    const { Queue } = requireBullmq();
    return new Queue<AttemptJob, AttemptResult>(QUEUE_NAME, { connection: { url: redis.url }, prefix });
  }

  /** Resolves undefined after `ms`: a deadline to race a process's end against. */
  const within = (ms: number) => new Promise<undefined>((r) => setTimeout(() => r(undefined), ms).unref());
  const task = (root: string, id: string) => readTasks(root).tasks.find((t) => t.id === id)!;

  it('Redis restarted without its data: the vanished jobs are published again, the work pushed so far continues, nothing charged', async () => {
    const { redis, rig } = await redisAndRig();
    const { root, remote, env } = rig.setup([{ id: 'v1' }, { id: 'v2' }], 2);
    const pids = tempDir('launchpad-pids-');
    const agents = { QUEUE_AGENT_SLEEP: '5', QUEUE_AGENT_PIDS: pids };
    rig.worker('w1', env, agents, 1);
    rig.worker('w2', env, agents, 1);
    const run = rig.controller(root, env);
    // Both attempts have pushed part 1 (their checkpoint) when Redis loses everything.
    await until('both partial pushes', () => attemptRefs(remote).filter((r) => r.endsWith('/partial')).length === 2);
    const first = agentPids(pids).map((a) => ({ ...a, pgid: processGroupOf(a.pid)! }));
    assert.equal(first.length, 2);
    await redis.restart();
    // The workers' agents on the vanished jobs end: their locks are gone.
    await until('the first agents to end', () => first.every((a) => !groupAlive(a.pgid)), 15_000);
    const end = await Promise.race([run.done, within(60_000)]);
    assert.ok(end, `the run waited on the vanished jobs:\n${readLog(root).join('\n')}`);
    assert.equal(end.code, 0, `${end.stdout}\n${end.stderr}`);
    rig.assertMergedOnce(root, ['v1', 'v2']);
    assert.deepEqual(charges(root), []);
    const log = readLog(root);
    for (const id of ['v1', 'v2']) {
      const mine = log.filter((l) => l.includes(`[${id}]`));
      assert.ok(
        mine.some((l) => / RECOVERY .*action="published its job again"/.test(l)),
        mine.join('\n'),
      );
      // The same attempt continued from the work pushed before Redis restarted.
      assert.ok(
        mine.some((l) => / AGENT_DONE .*resumed_from=/.test(l)),
        mine.join('\n'),
      );
      assert.match(git(root, 'show', `main:src/${id}/part1.txt`), new RegExp(`^part 1 by ${first.find((a) => a.task === id)!.worker}$`));
    }
    assert.deepEqual(attemptRefs(remote), []);
  });

  it('a controller killed before it published: the restarted one publishes the same attempts, each with a full base commit', async () => {
    const { redis, rig } = await redisAndRig();
    const { root, env } = rig.setup([{ id: 'p1' }, { id: 'p2' }], 2);
    const remote = env.LAUNCHPAD_REMOTE!;
    const gate = holdBasePushes(remote);
    const first = rig.controller(root, env);
    await until('the base push held', gate.held);
    assert.deepEqual(
      readTasks(root).tasks.map((t) => t.status),
      ['in_progress', 'in_progress'],
    );
    first.child.kill('SIGKILL');
    await first.done;
    // A task file whose recorded base is empty (written by hand or by another version).
    const file = readTasks(root);
    file.tasks.find((t) => t.id === 'p2')!.started_at_commit = '';
    writeFileSync(join(root, 'harness-tasks.json'), JSON.stringify(file, null, 2) + '\n');
    gate.release();
    rig.worker('w1', env);
    const end = await rig.controller(root, env).done;
    assert.equal(end.code, 0, `${end.stdout}\n${end.stderr}`);
    rig.assertMergedOnce(root, ['p1', 'p2']);
    assert.deepEqual(charges(root), []);
    const log = readLog(root);
    assert.ok(!log.some((l) => l.includes('started afresh')), log.join('\n'));
    for (const id of ['p1', 'p2'])
      assert.ok(
        log.some((l) => l.includes(`[${id}]`) && l.includes('action="published its job again"')),
        log.join('\n'),
      );
    assert.ok(log.some((l) => / WARN \[p2\] its recorded base commit "" is not a commit/.test(l)));
    const queue = jobsIn(redis, env.LAUNCHPAD_QUEUE_PREFIX!);
    try {
      const jobs = await queue.getJobs(['completed']);
      assert.deepEqual(jobs.map((j) => [j!.data.taskId, /^[0-9a-f]{40}$/.test(j!.data.baseCommit)]).sort(), [
        ['p1', true],
        ['p2', true],
      ]);
    } finally {
      await queue.close();
    }
  });

  it('a worker that loses its lock ends its agent at once; the attempt is merged once, its stale result never pushed', async () => {
    const { rig } = await redisAndRig();
    const { root, remote, env } = rig.setup([{ id: 's1' }], 1);
    const pids = tempDir('launchpad-pids-');
    const stale = rig.worker('w1', env, { QUEUE_AGENT_SLEEP: '30', QUEUE_AGENT_PIDS: pids });
    const run = rig.controller(root, env);
    await until('part 1 pushed by w1', () => attemptRefs(remote).some((r) => r.endsWith('/partial')) && agentPids(pids).length === 1);
    const [agentOfStale] = agentPids(pids);
    const pgid = processGroupOf(agentOfStale!.pid)!;
    // Frozen past its lock: the job goes to w2 while w1's agent goes on.
    stale.child.kill('SIGSTOP');
    rig.worker('w2', env, { QUEUE_AGENT_SLEEP: '0.2', QUEUE_AGENT_PIDS: pids });
    await until('w2 to take the attempt over', () => agentPids(pids).some((a) => a.worker === 'w2'));
    assert.ok(groupAlive(pgid), "w1's agent still runs while w1 is frozen");
    stale.child.kill('SIGCONT');
    await until(
      "w1's agent to end",
      () => !groupAlive(pgid),
      5000,
      () => stale.output().stderr,
    );
    await until(
      'w1 to say why',
      () => /s1\.agent_\w+: lost its lock/.test(stale.output().stderr),
      5000,
      () => stale.output().stderr,
    );
    const end = await run.done;
    assert.equal(end.code, 0, `${end.stdout}\n${end.stderr}`);
    rig.assertMergedOnce(root, ['s1']);
    assert.equal(git(root, 'show', 'main:src/s1/done.txt'), 'done by w2');
    assert.deepEqual(charges(root), []);
    assert.deepEqual(attemptRefs(remote), []);
  });

  it('Redis gone for good: the run stops with exit 2 within the outage allowance, the attempts uncharged and left for the next run', async () => {
    const { redis, rig } = await redisAndRig();
    const { root, env } = rig.setup([{ id: 'g1' }, { id: 'g2' }], 2);
    const pids = tempDir('launchpad-pids-');
    rig.worker('w1', env, { QUEUE_AGENT_SLEEP: '30', QUEUE_AGENT_PIDS: pids });
    const run = rig.controller(root, env, { LAUNCHPAD_QUEUE_OUTAGE_MS: '3000' });
    await until(
      'both attempts on w1',
      () => readTasks(root).tasks.every((t) => t.claimed_by === 'queue:w1') && agentPids(pids).length === 2,
    );
    const agents = agentPids(pids).map((a) => processGroupOf(a.pid)!);
    const killedAt = Date.now();
    await redis.kill();
    // The worker cannot renew its locks: its agents end within the lock's duration.
    await until('the agents to end', () => agents.every((g) => !groupAlive(g)), 8000);
    const end = await Promise.race([run.done, within(20_000)]);
    assert.ok(end, `the run went on without Redis:\n${readLog(root).join('\n')}`);
    assert.equal(end.code, 2, `${end.stdout}\n${end.stderr}`);
    assert.ok(Date.now() - killedAt < 3000 + 10_000, `stopped after ${Date.now() - killedAt} ms`);
    const outcome = JSON.parse(end.stdout) as { message: string };
    assert.match(outcome.message, /the queue at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ has not answered for 3 s/);
    assert.match(outcome.message, /to fix: start Redis again/);
    rig.assertNoSecret(end);
    assert.ok(readLog(root).some((l) => / ERROR \[g\d\] \[ENV_SETUP\] the queue at .* has not answered/.test(l)));
    for (const id of ['g1', 'g2']) assert.equal(task(root, id).status, 'in_progress');
    assert.deepEqual(charges(root), []);
  });

  it('a stop while publishing is blocked on an unreachable Redis ends the run at once', async () => {
    const { redis, rig } = await redisAndRig();
    const { root, env } = rig.setup([{ id: 'b1' }], 1);
    const gate = holdBasePushes(env.LAUNCHPAD_REMOTE!);
    const run = rig.controller(root, env, { LAUNCHPAD_QUEUE_OUTAGE_MS: '120000' });
    await until('the base push held', gate.held);
    await redis.kill();
    gate.release();
    // Its base is on the remote and the attempt recorded as the queue's: the job is being
    // published, to a Redis that is gone. (The ref shows on the remote before the push returns.)
    await until('the base on the remote', () => git(env.LAUNCHPAD_REMOTE!, 'for-each-ref', 'refs/launchpad/queue/base/') !== '');
    await until("the attempt recorded as the queue's", () => task(root, 'b1').claimed_by === 'queue');
    const stoppedAt = Date.now();
    run.child.kill('SIGTERM');
    const end = await Promise.race([run.done, within(15_000)]);
    assert.ok(end, 'SIGTERM did not end the run');
    assert.ok(Date.now() - stoppedAt < 10_000, `stopped after ${Date.now() - stoppedAt} ms\n${end.stderr}\n${readLog(root).join('\n')}`);
    assert.equal(end.code, 1, `${end.stdout}\n${end.stderr}`);
    assert.equal((JSON.parse(end.stdout) as { reason: string }).reason, 'stopped');
    assert.equal(task(root, 'b1').status, 'in_progress');
    assert.deepEqual(charges(root), []);
  });

  it('a worker on the wrong repository gives the job back untouched and exits 2; a healthy worker runs it, nothing charged', async () => {
    const { redis, rig } = await redisAndRig();
    const { root, remote, env } = rig.setup([{ id: 'r1' }], 1);
    // A copy of the same project (a fork, a mirror): it holds the base commit, not what the run published.
    const other = join(tempDir('launchpad-other-'), 'other.git');
    git(root, 'clone', '-q', '--bare', root, other);
    const wrong = rig.worker('w9', { ...env, LAUNCHPAD_REMOTE: other });
    const run = rig.controller(root, env);
    const out = await wrong.done;
    assert.equal(out.code, 2, out.stderr);
    assert.match(out.stderr, /worker: cannot run jobs: the base commit [0-9a-f]{40} of r1 is not published on .*other\.git/);
    assert.match(out.stderr, /to fix: give this worker the run's remote/);
    // Back in the queue as it was: no try counted, no stall.
    const queue = jobsIn(redis, env.LAUNCHPAD_QUEUE_PREFIX!);
    try {
      const [job] = await queue.getJobs(['waiting']);
      assert.ok(job, 'the job waits for another worker');
      assert.deepEqual([job.attemptsMade, (job as { stalledCounter?: number }).stalledCounter], [0, 0]);
    } finally {
      await queue.close();
    }
    rig.worker('w1', env);
    const end = await run.done;
    assert.equal(end.code, 0, `${end.stdout}\n${end.stderr}`);
    rig.assertMergedOnce(root, ['r1']);
    assert.deepEqual(charges(root), []);
    assert.deepEqual(attemptRefs(remote), []);
  });

  it("a job failed on every try for its workers' reasons stops the run uncharged; the next run publishes it again", async () => {
    const { rig } = await redisAndRig();
    const { root, remote, env } = rig.setup([{ id: 'f1' }], 1, { worktree_setup: 'echo "cannot install" >&2; exit 3' });
    rig.worker('w1', env);
    const end = await rig.controller(root, env).done;
    assert.equal(end.code, 2, `${end.stdout}\n${end.stderr}`);
    const outcome = JSON.parse(end.stdout) as { message: string };
    assert.match(
      outcome.message,
      /the queue job f1\.agent_\w+ failed on every try \(3\) on the workers: worktree_setup .* exited with 3: cannot install/,
    );
    assert.match(outcome.message, /to fix: fix what the workers report/);
    assert.equal(task(root, 'f1').status, 'in_progress');
    assert.deepEqual(charges(root), []);
    // Fixed: the same attempt goes on.
    const file = readTasks(root);
    file.session_config.worktree_setup = 'true';
    writeFileSync(join(root, 'harness-tasks.json'), JSON.stringify(file, null, 2) + '\n');
    const again = await rig.controller(root, env).done;
    assert.equal(again.code, 0, `${again.stdout}\n${again.stderr}`);
    rig.assertMergedOnce(root, ['f1']);
    assert.deepEqual(charges(root), []);
    assert.ok(
      readLog(root).some((l) => / RECOVERY \[f1\] action="published its job again" reason="its job .* failed on every try/.test(l)),
    );
    assert.deepEqual(attemptRefs(remote), []);
  });
});
