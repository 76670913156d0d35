// What the queue's tests share: a repository with a bare "shared" remote, worker and controller
// processes (dist/cli.js), waiting on a condition with a deadline, and the checks every test of
// the queue makes at its end (each task merged once, nothing left on the remote, no secret shown).
import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { startCli } from '../helpers/cli';
import { git } from '../helpers/gitRepo';
import { agent, makeHarness, readLog, readTasks, type TaskInput } from '../helpers/harness';
import { tempDir } from '../helpers/tmp';
import { queuePackages } from './queuePackages';
import { type RedisServer, startRedis } from './redisServer';

export const AGENT = agent('queue-agent.sh');
// Short leases: a dead worker's job comes back within about three seconds.
export const LEASE_ENV = { LAUNCHPAD_QUEUE_LOCK_MS: '2000', LAUNCHPAD_QUEUE_STALLED_MS: '1000' };

export type Proc = ReturnType<typeof startCli>;

let n = 0;

export class QueueRig {
  readonly procs: Proc[] = [];

  constructor(private readonly redis: { url: string; password: string }) {}

  setup(tasks: TaskInput[], maxParallel: number, sessionConfig: Record<string, unknown> = {}, files?: Record<string, string>) {
    const root = makeHarness({
      ...(files ? { files } : {}),
      tasks,
      sessionConfig: { max_parallel_agents: maxParallel, max_tasks_per_session: 200, ...sessionConfig },
    });
    const remote = join(tempDir('launchpad-remote-'), 'shared.git');
    git(root, 'clone', '-q', '--bare', root, remote);
    const env: NodeJS.ProcessEnv = {
      ...LEASE_ENV,
      LAUNCHPAD_QUEUE_PREFIX: `t${++n}-${process.pid}`,
      LAUNCHPAD_QUEUE_URL: this.redis.url,
      LAUNCHPAD_REMOTE: remote,
      // The test agents' own variables, beyond the workers' allow-list.
      LAUNCHPAD_WORKER_PASS_ENV: 'QUEUE_AGENT_*,FAKE_AGENT_*',
    };
    return { root, remote, env };
  }

  worker(id: string, env: NodeJS.ProcessEnv, extra: NodeJS.ProcessEnv = {}, concurrency = 2, args: string[] = []): Proc {
    const clone = join(tempDir('launchpad-worker-'), 'clone');
    const p = startCli(['worker', '--clone', clone, '--id', id, '--concurrency', String(concurrency), '-v', ...args], {
      cwd: tempDir('launchpad-wcwd-'),
      env: { ...env, ...extra },
    });
    this.procs.push(p);
    return p;
  }

  controller(root: string, env: NodeJS.ProcessEnv, extra: NodeJS.ProcessEnv = {}): Proc {
    const p = startCli(['run', '--agent', AGENT, '--executor', 'queue', '--json'], { cwd: root, env: { ...env, ...extra } });
    this.procs.push(p);
    return p;
  }

  /** Ends every process a test started that is still running. */
  killAll(): void {
    for (const p of this.procs.splice(0)) {
      if (p.child.exitCode !== null || p.child.signalCode !== null) continue;
      p.child.kill('SIGCONT');
      p.child.kill('SIGKILL');
    }
  }

  /** Every task completed, merged exactly once into main, its work there; no password in the log. */
  assertMergedOnce(root: string, ids: string[]): void {
    const tasks = readTasks(root).tasks;
    assert.deepEqual(
      tasks.filter((t) => t.status !== 'completed').map((t) => `${t.id}:${t.status}`),
      [],
    );
    const merges = git(root, 'log', '--merges', '--format=%s', 'main').split('\n').filter(Boolean);
    for (const id of ids) {
      const mine = merges.filter((m) => m.startsWith(`Merge [${id}] `));
      assert.equal(mine.length, 1, `${id} merged ${mine.length} times: ${mine.join(' | ')}`);
      assert.match(git(root, 'show', `main:src/${id}/done.txt`), /^done by w\d$/);
    }
    const mergeLines = readLog(root).filter((l) => / MERGE /.test(l));
    assert.equal(mergeLines.length, ids.length, 'one MERGE line per task');
    assert.ok(
      !readFileSync(join(root, 'harness-progress.txt'), 'utf8').includes(this.redis.password),
      'the Redis password is not in the log',
    );
  }

  /** The Redis password in no process's output (the URL is shown redacted). */
  assertNoSecret(...outputs: Array<{ stdout: string; stderr: string }>): void {
    for (const o of outputs) {
      assert.ok(
        !o.stdout.includes(this.redis.password) && !o.stderr.includes(this.redis.password),
        `a password in:\n${o.stdout}\n${o.stderr}`,
      );
    }
  }
}

export async function until(what: string, check: () => boolean, ms = 60_000, detail = () => ''): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n${detail()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The attempts' refs on the remote (its published bases left out). */
export function attemptRefs(remote: string): string[] {
  return git(remote, 'for-each-ref', '--format=%(refname)', 'refs/launchpad/queue/')
    .split('\n')
    .filter((r) => r && !r.startsWith('refs/launchpad/queue/base/'));
}

/** Tasks charged: each task's attempts beyond `expected` (1 by default), and every error_log entry. */
export function charges(root: string, expected: Record<string, number> = {}): string[] {
  return readTasks(root).tasks.flatMap((t) => [
    ...(t.attempts !== (expected[t.id] ?? 1) ? [`${t.id}: attempts ${t.attempts}`] : []),
    ...t.error_log.map((e) => `${t.id}: ${e}`),
  ]);
}

/** The pids the agent fixture wrote ($QUEUE_AGENT_PIDS), by file name (<task>-<worker>-<pid>.pid). */
export function agentPids(dir: string): Array<{ task: string; worker: string; pid: number }> {
  return readdirSync(dir).flatMap((f) => {
    const m = /^(.+)-([^-]+)-(\d+)\.pid$/.exec(f);
    return m ? [{ task: m[1]!, worker: m[2]!, pid: Number(m[3]) }] : [];
  });
}

/** The process group of a live process (from /proc), or undefined once it is gone. */
export function processGroupOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return undefined;
  }
}

/** Whether any process of the group still lives (zombies count as ended). */
export function groupAlive(pgid: number): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') return true;
    } catch {
      // Gone while we looked.
    }
  }
  return false;
}

/**
 * A suite's Redis and rig: Redis started (and the queue's packages installed) before its tests,
 * every process a test started killed after it, Redis stopped after them all.
 */
export function useQueueRig(): { readonly rig: QueueRig; readonly redis: RedisServer } {
  const suite = {} as { rig: QueueRig; redis: RedisServer };
  before(async function () {
    this.timeout(180_000);
    queuePackages();
    suite.redis = await startRedis();
    suite.rig = new QueueRig(suite.redis);
  });
  afterEach(() => suite.rig?.killAll());
  after(async () => {
    await suite.redis?.stop();
  });
  return suite;
}
