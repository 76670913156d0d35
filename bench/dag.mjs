// Scheduling a 10,000-task DAG: dependency validation (findDependencyFailures: unknown
// dependencies, cycles, blocked propagation) + the eligible pool (eligibleTasks) + one batch
// (selectBatch). Budget: ≤ 50 ms. The pool is ordered by the longest chain of work
// each task holds up; the anchor is the same pass with the previous order (id order,
// lib/reference.mjs), alternated with ours. analyzeTasks (what `status` shows) and computeStats
// (the STATS line) are reported beside it.
//
// The task list is generated (seeded, bench/lib/gen.mjs) and validated by the real schema, so
// the objects are exactly what the controller holds after loading harness-tasks.json.
import { execFileSync } from 'node:child_process';

import { generateTaskFile } from './lib/gen.mjs';
import { idOrderPool } from './lib/reference.mjs';

export const description = 'scheduling a 10,000-task DAG: validation + eligible pool + one batch (≤ 50 ms)';

const TASKS = 10_000;
const SEED = 42;
const BUDGET_MS = 50;

export default async function run(bench) {
  const dag = bench.core('tasks/dag');
  const { findDependencyFailures, eligibleTasks, selectBatch, analyzeTasks, longestChains } = dag;
  const reference = { dag, compareIds: bench.core('ids').compareIds };
  const { computeStats } = bench.core('tasks/stats');
  const { parseTaskFile } = bench.core('taskFile/parse');

  const raw = generateTaskFile(TASKS, { seed: SEED, inProgress: 2 });
  const parsed = parseTaskFile(JSON.stringify(raw));
  if (!parsed.ok) throw parsed.error;
  const { tasks, session_config } = parsed.file;
  const running = tasks.filter((t) => t.status === 'in_progress');
  const maxParallel = running.length + session_config.max_parallel_agents;
  const edges = tasks.reduce((n, t) => n + t.depends_on.length, 0);
  const byStatus = {};
  for (const t of tasks) byStatus[t.status] = (byStatus[t.status] ?? 0) + 1;

  // One look at what a pass produces, so the figures are about real work.
  const failures = findDependencyFailures(tasks);
  const eligible = eligibleTasks(tasks);
  const batch = selectBatch(eligible, running, maxParallel);
  const stats = computeStats(tasks);
  bench.fact(
    'generated DAG',
    `${tasks.length} tasks, ${edges} edges, ${Math.ceil(TASKS / 250)} layers (seed ${SEED}); ` +
      Object.entries(byStatus)
        .map(([k, v]) => `${k} ${v}`)
        .join(', '),
  );
  bench.fact(
    'one pass',
    `${failures.length} newly blocked, ${eligible.length} eligible, batch [${batch.map((t) => t.id).join(', ')}] with ${running.length} running (max ${maxParallel}); ` +
      `STATS ${Object.entries(stats)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}`,
  );

  const schedule = () => {
    findDependencyFailures(tasks);
    const pool = eligibleTasks(tasks);
    return selectBatch(pool, running, maxParallel);
  };
  const previous = () => {
    findDependencyFailures(tasks);
    return selectBatch(idOrderPool(reference, tasks), running, maxParallel);
  };
  const opts = { warmup: 10, reps: 40 };
  const pass = await bench.pair(schedule, previous, opts);
  bench.check('schedule 10k: findDependencyFailures + eligibleTasks + selectBatch', pass.ours, {
    budgetMs: BUDGET_MS,
    note: `anchor: the same pass in id order (the previous policy) ${pass.peer.median.toFixed(1)} ms, ours ${pass.ratio.toFixed(2)}× it`,
  });
  bench.checkRatio('  the same, vs the id-order pass', pass, { peerName: 'id-order pass' });
  bench.info('  findDependencyFailures', await bench.time(() => findDependencyFailures(tasks), opts));
  bench.info('  eligibleTasks', await bench.time(() => eligibleTasks(tasks), opts));
  bench.info('    of which longestChains (the order)', await bench.time(() => longestChains(tasks), opts));
  bench.info('  selectBatch', await bench.time(() => selectBatch(eligible, running, maxParallel), opts));
  bench.info('analyzeTasks (status)', await bench.time(() => analyzeTasks(tasks), opts));
  bench.info('computeStats (STATS)', await bench.time(() => computeStats(tasks), opts));
  // The first pass in a fresh process, before the JIT has seen the code (as in one CLI `status`
  // or the first batch of a run): a child process per sample.
  const coldScript = `
    import { createRequire } from 'node:module';
    import { generateTaskFile } from ${JSON.stringify(new URL('./lib/gen.mjs', import.meta.url).href)};
    const require = createRequire(${JSON.stringify(bench.ROOT + '/package.json')});
    const dag = require('./out/src/core/tasks/dag.js');
    const { parseTaskFile } = require('./out/src/core/taskFile/parse.js');
    const { tasks, session_config } = parseTaskFile(JSON.stringify(generateTaskFile(${TASKS}, { seed: ${SEED}, inProgress: 2 }))).file;
    const running = tasks.filter((t) => t.status === 'in_progress');
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    dag.findDependencyFailures(tasks);
    dag.selectBatch(dag.eligibleTasks(tasks), running, running.length + session_config.max_parallel_agents);
    const wall = Number(process.hrtime.bigint() - t0) / 1e6;
    const c = process.cpuUsage(c0);
    console.log(wall, (c.user + c.system) / 1000);`;
  const cold = [];
  const coldCpu = [];
  for (let i = 0; i < bench.reps(9); i++) {
    const [wall, cpu] = execFileSync(process.execPath, ['--input-type=module', '-e', coldScript], { cwd: bench.ROOT, encoding: 'utf8' })
      .trim()
      .split(' ')
      .map(Number);
    cold.push(wall);
    coldCpu.push(cpu);
  }
  bench.info(
    'schedule 10k, first pass in a fresh process (cold JIT)',
    { ...bench.summarize(cold), cpu: bench.summarize(coldCpu) },
    { note: 'one sample per process' },
  );
}
