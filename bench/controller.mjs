// Controller overhead per task (budget: ≤ 1.5× the same git commands run by hand), and
// how it grows with the task file: the CLI's wall time for one more task in a run (runs of N and
// of 3N tasks in files of the same size, their difference over 2N) in a file of their own and
// after a history that makes the file 5,000 tasks (gen.mjs generateHistory: 3.6 MiB, a backlog
// every pass walks): ≤ 1.2× at 5,000 tasks, the runs alternated with each other and the peer.
//
// Ours: `launchpad run --max-parallel 1` on a generated repository of 300 files with N independent
// tasks, a no-op agent (one file, one commit) and `true` as every task's validation. Per task:
//   (run wall time − agent time − validation time − session start/end) / N
// where agent time = what the agent script measures of itself ($EPOCHREALTIME around its commit)
// + the cost of starting a bash script through /bin/sh -c from node; validation time = the cost
// of `/bin/sh -c true` from node; session start/end = a second `launchpad run` on the same
// repository once every task is completed (node start, git checks, lock, recovery, STATS).
// Peer: on a copy of the same repository, per task, each timed from node as a child process:
//   git worktree add -b harness-<id> -- <path> HEAD, git merge --no-ff -m "Merge [<id>] …",
//   git worktree remove -- <path>, git branch -d -- harness-<id>
// with the agent's commit (write a file, git add -A, git commit) done in between, not timed.
// The two are run alternately. The same figures in CPU time (the whole process tree's, from
// wait4 rusage; the agent's from bash's `times`) are shown beside them: on a shared machine they
// move much less than wall time. bench/README.md has the full accounting.
//
// Then one profiling run (not timed): git's trace2 (GIT_TRACE2_EVENT) for every git command the
// controller runs per task and git's own time for it, inotify counts of state transactions (the
// state lock's mkdir) and saves (.tmp created), the log lines per task, and in-process timings of
// a transaction and a log append, to show where a task's overhead goes.
import { chmodSync, copyFileSync, mkdirSync, readFileSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import {
  agentTimes,
  copyRepo,
  git,
  GIT_ENV,
  makeRepo,
  runLaunchpad,
  spawnFloor,
  timedSpawn,
  writeAgent,
  writeTasks,
} from './lib/controllerKit.mjs';
import { generateHistory } from './lib/gen.mjs';

export const description =
  'controller overhead per task (agent, validation, session start/end excluded) vs the same git commands by hand (≤ 1.5×)';

const FILES = 300;
const SEED = 11;
const BUDGET = 1.5;
const BIG = 5_000;
const GROWTH_BUDGET = 1.2;

export default async function run(bench) {
  const N = bench.reps(10);
  const reps = bench.reps(9);
  const work = bench.tmp('controller');
  const base = makeRepo(join(work, 'base'), { files: FILES, rng: bench.rng(SEED) });
  const agent = writeAgent(work);
  const ids = taskIds(N);
  // The history, with what a run's first pass would mark (tasks behind [DEPENDENCY] failures)
  // already marked, so both runs of a rep see the same steady file.
  const { markDependencyFailures } = bench.core('tasks/transitions');
  const rawHistory = generateHistory(BIG - N, { seed: SEED });
  markDependencyFailures({ tasks: rawHistory }, '2025-07-09T12:00:00Z');

  // What starting the agent and the validation costs at the least, seen from node.
  const noop = join(work, 'noop.sh');
  writeFileSync(noop, '#!/bin/bash\n:\n');
  chmodSync(noop, 0o755);
  const agentStart = await spawnFloor('/bin/sh', ['-c', noop], { cwd: base });
  const validation = await spawnFloor('/bin/sh', ['-c', 'true'], { cwd: base });
  const gitStart = await spawnFloor('git', ['--version'], { cwd: base });
  gitStart.rss = process.memoryUsage().rss / 1048576;
  bench.fact(
    'set-up',
    `${FILES}-file repository, ${N} independent tasks, max_parallel 1, ${reps} reps (+1 warm-up) of each side, run alternately`,
  );
  bench.fact(
    'excluded per task',
    `agent start (sh -c → bash, no-op) ${agentStart.ms.toFixed(1)} ms / ${agentStart.cpuMs.toFixed(1)} ms cpu + the agent's own time (it measures itself); ` +
      `validation (sh -c true) ${validation.ms.toFixed(1)} ms / ${validation.cpuMs.toFixed(1)} ms cpu`,
  );

  let rep = 0;
  const detail = { 0: [], [BIG]: [] };
  /**
   * One run of `count` tasks in a file of `size` tasks (their own file when 0): its time beyond
   * the agents and validations; with `empty`, per task, less a second run once all are completed
   * (session start and end).
   */
  const ours = async (size = 0, count = N, empty = true) => {
    const k = rep++;
    const dir = copyRepo(base, join(work, `ours-${k}`));
    const times = join(work, `ours-${k}-times`);
    mkdirSync(times);
    const runIds = count === N ? ids : taskIds(count);
    writeTasks(
      dir,
      runIds.map((id) => ({ id })),
      {},
      size ? rawHistory.slice(0, size - count) : [],
    );
    const opts = { agent, maxParallel: 1, worktreeDir: join(work, `ours-${k}-wt`), env: { BENCH_TIMES: times }, workLeft: size > 0 };
    const full = await runLaunchpad(dir, opts);
    const merged = git(dir, 'log', '--first-parent', '--format=%s')
      .split('\n')
      .filter((s) => s.startsWith('Merge [')).length;
    if (merged !== count) throw new Error(`expected ${count} merges, found ${merged} in ${dir}`);
    const agents = [...agentTimes(times, runIds, (p) => readFileSync(p, 'utf8')).values()];
    const agentMs = agents.reduce((a, b) => a + b.ms, 0) + count * agentStart.ms;
    const agentCpu = agents.reduce((a, b) => a + b.cpuMs, 0) + count * agentStart.cpuMs;
    // What the run spent beyond its agents and validations.
    const run = { wall: full.ms - agentMs - count * validation.ms, cpu: full.cpuMs - agentCpu - count * validation.cpuMs };
    if (!empty) return { run };
    const e = await runLaunchpad(dir, opts);
    const wall = (run.wall - e.ms) / N;
    const cpu = (run.cpu - e.cpuMs) / N;
    detail[size].push({
      full: full.ms,
      empty: e.ms,
      agent: agentMs / N,
      wall,
      cpu,
      fullCpu: full.cpuMs,
      emptyCpu: e.cpuMs,
    });
    return { wall, cpu, run };
  };
  /**
   * What one more task costs a run in a file of `size` tasks: runs of N and of 3N tasks in files
   * of the same size, their difference over 2N. What a session pays once whatever its number of
   * tasks (compiling the task's code paths, the heap's first growth) cancels out, as the empty run
   * above cannot: it starts no task.
   */
  const marginal = (small, large) => {
    const per = (key) => (large.run[key] - small.run[key]) / (2 * N);
    return { wall: per('wall'), cpu: per('cpu') };
  };

  // The peer, twice on fresh copies: wall time spawned from node; CPU time under the rusage parent.
  const peer = async (cpu) => {
    const k = rep++;
    const dir = copyRepo(base, join(work, `peer-${k}`));
    const wt = join(work, `peer-${k}-wt`);
    let total = 0;
    const g = (cwd, args, timed) =>
      timedSpawn('git', args, { cwd, env: GIT_ENV, cpu: timed && cpu }).then((r) => {
        if (r.code !== 0) throw new Error(`git ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
        if (timed) total += cpu ? r.cpuMs : r.ms;
      });
    for (const id of ids) {
      const path = join(wt, id);
      await g(dir, ['worktree', 'add', '-b', `harness-${id}`, '--', path, 'HEAD'], true);
      // The agent's own commit: done, not counted (it is excluded from ours too).
      mkdirSync(join(path, 'work', id), { recursive: true });
      writeFileSync(join(path, 'work', id, 'done.txt'), `work of ${id}\n`);
      await g(path, ['add', '-A'], false);
      await g(path, ['commit', '-q', '-m', `[${id}] Task ${id}`], false);
      await g(dir, ['merge', '--no-ff', '--no-edit', '-m', `Merge [${id}] Task ${id}`, `harness-${id}`], true);
      await g(dir, ['worktree', 'remove', '--', path], true);
      await g(dir, ['branch', '-d', '--', `harness-${id}`], true);
    }
    return total / N;
  };

  const oursWall = [];
  const oursCpu = [];
  const bigWall = [];
  const bigCpu = [];
  const peerWall = [];
  const peerCpu = [];
  const growthOf = { 0: [], [BIG]: [] };
  for (let i = 0; i < reps + 1; i++) {
    const o = await ours();
    const b = await ours(BIG);
    const o3 = await ours(0, 3 * N, false);
    const b3 = await ours(BIG, 3 * N, false);
    const pw = await peer(false);
    const pc = await peer(true);
    if (i === 0) continue;
    oursWall.push(o.wall);
    oursCpu.push(o.cpu);
    bigWall.push(b.wall);
    bigCpu.push(b.cpu);
    growthOf[0].push(marginal(o, o3));
    growthOf[BIG].push(marginal(b, b3));
    peerWall.push(pw);
    peerCpu.push(pc);
  }
  const mkPair = (a, b) => {
    const o = bench.summarize(a);
    const p = bench.summarize(b);
    return {
      ours: o,
      peer: p,
      ratio: o.median / p.median,
      pairRatios: bench.summarize(a.map((x, i) => x / b[i])),
      oursValue: o.median,
      peerValue: p.median,
    };
  };
  const wallPair = mkPair(oursWall, peerWall);
  const cpuPair = mkPair(oursCpu, peerCpu);
  // The driver's convention: CPU figures ride along with the wall-time ones (OVER* when only the
  // wall time is over budget).
  wallPair.ours.cpu = cpuPair.ours;
  wallPair.peer.cpu = cpuPair.peer;
  wallPair.cpuRatio = cpuPair.ratio;
  for (const size of [0, BIG]) {
    const d = detail[size].slice(1);
    const med = (f) => bench.summarize(d.map(f)).median;
    bench.fact(
      `ours, ${size ? `${size}-task file` : `${N}-task file`}, per rep (median)`,
      `run ${med((x) => x.full).toFixed(0)} ms (${med((x) => x.fullCpu).toFixed(0)} ms cpu) for ${N} tasks; session start/end ${med((x) => x.empty).toFixed(0)} ms ` +
        `(${med((x) => x.emptyCpu).toFixed(0)} ms cpu); agent ${med((x) => x.agent).toFixed(1)} ms/task; overhead ${med((x) => x.wall).toFixed(1)} ms/task, ${med((x) => x.cpu).toFixed(1)} ms cpu/task`,
    );
  }
  bench.fact(
    'peer, per task (median)',
    `${wallPair.peer.median.toFixed(1)} ms, ${cpuPair.peer.median.toFixed(1)} ms cpu for worktree add + merge --no-ff + worktree remove + branch -d`,
  );
  bench.checkRatio(`overhead per task (${FILES}-file repo, ${N}-task file, max_parallel 1)`, wallPair, {
    budget: BUDGET,
    peerName: 'git by hand',
  });
  const growthIn = (key) =>
    mkPair(
      growthOf[BIG].map((x) => x[key]),
      growthOf[0].map((x) => x[key]),
    );
  const growth = growthIn('wall');
  const growthCpu = growthIn('cpu');
  growth.ours.cpu = growthCpu.ours;
  growth.peer.cpu = growthCpu.peer;
  growth.cpuRatio = growthCpu.ratio;
  const each = (key) => growthOf[0].map((x, i) => `${x[key].toFixed(0)}/${growthOf[BIG][i][key].toFixed(0)}`).join(' ');
  bench.fact(`one more task, the CLI's wall time, each rep (${N}-task file / ${BIG}-task file, ms)`, each('wall'));
  bench.fact(
    `one more task, the CLI's wall time (median)`,
    `${growth.peer.median.toFixed(1)} ms in the ${N}-task file, ${growth.ours.median.toFixed(1)} ms in the ${BIG}-task file`,
  );
  bench.checkRatio(`one more task in a ${BIG}-task file, the CLI's wall time (runs of ${N} and ${3 * N} tasks)`, growth, {
    budget: GROWTH_BUDGET,
    peerName: `${N}-task file`,
  });
  bench.fact(
    `per task as (a run of ${N} − an empty run) / ${N}, each rep (${N}-task file / ${BIG}-task file, ms)`,
    oursWall.map((x, i) => `${x.toFixed(0)}/${bigWall[i].toFixed(0)}`).join(' '),
  );
  bench.checkRatio(`  the same as (a run of ${N} − an empty run) / ${N}, with the session's one-off costs`, mkPair(bigWall, oursWall), {
    peerName: `${N}-task file`,
  });
  bench.checkRatio(`  vs git by hand`, mkPair(bigWall, peerWall), { peerName: 'git by hand' });

  await profile(bench, {
    base,
    work,
    agent,
    ids,
    agentStart,
    validation,
    gitStartMs: gitStart.ms,
    peerPerTask: wallPair.peer.median,
  });
  await forkCost(bench, { work, ids, history: rawHistory, gitStart });
}

/**
 * Starting a process costs more from a bigger process (libuv forks, and a fork copies the page
 * tables of everything the process has touched): `git --version` from this process, then again
 * after it has done what a controller does with the 5,000-task file (its parse kept, 40
 * transactions), and the resident memory each time.
 */
async function forkCost(bench, { work, ids, history, gitStart }) {
  const { StateStore } = bench.core('taskFile/store');
  const { StatePaths } = bench.core('statePaths');
  const dir = join(work, 'fork-cost');
  mkdirSync(dir);
  writeTasks(
    dir,
    ids.map((id) => ({ id })),
    {},
    history,
  );
  const rss = () => process.memoryUsage().rss / 1048576;
  const store = new StateStore(new StatePaths(dir), 'launchpad bench');
  // As the session's transactions do: the unchanged tasks shared with the store's parse.
  for (let i = 0; i < 40; i++) await store.transact((f) => void (f.session_count = i), { sharedTasks: true });
  const after = await spawnFloor('git', ['--version'], { cwd: dir });
  bench.fact(
    'starting a process, small vs holding a 5,000-task file',
    `git --version ${gitStart.ms.toFixed(1)} ms at ${gitStart.rss.toFixed(0)} MB resident; ` +
      `${after.ms.toFixed(1)} ms after 40 transactions on the 5,000-task file, at ${rss().toFixed(0)} MB`,
  );

  // What a controller pays: a command, then a transaction (which writes the memory the fork
  // write-protected, so each page faults once).
  const { runProcess } = bench.core('process/runProcess');
  const rounds = [];
  let n = 0;
  for (let round = 0; round < 4; round++) {
    await runProcess({ command: { file: 'git', args: ['--version'] }, cwd: dir });
    const cpu = process.cpuUsage();
    const t = performance.now();
    for (let i = 0; i < 10; i++) {
      await runProcess({ command: { file: 'git', args: ['--version'] }, cwd: dir });
      await store.transact((f) => void (f.session_count = n++), { sharedTasks: true });
    }
    const used = process.cpuUsage(cpu);
    if (round > 0) rounds.push({ ms: (performance.now() - t) / 10, cpu: (used.user + used.system) / 10000, sys: used.system / 10000 });
  }
  const med = (f) => bench.summarize(rounds.map(f)).median.toFixed(1);
  bench.fact(
    'a git command and a transaction, holding the 5,000-task file',
    `${med((x) => x.ms)} ms (this process's CPU ${med((x) => x.cpu)} ms, ${med((x) => x.sys)} ms of it in the kernel)`,
  );
}

function taskIds(n) {
  return Array.from({ length: n }, (_, i) => `task-${String(i + 1).padStart(3, '0')}`);
}

/** One traced run: where the controller's time per task goes. */
async function profile(bench, { base, work, agent, ids, agentStart, validation, gitStartMs, peerPerTask }) {
  const N = ids.length;
  const dir = copyRepo(base, join(work, 'profile'));
  const times = join(work, 'profile-times');
  mkdirSync(times);
  mkdirSync(join(dir, '.launchpad'));
  writeTasks(
    dir,
    ids.map((id) => ({ id })),
  );
  const trace = join(work, 'profile.trace2.json');

  let saves = 0;
  let transactions = 0;
  const w1 = watch(dir, (e, name) => e === 'rename' && name === 'harness-tasks.json.tmp' && saves++);
  const w2 = watch(join(dir, '.launchpad'), (e, name) => e === 'rename' && name === 'state.lock' && transactions++);
  const opts = { agent, maxParallel: 1, worktreeDir: join(work, 'profile-wt'), env: { BENCH_TIMES: times, GIT_TRACE2_EVENT: trace } };
  const full = await runLaunchpad(dir, opts);
  w1.close();
  w2.close();
  const empty = await runLaunchpad(dir, { ...opts, env: { BENCH_TIMES: times } });
  const own = [...agentTimes(times, ids, (p) => readFileSync(p, 'utf8')).values()].reduce((a, b) => a + b.ms, 0);
  const overhead = (full.ms - empty.ms - own - N * (agentStart.ms + validation.ms)) / N;
  // Each save creates .tmp and renames it away; each transaction makes and removes the lock dir.
  saves /= 2;
  transactions /= 2;

  // Top-level git processes (a child of git has a sid with '/'), in start order.
  const procs = new Map();
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    if (!line) continue;
    const e = JSON.parse(line);
    if (e.sid.includes('/')) continue;
    if (e.event === 'start') procs.set(e.sid, { argv: e.argv.slice(1) });
    if (e.event === 'exit' && procs.has(e.sid)) procs.get(e.sid).ms = e.t_abs * 1000;
  }
  const list = [...procs.values()].filter((x) => x.ms !== undefined);
  // The tasks' part of the session: from the first `worktree add` to the last `branch -D`.
  const first = list.findIndex((x) => x.argv[0] === 'worktree' && x.argv[1] === 'add');
  let last = -1;
  list.forEach((x, i) => x.argv[0] === 'branch' && (last = i));
  const perTask = list.slice(first, last + 1);
  const key = (argv) => {
    if (argv[0] === 'worktree' || argv[0] === 'branch') return argv.slice(0, 2).join(' ');
    if (argv[0] === 'status') return 'status --untracked-files=all (leftovers)';
    if (argv[0] === 'diff') return 'diff --name-only base HEAD (changed files)';
    if (argv[0] === 'rev-parse') return 'rev-parse HEAD (the merge commit)';
    if (argv[0] === 'merge') return 'merge --no-ff';
    return argv.slice(0, 2).join(' ');
  };
  const groups = new Map();
  for (const x of perTask) {
    const k = key(x.argv);
    const g = groups.get(k) ?? { n: 0, ms: 0 };
    g.n++;
    g.ms += x.ms;
    groups.set(k, g);
  }
  const peerCmds = new Set(['worktree add', 'merge --no-ff', 'worktree remove', 'branch -D']);
  const sum = (entries) => ({ n: entries.reduce((s, [, g]) => s + g.n, 0) / N, ms: entries.reduce((s, [, g]) => s + g.ms, 0) / N });
  const shared = sum([...groups.entries()].filter(([k]) => peerCmds.has(k)));
  const extra = sum([...groups.entries()].filter(([k]) => !peerCmds.has(k)));

  // The state file and the log of this run, timed in-process.
  const { StateStore } = bench.core('taskFile/store');
  const { StatePaths } = bench.core('statePaths');
  const { ProgressLog } = bench.core('log/progressLog');
  const stateDir = bench.tmp('state');
  copyFileSync(join(dir, 'harness-tasks.json'), join(stateDir, 'harness-tasks.json'));
  const store = new StateStore(new StatePaths(stateDir), 'launchpad bench');
  let flip = 0;
  const write = await bench.time(() => store.transact((f) => void (f.tasks[0].title = flip++ % 2 ? 'a' : 'b')), { warmup: 5, reps: 30 });
  const read = await bench.time(() => store.transact(() => undefined), { warmup: 5, reps: 30 });
  const log = new ProgressLog(join(stateDir, 'harness-progress.txt'));
  const append = await bench.time(
    () => log.append(1, { type: 'DISPATCH', taskId: 'task-001', message: 'agent=agent_0123abcd worktree=harness-task-001' }),
    { warmup: 5, reps: 50 },
  );
  const appends =
    readFileSync(join(dir, 'harness-progress.txt'), 'utf8')
      .split('\n')
      .filter((l) => /\[SESSION-1\] (BATCH|DISPATCH|AGENT_DONE|VALIDATE|MERGE|Completed|WARN \[)/.test(l)).length / N;

  const perTaskSaves = (saves - 2) / N; // less session_count (start) and last_session (end)
  const perTaskTx = (transactions - 3) / N; // less session start, the last pool pass and session end (per task: a pool pass that claims it, its completion)
  const stateMs = perTaskSaves * write.median + (perTaskTx - perTaskSaves) * read.median;
  const logMs = appends * append.median;
  const starts = (shared.n + extra.n) * gitStartMs;
  const rest = overhead - shared.ms - extra.ms - starts - stateMs - logMs;

  bench.log(
    `where a task's time goes — one run of ${N} tasks traced with GIT_TRACE2_EVENT (git's own time per command); its overhead ${overhead.toFixed(1)} ms/task:`,
  );
  for (const [k, g] of [...groups.entries()].sort((a, b) => b[1].ms - a[1].ms)) {
    bench.log(
      `  ${peerCmds.has(k) ? 'peer too ' : 'ours only'}  ${(g.n / N).toFixed(1).padStart(4)} × git ${k.padEnd(44)} ${(g.ms / N).toFixed(1).padStart(6)} ms`,
    );
  }
  bench.log(
    `  starting ${(shared.n + extra.n).toFixed(1)} git processes from node: ~${starts.toFixed(1)} ms (${gitStartMs.toFixed(1)} ms each, measured as git --version)`,
  );
  bench.log(
    `  state: ${perTaskTx.toFixed(1)} transactions/task, ${perTaskSaves.toFixed(1)} of them saving (.bak link, .tmp + fsync, rename): ` +
      `${write.median.toFixed(2)} ms each, read-only ${read.median.toFixed(2)} ms → ${stateMs.toFixed(1)} ms`,
  );
  bench.log(`  log: ${appends.toFixed(1)} appends/task × ${append.median.toFixed(3)} ms → ${logMs.toFixed(2)} ms`);
  bench.log(
    `  the rest in node (prompt and attempt folder, transcripts, process records, output scan, promise hops): ${rest.toFixed(1)} ms`,
  );
  bench.log(
    `  beyond the peer's four git commands (${shared.ms.toFixed(1)} ms + their start): ${(overhead - shared.ms - shared.n * gitStartMs).toFixed(1)} ms/task; ` +
      `the timed peer took ${peerPerTask.toFixed(1)} ms/task`,
  );
  bench.fact(
    'git processes per task',
    `${(shared.n + extra.n).toFixed(1)} (peer 4): ${[...groups.keys()].filter((k) => !peerCmds.has(k)).join(', ')} beyond the peer's`,
  );
}
