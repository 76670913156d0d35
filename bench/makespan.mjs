// Makespan of two generated 40-task DAGs at max_parallel 3 against their lower bound
//   LB = max(critical path, total work / 3)
// - "random": each task depends on 0–3 of the 12 before it, agents of 50–800 ms;
// - "history": shaped like a project's history, a chain of hubs (400–800 ms) each waited on by
//   the next hub and by 3–9 short side tasks (50–300 ms) whose ids come before the next hub's.
// The budget (≤ 1.10× LB) is on the order: the controller's own functions (dag.ts eligibleTasks +
// selectBatch, refilled as each task ends, durations known as the controller knows them: those
// of the tasks finished so far) with zero overhead. Beside it, the anchor: the previous policy,
// id order (lib/reference.mjs idOrderPool), in the same simulation.
// Then the real run: `launchpad run` with agents that sleep the time their task's context asks
// (sleep_ms=N) and commit one file, validation `true`: its makespan against LB, and from the
// agents' own timestamps the time from a dependency's agent end to its dependent's agent start
// (the controller's work per task: validation, merge, the two state writes, worktree, spawn),
// how long the hubs waited (history), how busy the three slots were.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { copyRepo, git, makeRepo, runLaunchpad, writeAgent, writeTasks } from './lib/controllerKit.mjs';
import { idOrderPool } from './lib/reference.mjs';

export const description =
  'makespan of two 40-task DAGs (random; a history of hubs) at max_parallel 3 vs max(critical path, work / 3): the order (≤ 1.10×), the real run';

const TASKS = 40;
const PARALLEL = 3;
const BUDGET = 1.1;

/** Seeded DAG: each task depends on 0–3 earlier ones, agents of 50–800 ms. */
export function generateDag(rng, n = TASKS) {
  const tasks = [];
  for (let i = 0; i < n; i++) {
    const id = `task-${String(i + 1).padStart(3, '0')}`;
    const deps = new Set();
    const k =
      i === 0
        ? 0
        : rng.weighted([
            [0, 3],
            [1, 4],
            [2, 2],
            [3, 1],
          ]);
    for (let j = 0; j < k; j++) deps.add(tasks[rng.int(Math.max(0, i - 12), i - 1)].id);
    const ms = rng.int(50, 800);
    tasks.push({ id, deps: [...deps], ms, context: `Bench task ${id} (sleep_ms=${ms})` });
  }
  return tasks;
}

/**
 * A project's history: a hub (a change much later work builds on, 400–800 ms), then 3–9 short
 * side tasks on it (50–300 ms), then the next hub on the last one (now and then also on one of
 * its side tasks), and so on. The side tasks' ids come before the next hub's, as they do when
 * tasks are added in the order people think of them.
 */
export function historyDag(rng, n = TASKS) {
  const tasks = [];
  let hub;
  let sides = [];
  let left = 0;
  for (let i = 0; i < n; i++) {
    const id = `task-${String(i + 1).padStart(3, '0')}`;
    let deps;
    let ms;
    if (left === 0) {
      deps = hub ? [hub] : [];
      if (hub && sides.length && rng.chance(0.3)) deps.push(rng.pick(sides));
      ms = rng.int(400, 800);
      hub = id;
      sides = [];
      left = rng.int(3, 9);
    } else {
      deps = [hub];
      ms = rng.int(50, 300);
      sides.push(id);
      left--;
    }
    tasks.push({ id, deps, ms, context: `Bench task ${id} (sleep_ms=${ms})` });
  }
  return tasks;
}

const DAGS = [
  { name: 'random', seed: 7, make: generateDag },
  { name: 'history', seed: 11, make: historyDag, hubs: true },
];

export function criticalPath(tasks, dur = (t) => t.ms) {
  const finish = new Map();
  for (const t of tasks) finish.set(t.id, Math.max(0, ...t.deps.map((d) => finish.get(d))) + dur(t));
  return Math.max(...finish.values());
}

/**
 * A run with no overhead: the pool is ordered by `order` ('controller': dag.eligibleTasks with
 * the durations of the tasks finished so far, as the controller measures them; 'oracle': the
 * same with every duration known in advance; 'id': the previous policy), batches by
 * dag.selectBatch, a slot refilled the moment its task ends. Returns the makespan and when each
 * task started.
 */
export function simulate(core, nodes, parallel, order, dur = (t) => t.ms) {
  const parsed = core.parseTaskFile(
    JSON.stringify({
      tasks: nodes.map((t) => ({
        id: t.id,
        title: t.id,
        status: 'pending',
        depends_on: t.deps,
        files_hint: [`work/${t.id}/`],
        validation: { command: 'true' },
      })),
    }),
  );
  if (!parsed.ok) throw parsed.error;
  const tasks = parsed.file.tasks;
  const ms = new Map(nodes.map((t) => [t.id, dur(t)]));
  const known = order === 'oracle' ? new Map(ms) : new Map();
  const started = new Map();
  const running = [];
  let now = 0;
  for (;;) {
    const pool = order === 'id' ? idOrderPool(core, tasks) : core.dag.eligibleTasks(tasks, undefined, { durations: known });
    for (const t of core.dag.selectBatch(
      pool,
      running.map((r) => r.t),
      parallel,
    )) {
      t.status = 'in_progress';
      started.set(t.id, now);
      running.push({ t, end: now + ms.get(t.id) });
    }
    if (!running.length) return { makespan: now, started };
    running.sort((a, b) => a.end - b.end);
    const r = running.shift();
    now = r.end;
    r.t.status = 'completed';
    known.set(r.t.id, ms.get(r.t.id));
  }
}

/** How long hubs (tasks 3+ others wait on) sat ready: from their last dependency's end to their start. */
function hubWaits(nodes, start, end) {
  const waiters = new Map(nodes.map((t) => [t.id, 0]));
  for (const t of nodes) for (const d of t.deps) waiters.set(d, waiters.get(d) + 1);
  return nodes.filter((t) => t.deps.length && waiters.get(t.id) >= 3).map((t) => start(t.id) - Math.max(...t.deps.map(end)));
}

export default async function run(bench) {
  const core = {
    dag: bench.core('tasks/dag'),
    compareIds: bench.core('ids').compareIds,
    parseTaskFile: bench.core('taskFile/parse').parseTaskFile,
  };
  const reps = bench.reps(3);
  const work = bench.tmp('makespan');
  const base = makeRepo(join(work, 'base'), { files: 100, rng: bench.rng(8) });
  const agent = writeAgent(work, { sleepFromContext: true });

  for (const { name, seed, make, hubs: showHubs } of DAGS) {
    const tasks = make(bench.rng(seed));
    const total = tasks.reduce((s, t) => s + t.ms, 0);
    const cp = criticalPath(tasks);
    const lb = Math.max(cp, total / PARALLEL);
    const ours = simulate(core, tasks, PARALLEL, 'controller');
    const byId = simulate(core, tasks, PARALLEL, 'id');
    const oracle = simulate(core, tasks, PARALLEL, 'oracle');
    const median = (xs) => bench.summarize(xs).median;
    const simWait = (s) =>
      median(
        hubWaits(
          tasks,
          (id) => s.started.get(id),
          (id) => s.started.get(id) + tasks.find((t) => t.id === id).ms,
        ),
      );
    bench.fact(
      `${name} DAG`,
      `${TASKS} tasks, ${tasks.reduce((s, t) => s + t.deps.length, 0)} edges, agents ${Math.min(...tasks.map((t) => t.ms))}–${Math.max(...tasks.map((t) => t.ms))} ms (seed ${seed}); ` +
        `work ${total} ms, work/${PARALLEL} ${(total / PARALLEL).toFixed(0)} ms, critical path ${cp} ms → lower bound ${lb.toFixed(0)} ms`,
    );
    const one = (x) => bench.summarize([x]);
    const ratio = (x, peer) => ({ ours: one(x), peer: one(peer), ratio: x / peer, pairRatios: one(x / peer) });
    bench.checkRatio(`${name}: the order, zero overhead (dag.ts eligibleTasks + selectBatch)`, ratio(ours.makespan, lb), {
      budget: BUDGET,
      peerName: 'lower bound',
      note: `anchor, the previous policy (id order): ${(byId.makespan / lb).toFixed(2)}× LB, ${byId.makespan} ms; ours ${(ours.makespan / byId.makespan).toFixed(2)}× it`,
    });
    bench.fact(
      `${name}: zero overhead, more`,
      (showHubs
        ? `hubs (3+ tasks wait on them) ready → started: ours median ${simWait(ours).toFixed(0)} ms, id order ${simWait(byId).toFixed(0)} ms; `
        : '') + `with every duration known in advance the order would give ${(oracle.makespan / lb).toFixed(2)}× LB`,
    );

    const walls = [];
    const loops = [];
    const latencies = [];
    const hubs = [];
    const busy = [];
    for (let i = 0; i < reps; i++) {
      const dir = copyRepo(base, join(work, `${name}-${i}`));
      const times = join(work, `${name}-${i}-times`);
      mkdirSync(times);
      writeTasks(dir, tasks, { max_parallel_agents: PARALLEL });
      const opts = { agent, maxParallel: PARALLEL, worktreeDir: join(work, `${name}-${i}-wt`), env: { BENCH_TIMES: times } };
      const full = await runLaunchpad(dir, opts);
      const merged = git(dir, 'log', '--first-parent', '--format=%s')
        .split('\n')
        .filter((s) => s.startsWith('Merge [')).length;
      if (merged !== TASKS) throw new Error(`expected ${TASKS} merges, found ${merged} in ${dir}`);
      const empty = await runLaunchpad(dir, opts);
      walls.push(full.ms);
      loops.push(full.ms - empty.ms);

      // The agents' own timeline (seconds since the epoch, microseconds).
      const span = new Map(
        tasks.map((t) => [
          t.id,
          readFileSync(join(times, t.id), 'utf8')
            .split('\n')[0]
            .split(' ')
            .map((x) => Number(x) * 1000),
        ]),
      );
      const t0 = Math.min(...[...span.values()].map(([a]) => a));
      const t1 = Math.max(...[...span.values()].map(([, b]) => b));
      busy.push([...span.values()].reduce((s, [a, b]) => s + (b - a), 0) / (PARALLEL * (t1 - t0)));
      for (const t of tasks) if (t.deps.length) latencies.push(span.get(t.id)[0] - Math.max(...t.deps.map((d) => span.get(d)[1])));
      hubs.push(
        ...hubWaits(
          tasks,
          (id) => span.get(id)[0],
          (id) => span.get(id)[1],
        ),
      );
    }
    const mk = (samples) => ({
      ours: bench.summarize(samples),
      peer: one(lb),
      ratio: median(samples) / lb,
      pairRatios: bench.summarize(samples.map((x) => x / lb)),
    });
    bench.checkRatio(`${name}: the real run, makespan (whole run)`, mk(walls), { peerName: 'lower bound' });
    bench.checkRatio(`${name}: the real run without session start/end`, mk(loops), { peerName: 'lower bound' });
    const lat = bench.summarize(latencies);
    const p90 = lat.samples.slice().sort((a, b) => a - b)[Math.floor(lat.n * 0.9)];
    bench.fact(
      `${name}: the real run's timeline`,
      `a dependency's agent end → its dependent's agent start: median ${lat.median.toFixed(0)} ms, p90 ${p90.toFixed(0)} ms (n=${lat.n}); ` +
        (showHubs ? `hubs ready → started median ${median(hubs).toFixed(0)} ms; ` : '') +
        `slots busy with agents ${(median(busy) * 100).toFixed(0)}% of the agents' span`,
    );
  }
}
