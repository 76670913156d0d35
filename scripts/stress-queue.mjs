// Opt-in stress of the queue's faults (npm run stress:queue [-- TRIALS [SCENARIO…]]): per trial, a
// 4-task run on two workers (dist/cli.js run --executor queue, dist/cli.js worker; a Redis of its
// own; short leases; w1's agents work 12 s, w2's 1.5 s) and one fault, while an agent of w1 runs:
//   redis-restart-kept   Redis killed (SIGKILL) and restarted with its data (AOF, fsync every second)
//   redis-restart-empty  Redis killed and restarted without its data
//   worker-kill          a worker killed (SIGKILL) while its agent runs
//   controller-kill      the controller killed (SIGKILL) at a random moment, twice, then run again
//   worker-stop          a worker stopped (SIGSTOP) past its lock while its agent runs, then continued
//   wrong-repo           a worker on another repository takes the first job, beside two healthy ones
// Each trial checks: no task charged for a fault (attempts == the agents whose verdict was
// accepted; no error_log entry), none merged twice, none lost (every task merged), no two agents of
// one attempt alive together for more than 3 s outside a worker's stop, none alive 3 s after its
// worker was killed or continued, none left at the end, and no attempt's ref left on the remote.
// Prints the counts per scenario; exits 1 on any violation.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const CLI = resolve('dist/cli.js');
// bullmq and ioredis are optional peers: the tests' copy under .cache, on NODE_PATH for every CLI here.
createRequire(import.meta.url)('../out/test/unit/queue/queuePackages.js').queuePackages();
const AGENT = resolve('test/fixtures/agents/queue-agent.sh');
const SCENARIOS = ['redis-restart-kept', 'redis-restart-empty', 'worker-kill', 'controller-kill', 'worker-stop', 'wrong-repo'];
const trials = Number(process.argv[2] ?? 5);
const only = process.argv.slice(3);
const LOCK_MS = 2000;
const LEASE = { LAUNCHPAD_QUEUE_LOCK_MS: String(LOCK_MS), LAUNCHPAD_QUEUE_STALLED_MS: '1000', LAUNCHPAD_QUEUE_OUTAGE_MS: '30000' };
const TASKS = ['q1', 'q2', 'q3', 'q4'];
const OVERLAP_LIMIT_MS = 3000;
/** w1's agents: long enough that a fault finds them with work left. */
const SLOW = { QUEUE_AGENT_SLEEP: '12' };
const TRIAL_LIMIT_MS = 150_000;

const git = (cwd, ...args) => execFileSync('git', args, { cwd, encoding: 'utf8' });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const tmp = (prefix) => mkdtempSync(join(tmpdir(), prefix));

/** redis-server from the PATH, else the one the queue tests unpack under .cache/redis. */
function redisBinary() {
  if (spawnSync('sh', ['-c', 'command -v redis-server']).status === 0) return { command: 'redis-server', env: process.env };
  const root = resolve('.cache/redis/root');
  const command = join(root, 'usr/bin/redis-server');
  if (!existsSync(command)) {
    console.error('redis-server not found: install it, or run the queue tests once (they unpack it under .cache/redis)');
    process.exit(2);
  }
  const libs = readdirSync(join(root, 'usr/lib'))
    .filter((d) => d.endsWith('-gnu'))
    .map((d) => join(root, 'usr/lib', d));
  return { command, env: { ...process.env, LD_LIBRARY_PATH: [...libs, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':') } };
}
const REDIS = redisBinary();

function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
  });
}

async function startRedis(kept) {
  const port = await freePort();
  const dir = tmp('lp-sq-redis-');
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir];
  args.push(...(kept ? ['--appendonly', 'yes', '--appendfsync', 'everysec'] : ['--appendonly', 'no']));
  let child;
  const start = async () => {
    child = spawn(REDIS.command, args, { env: REDIS.env, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    await new Promise((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`redis-server did not start:\n${out}`)), 10_000);
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          res();
        }
      });
    });
    child.stdout.resume();
  };
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, dir, kill, restart: async () => (await kill(), await start()) };
}

function makeRepo(name = 'stress') {
  const dir = tmp('lp-sq-');
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.email', 'stress@example.com');
  git(dir, 'config', 'user.name', 'stress');
  writeFileSync(join(dir, 'README.md'), `# ${name}\n`);
  const tasks = TASKS.map((id) => ({
    id,
    title: `Task ${id}`,
    status: 'pending',
    depends_on: [],
    files_hint: [`src/${id}/`],
    validation: { command: `test -f src/${id}/done.txt` },
  }));
  const config = { max_parallel_agents: 4, retry_backoff_seconds: 0 };
  writeFileSync(join(dir, 'harness-tasks.json'), JSON.stringify({ version: 3, session_config: config, tasks }, null, 2));
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'init');
  const remote = join(tmp('lp-sq-remote-'), 'shared.git');
  git(dir, 'clone', '-q', '--bare', dir, remote);
  return { root: dir, remote };
}

/** A dist/cli.js process: its exit, and the end of what it printed. */
function cli(args, cwd, env) {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (d) => (out = (out + d).slice(-6000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((r) => child.on('exit', (code, signal) => r(code ?? signal)));
  return { child, exited, output: () => out, stopped: false };
}

/** Agents the fixture recorded ($QUEUE_AGENT_PIDS/<task>-<worker>-<pid>.pid), with their process group while alive. */
function agents(dir) {
  return readdirSync(dir).flatMap((f) => {
    const m = /^(.+)-([^-]+)-(\d+)\.pid$/.exec(f);
    return m ? [{ task: m[1], worker: m[2], pid: Number(m[3]) }] : [];
  });
}

function statOf(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { state: f[0], pgid: Number(f[2]) };
  } catch {
    return undefined;
  }
}

/** Whether any live (not zombie) process is in the group. */
function groupAlive(pgid) {
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const s = statOf(Number(e));
    if (s && s.pgid === pgid && s.state !== 'Z') return true;
  }
  return false;
}

/** Samples the agents every 100 ms: the longest time two agents of one task were alive together, outside `exempt()`. */
function overlapSampler(dir, exempt) {
  const groups = new Map();
  const since = new Map();
  let worst = { ms: 0, task: '' };
  const timer = setInterval(() => {
    const live = new Map();
    for (const a of agents(dir)) {
      if (!groups.has(a.pid)) groups.set(a.pid, statOf(a.pid)?.pgid);
      const g = groups.get(a.pid);
      if (g !== undefined && groupAlive(g)) live.set(a.task, (live.get(a.task) ?? 0) + 1);
    }
    const now = Date.now();
    for (const task of TASKS) {
      if ((live.get(task) ?? 0) > 1 && !exempt()) {
        if (!since.has(task)) since.set(task, now);
        const ms = now - since.get(task);
        if (ms > worst.ms) worst = { ms, task };
      } else since.delete(task);
    }
  }, 100);
  return {
    stop: () => clearInterval(timer),
    worst: () => worst,
    groupsOf: (pred) =>
      agents(dir)
        .filter(pred)
        .map((a) => groups.get(a.pid) ?? statOf(a.pid)?.pgid)
        .filter((g) => g !== undefined),
    anyAlive: () => [...groups.values()].some((g) => g !== undefined && groupAlive(g)),
  };
}

async function until(check, ms, step = 50) {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) return false;
    await sleep(step);
  }
  return true;
}

async function deadWithin(groups, ms) {
  return until(() => groups.every((g) => !groupAlive(g)), ms);
}

async function trial(scenario, n) {
  const violations = [];
  const { root, remote } = makeRepo();
  const redis = await startRedis(scenario === 'redis-restart-kept');
  const pids = tmp('lp-sq-pids-');
  const env = {
    ...process.env,
    ...LEASE,
    HARNESS_STATE_ROOT: '',
    LAUNCHPAD_AGENT: '',
    // The repository is made here: its commands are approved (docs/trust.md).
    LAUNCHPAD_TRUST: '1',
    LAUNCHPAD_QUEUE_URL: redis.url,
    LAUNCHPAD_REMOTE: remote,
    LAUNCHPAD_QUEUE_PREFIX: `sq${n}`,
    QUEUE_AGENT_SLEEP: '1.5',
    QUEUE_AGENT_PIDS: pids,
    // The fixture agent's own variables, beyond the workers' allow-list.
    LAUNCHPAD_WORKER_PASS_ENV: 'QUEUE_AGENT_*',
  };
  const cloneRoot = tmp('lp-sq-workers-');
  const workers = new Map();
  const worker = (id, extra = {}) => {
    const w = cli(['worker', '--id', id, '--clone', join(cloneRoot, id), '--concurrency', '2'], cloneRoot, { ...env, ...extra });
    workers.set(id, w);
    return w;
  };
  const controller = () => cli(['run', '--agent', AGENT, '--executor', 'queue', '--max-parallel', '4'], root, env);
  let frozen = false;
  const sampler = overlapSampler(pids, () => frozen);
  const started = Date.now();
  const ran = async () => {
    let run;
    /** w1 (whose agents work longest: a fault finds them with work left), some time into its first agent. */
    const busyWorker = async () => {
      await until(() => agents(pids).some((a) => a.worker === 'w1'), 30_000);
      await sleep(Math.random() * 1000);
      return 'w1';
    };
    if (scenario === 'wrong-repo') {
      const other = makeRepo('another project');
      const wrong = cli(['worker', '--id', 'w9', '--clone', join(cloneRoot, 'w9')], cloneRoot, { ...env, LAUNCHPAD_REMOTE: other.remote });
      run = controller();
      const code = await Promise.race([wrong.exited, sleep(30_000).then(() => 'running')]);
      if (code !== 2) violations.push(`the worker on the wrong repository ended with ${code}, not 2: ${wrong.output().slice(-300)}`);
      if (code === 'running') wrong.child.kill('SIGKILL');
      worker('w1', SLOW);
      worker('w2');
    } else {
      worker('w1', SLOW);
      worker('w2');
      run = controller();
    }
    if (scenario === 'redis-restart-kept' || scenario === 'redis-restart-empty') {
      await busyWorker();
      const groups = sampler.groupsOf(() => true).filter(groupAlive);
      await redis.restart();
      // Without its data, every job in flight vanished: its agent ends within the lock's duration.
      if (scenario === 'redis-restart-empty' && !(await deadWithin(groups, LOCK_MS + 3000)))
        violations.push(`an agent ran on ${LOCK_MS + 3000} ms after Redis lost its job`);
    } else if (scenario === 'worker-kill') {
      const id = await busyWorker();
      if (id) {
        const groups = sampler.groupsOf((a) => a.worker === id);
        workers.get(id).child.kill('SIGKILL');
        if (!(await deadWithin(groups, 3000))) violations.push(`an agent of ${id} outlived it by 3 s`);
      }
    } else if (scenario === 'worker-stop') {
      const id = await busyWorker();
      if (id) {
        const w = workers.get(id);
        frozen = true;
        w.child.kill('SIGSTOP');
        await sleep(LOCK_MS * 2 + 1000);
        const groups = sampler.groupsOf((a) => a.worker === id);
        w.child.kill('SIGCONT');
        const lost = await deadWithin(groups, 3000);
        frozen = false;
        if (!lost) violations.push(`an agent of ${id} ran on 3 s after ${id} was continued past its lock`);
      }
    } else if (scenario === 'controller-kill') {
      // The first kill as soon as an attempt is dispatched (before its job is published, often),
      // the second at any moment later.
      const progress = join(root, 'harness-progress.txt');
      for (const later of [false, true]) {
        if (later) await Promise.race([run.exited, sleep(500 + Math.random() * 6000)]);
        else await until(() => existsSync(progress) && readFileSync(progress, 'utf8').includes(' DISPATCH ['), 30_000, 5);
        run.child.kill('SIGKILL');
        await run.exited;
        run = controller();
      }
    }
    const code = await Promise.race([run.exited, sleep(90_000).then(() => 'timed out')]);
    if (code === 'timed out') run.child.kill('SIGKILL');
    if (code !== 0) violations.push(`the run ended with ${code}: ${run.output().slice(-600)}`);
  };
  await Promise.race([ran(), sleep(TRIAL_LIMIT_MS).then(() => violations.push('the trial took too long'))]);
  // The end: every worker stops (SIGTERM) and gives back what it holds.
  for (const w of workers.values()) w.child.kill('SIGCONT');
  for (const w of workers.values()) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGTERM');
  for (const [id, w] of workers) {
    const code = await Promise.race([w.exited, sleep(20_000).then(() => 'running')]);
    if (code === 'running') {
      violations.push(`worker ${id} did not stop within 20 s of SIGTERM`);
      w.child.kill('SIGKILL');
    }
  }
  if (!(await until(() => !sampler.anyAlive(), 5000))) violations.push('an agent still runs after its workers stopped');
  sampler.stop();
  const worst = sampler.worst();
  if (worst.ms > OVERLAP_LIMIT_MS) violations.push(`two agents of ${worst.task} ran together for ${worst.ms} ms`);
  await redis.kill();

  // The state: none charged, merged twice or lost; nothing left on the remote.
  const file = JSON.parse(readFileSync(join(root, 'harness-tasks.json'), 'utf8'));
  const log = readFileSync(join(root, 'harness-progress.txt'), 'utf8').split('\n');
  const counts = { charged: 0, mergedTwice: 0, lost: 0, refsLeft: 0 };
  const merges = git(root, 'log', '--merges', '--format=%s', 'main').split('\n').filter(Boolean);
  for (const t of file.tasks) {
    const verdicts = new Set(log.flatMap((l) => (l.includes(` AGENT_DONE [${t.id}] `) ? [/agent=(\S+)/.exec(l)?.[1]] : [])));
    if (t.attempts !== verdicts.size || t.error_log.length) {
      counts.charged++;
      violations.push(`${t.id} charged: attempts ${t.attempts}, agent verdicts ${verdicts.size}, error_log ${JSON.stringify(t.error_log)}`);
    }
    const mine = merges.filter((m) => m.startsWith(`Merge [${t.id}] `)).length;
    if (mine > 1) {
      counts.mergedTwice++;
      violations.push(`${t.id} merged ${mine} times`);
    }
    if (t.status !== 'completed' || mine === 0) {
      counts.lost++;
      violations.push(`${t.id} not merged (${t.status})`);
    }
  }
  const refs = git(remote, 'for-each-ref', '--format=%(refname)', 'refs/launchpad/queue/')
    .split('\n')
    .filter((r) => r && !r.startsWith('refs/launchpad/queue/base/'));
  if (refs.length) {
    counts.refsLeft = refs.length;
    violations.push(`refs left on the remote: ${refs.join(', ')}`);
  }
  const ms = Date.now() - started;
  if (violations.length) {
    console.log(`  ${scenario} #${n}: ${violations.length} violation(s) in ${(ms / 1000).toFixed(1)} s; kept ${root} ${remote}`);
    for (const v of violations) console.log(`    - ${v}`);
  } else {
    for (const dir of [root, join(remote, '..'), pids, cloneRoot, redis.dir]) rmSync(dir, { recursive: true, force: true });
  }
  return { violations: violations.length, ms, ...counts };
}

const began = Date.now();
let total = 0;
const summary = [];
let n = 0;
for (const scenario of SCENARIOS.filter((s) => !only.length || only.includes(s))) {
  const s = { scenario, trials: 0, violations: 0, failedTrials: 0, charged: 0, mergedTwice: 0, lost: 0, refsLeft: 0, ms: 0 };
  for (let t = 1; t <= trials; t++) {
    const r = await trial(scenario, ++n);
    s.trials++;
    s.violations += r.violations;
    s.failedTrials += r.violations ? 1 : 0;
    for (const k of ['charged', 'mergedTwice', 'lost', 'refsLeft']) s[k] += r[k];
    s.ms += r.ms;
  }
  total += s.violations;
  summary.push(s);
  console.log(
    `${scenario}: ${s.trials} trials, ${s.failedTrials} with violations (${s.violations}): charged ${s.charged}, merged twice ${s.mergedTwice}, lost ${s.lost}, refs left ${s.refsLeft}; ${(s.ms / s.trials / 1000).toFixed(1)} s a trial`,
  );
}
const minutes = ((Date.now() - began) / 60000).toFixed(1);
console.log(`${summary.reduce((a, s) => a + s.trials, 0)} trials in ${minutes} min: ${total} violation(s)`);
process.exit(total ? 1 : 0);
