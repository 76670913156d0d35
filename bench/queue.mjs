// Workers on other machines through the queue (BullMQ on Redis): throughput in tasks per minute
// on a DAG of independent tasks whose agent takes a fixed time, with 1, 2 and 4 queue workers
// (each its own clone, concurrency 1), as a ratio to the single-machine run (local executor,
// max_parallel 1: one agent at a time, as one worker runs them). Information only (no budget):
// the figures feed docs/scale-out.md. Also measured: the controller's ceiling (the same DAG with
// an agent that takes no time, 4 workers: publish, fetch, merge and record per task), and what
// Redis itself sustains for jobs (no-op BullMQ jobs through 4 in-process workers).
//   node bench/run.mjs queue        (needs redis-server on PATH: apt-get install redis-server)
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { CLI, git, GIT_ENV } from './lib/controllerKit.mjs';

export const description = 'queue workers: tasks/min with 1, 2, 4 workers vs one machine; controller ceiling; Redis job rate';

// bullmq and ioredis are optional peers: the tests' copy under .cache, on NODE_PATH for every CLI here.
const require = createRequire(import.meta.url);
const { queuePackages } = require('../out/test/unit/queue/queuePackages.js');
queuePackages();

const TASKS = 16;
const AGENT_S = 1;
const LEASE = { LAUNCHPAD_QUEUE_LOCK_MS: '5000', LAUNCHPAD_QUEUE_STALLED_MS: '5000' };

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function startRedis(dir) {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('redis-server did not start within 10 s')), 10_000);
    child.on('error', (err) =>
      reject(new Error(`redis-server could not start (${err.message}): install it (Debian: apt-get install -y redis-server)`)),
    );
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  child.stdout.resume();
  return { url: `redis://127.0.0.1:${port}`, stop: () => child.kill('SIGKILL') };
}

function writeAgent(dir, seconds) {
  const path = join(dir, `agent-${seconds}.sh`);
  writeFileSync(
    path,
    `#!/bin/sh
set -e
sleep ${seconds}
mkdir -p "work/$LAUNCHPAD_TASK_ID"
echo "work of $LAUNCHPAD_TASK_ID" > "work/$LAUNCHPAD_TASK_ID/done.txt"
git add -A && git commit -q -m "[$LAUNCHPAD_TASK_ID] $LAUNCHPAD_TASK_TITLE"
echo "RESULT:SUCCESS"
`,
  );
  chmodSync(path, 0o755);
  return path;
}

function makeProject(dir, maxParallel) {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Bench');
  git(dir, 'config', 'user.email', 'bench@launchpad.invalid');
  writeFileSync(join(dir, 'README.md'), '# bench\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  const tasks = Array.from({ length: TASKS }, (_, i) => {
    const id = `q${String(i + 1).padStart(2, '0')}`;
    return {
      id,
      title: `Task ${id}`,
      status: 'pending',
      priority: 'P1',
      depends_on: [],
      attempts: 0,
      max_attempts: 3,
      context: `Do ${id}`,
      files_hint: [`work/${id}/`],
      validation: { command: `test -f work/${id}/done.txt`, timeout_seconds: 600 },
      on_failure: { cleanup: null },
      error_log: [],
    };
  });
  const file = { version: 3, session_config: { max_parallel_agents: maxParallel, max_tasks_per_session: 10_000 }, tasks, session_count: 0 };
  writeFileSync(join(dir, 'harness-tasks.json'), JSON.stringify(file, null, 2) + '\n');
  writeFileSync(join(dir, 'harness-progress.txt'), '');
}

function launch(args, cwd, env) {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd,
    // The repository is made here: its commands are approved (docs/trust.md).
    env: { ...process.env, ...GIT_ENV, HARNESS_STATE_ROOT: '', LAUNCHPAD_AGENT: '', LAUNCHPAD_TRUST: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const done = new Promise((resolve) => child.on('close', (code) => resolve({ code, out })));
  return { child, done };
}

/** One run: wall time of `launchpad run` from its start to its exit, all tasks completed. */
async function runOnce(bench, { label, workers, agentS, redis, maxParallel }) {
  const dir = bench.tmp(label);
  const project = join(dir, 'project');
  makeProject(project, maxParallel);
  const agent = writeAgent(dir, agentS);
  const env = { ...LEASE, LAUNCHPAD_QUEUE_PREFIX: label };
  const procs = [];
  let args = ['run', '--agent', agent, '--json', '--worktree-dir', join(dir, 'wt')];
  if (workers) {
    const remote = join(dir, 'remote.git');
    git(dir, 'clone', '-q', '--bare', project, remote);
    for (let i = 0; i < workers; i++) {
      const w = launch(
        ['worker', '--queue', redis.url, '--repo', remote, '--clone', join(dir, `w${i + 1}`, 'clone'), '--id', `w${i + 1}`],
        dir,
        env,
      );
      procs.push(w);
    }
    args = [...args, '--executor', 'queue', '--queue', redis.url, '--remote', remote];
    // Workers connected and cloned before the clock starts (a deployment's pods are up).
    await new Promise((r) => setTimeout(r, 1500));
  }
  const t0 = performance.now();
  const run = launch(args, project, env);
  const r = await run.done;
  const ms = performance.now() - t0;
  for (const p of procs) p.child.kill('SIGTERM');
  await Promise.all(procs.map((p) => p.done));
  if (r.code !== 0) throw new Error(`${label}: launchpad run exited ${r.code}:\n${r.out.slice(-3000)}`);
  return ms;
}

async function redisJobRate(bench, redis) {
  const { Queue, Worker } = require(join(queuePackages(), 'bullmq'));
  const connection = { url: redis.url, maxRetriesPerRequest: null };
  const N = 2000;
  const queue = new Queue('bench-noop', { connection });
  const t0 = performance.now();
  await queue.addBulk(Array.from({ length: N }, (_, i) => ({ name: 'noop', data: { i }, opts: { removeOnComplete: true } })));
  const addMs = performance.now() - t0;
  let done = 0;
  let resolveAll;
  const all = new Promise((r) => (resolveAll = r));
  const t1 = performance.now();
  const workers = Array.from({ length: 4 }, () =>
    new Worker('bench-noop', async () => undefined, { connection, concurrency: 8 }).on('completed', () => {
      if (++done === N) resolveAll();
    }),
  );
  await all;
  const runMs = performance.now() - t1;
  await Promise.all(workers.map((w) => w.close()));
  await queue.close();
  bench.fact('Redis: jobs added (addBulk)', Math.round((N / addMs) * 1000), 'jobs/s');
  bench.fact('Redis: no-op jobs taken and completed (4 workers × concurrency 8)', Math.round((N / runMs) * 1000), 'jobs/s');
}

export default async function queueBench(bench) {
  const redis = await startRedis(bench.tmp('redis'));
  try {
    const tpm = (ms) => (TASKS / ms) * 60_000;
    const single = await runOnce(bench, { label: 'local-p1', workers: 0, agentS: AGENT_S, redis, maxParallel: 1 });
    const base = tpm(single);
    bench.fact(`one machine (local, max_parallel 1), ${TASKS} tasks × ${AGENT_S} s agent`, `${base.toFixed(1)} tasks/min`);
    for (const workers of [1, 2, 4]) {
      const ms = await runOnce(bench, { label: `queue-w${workers}`, workers, agentS: AGENT_S, redis, maxParallel: 4 });
      bench.fact(
        `queue, ${workers} worker${workers > 1 ? 's' : ''} (ratio to one machine)`,
        `${tpm(ms).toFixed(1)} tasks/min (${(tpm(ms) / base).toFixed(2)}×; ideal ${workers}×)`,
      );
    }
    const ceiling = await runOnce(bench, { label: 'queue-w4-zero', workers: 4, agentS: 0, redis, maxParallel: 8 });
    bench.fact(
      'controller ceiling: agent of 0 s, 4 workers (publish, worker round trip, fetch, merge, record)',
      `${tpm(ceiling).toFixed(1)} tasks/min (${(ceiling / TASKS) | 0} ms per task)`,
    );
    await redisJobRate(bench, redis);
  } finally {
    redis.stop();
  }
}
