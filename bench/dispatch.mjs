// Dispatch latency on a large repository: from the decision (the BATCH line naming the task) to
// its agent's start (the agent process spawned in a ready worktree), at max_parallel 4, with a new
// worktree per task (session_config.worktree_pool 0, the anchor) and with a pool of 8 prepared
// worktrees (2 × max_parallel), over two runs: the first starts with an empty pool, the next
// with the pool the first left — the budget (≤ 150 ms) is on that one, what every later run sees.
//
// The repository: 20,000 tracked files (~300 B each, 50 × 20 folders) and ~300 MB of ignored
// files in node_modules (1,500 packages × 10 files of 20 KB, plus a .bin link each), which
// .worktreeinclude names, so every worktree needs them. A new worktree costs `git worktree add`
// (20,000 files written) and a copy of node_modules (a copy-on-write clone where the file system
// has one; ext4 has not). A prepared one was reset, cleaned and brought up to date with the main
// checkout's node_modules in the background, after its last task; its dispatch costs a checkout
// of what changed on the base since (the merges of the tasks in between), the task's branch
// (update-ref, symbolic-ref) and `git worktree move`.
//
// The controller runs in this process (out/src/core), its agents as real processes: a no-op
// that commits one file; validation `true`. 12 independent tasks per run. The figures: the
// median (p50) over the 12 tasks of each run, and the new / prepared dispatches apart.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { git } from './lib/controllerKit.mjs';

export const description =
  'dispatch latency (decision → agent started) at 4 agents on a 20,000-file repository with ~300 MB of included ignored files, new worktree vs worktree_pool 4';

const TRACKED = { dirs: 50, sub: 20, files: 20 }; // 20,000 files
const PACKAGES = 1500;
const FILES_PER_PACKAGE = 10;
const FILE_BYTES = 20 * 1024;
const TASKS = 12;
const PARALLEL = 4;
const AGENT_SECONDS = 3;
const POOL = 8; // 2 × max_parallel: a dispatch never waits for a slot being prepared
const SEED = 20;

export function makeLargeRepo(dir, rng, scale) {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Launchpad Bench');
  git(dir, 'config', 'user.email', 'bench@launchpad.invalid');
  git(dir, 'config', 'commit.gpgsign', 'false');
  for (let a = 0; a < Math.round(TRACKED.dirs * scale); a++) {
    for (let b = 0; b < TRACKED.sub; b++) {
      const folder = join(dir, 'src', `area${a}`, `mod${b}`);
      mkdirSync(folder, { recursive: true });
      for (let f = 0; f < TRACKED.files; f++) {
        writeFileSync(
          join(folder, `file${f}.ts`),
          `export const v${a}_${b}_${f} = ${rng.int(0, 1e9)};\n// ${'x'.repeat(rng.int(200, 300))}\n`,
        );
      }
    }
  }
  writeFileSync(join(dir, '.gitignore'), 'node_modules/\n');
  writeFileSync(join(dir, '.worktreeinclude'), 'node_modules/\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  // Ignored: what `npm ci` would have left in the main checkout.
  const chunk = Buffer.alloc(FILE_BYTES);
  for (let p = 0; p < Math.round(PACKAGES * scale); p++) {
    const pkg = join(dir, 'node_modules', `pkg-${p}`);
    mkdirSync(join(pkg, 'lib'), { recursive: true });
    chunk.fill(97 + (p % 26));
    for (let f = 0; f < FILES_PER_PACKAGE; f++) writeFileSync(join(pkg, f === 0 ? 'index.js' : `lib/part${f}.js`), chunk);
    mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(`../pkg-${p}/index.js`, join(dir, 'node_modules', '.bin', `pkg-${p}`));
  }
  return git(dir, 'rev-parse', 'HEAD');
}

function writeAgent(dir) {
  const path = join(dir, 'agent.sh');
  writeFileSync(
    path,
    `#!/bin/sh
sleep "\${BENCH_AGENT_SECONDS:-0}"
mkdir -p "work/$LAUNCHPAD_TASK_ID"
echo "work of $LAUNCHPAD_TASK_ID" > "work/$LAUNCHPAD_TASK_ID/done.txt"
git add "work/$LAUNCHPAD_TASK_ID" && git commit -q -m "[$LAUNCHPAD_TASK_ID] bench"
echo "RESULT:SUCCESS"
`,
  );
  chmodSync(path, 0o755);
  return path;
}

function writeTasks(root, pool) {
  const tasks = Array.from({ length: TASKS }, (_, i) => {
    const id = `task-${String(i + 1).padStart(3, '0')}`;
    return { id, title: `Bench ${id}`, status: 'pending', files_hint: [`work/${id}/`], validation: { command: 'true' } };
  });
  const file = { version: 3, session_config: { max_parallel_agents: PARALLEL, max_tasks_per_session: 1000, worktree_pool: pool }, tasks };
  writeFileSync(join(root, 'harness-tasks.json'), JSON.stringify(file, null, 2) + '\n');
  writeFileSync(join(root, 'harness-progress.txt'), '');
}

/** One `run` in this process: per task, BATCH line → agent spawned (ms), and whether its worktree was reused. */
async function measureRun(bench, root, { agent, worktreeDir }) {
  const { Controller } = bench.core('controller/controller');
  const { headlessTerminals } = bench.core('controller/headlessTerminals');
  const { StatePaths } = bench.core('statePaths');
  const decided = new Map();
  const reused = new Set();
  const latency = new Map();
  const base = headlessTerminals();
  const terminals = {
    open(task, cwd) {
      const t = base.open(task, cwd);
      return {
        ...t,
        run(kind, spec) {
          if (kind === 'agent') latency.set(task.id, performance.now() - decided.get(task.id));
          return t.run(kind, spec);
        },
      };
    },
  };
  const onLogLine = (line, entry) => {
    if (entry.type === 'BATCH') {
      const now = performance.now();
      for (const id of /\[(.*)\]$/.exec(entry.message)[1].split(', ')) decided.set(id, now);
    }
    if (entry.type === 'INIT' && entry.message.startsWith('worktree from the pool')) reused.add(entry.taskId);
  };
  const controller = new Controller({
    paths: new StatePaths(root),
    settings: { cliAgent: agent, worktreeDir, env: {} },
    terminals,
    onLogLine,
  });
  const t0 = performance.now();
  const outcome = await controller.run();
  const wallMs = performance.now() - t0;
  if (outcome.exitCode !== 0) throw new Error(`run failed in ${root}: ${outcome.message}`);
  return { latency, reused, wallMs };
}

function duMb(path) {
  try {
    return Number(execFileSync('du', ['-sm', path], { encoding: 'utf8' }).split('\t')[0]);
  } catch {
    return NaN;
  }
}

export default async function run(bench) {
  const work = bench.tmp('dispatch');
  const root = join(work, 'repo');
  const t0 = performance.now();
  // --quick: 30 % of the repository (a smoke run; the figures are not the ones the README gives).
  const scale = bench.reps(10) / 10;
  const initial = makeLargeRepo(root, bench.rng(SEED), scale);
  const agent = writeAgent(work);
  bench.fact(
    'repository',
    `${Math.round(TRACKED.dirs * scale) * TRACKED.sub * TRACKED.files} tracked files (${duMb(join(root, 'src'))} MB), node_modules ignored and named by .worktreeinclude: ` +
      `${Math.round(PACKAGES * scale) * FILES_PER_PACKAGE} files, ${duMb(join(root, 'node_modules'))} MB (generated in ${((performance.now() - t0) / 1000).toFixed(0)} s)`,
  );
  bench.fact(
    'set-up',
    `${TASKS} independent tasks per run, max_parallel ${PARALLEL}, agents that work ${AGENT_SECONDS} s then commit one file (the last run: at once), validation true; one run per mode`,
  );

  // Each mode: [label, worktree_pool, its worktree folder, agent seconds, budgeted]. The pool runs
  // share a folder: each starts with the pool the one before left (what every run after the first
  // sees). Agents work 3 s (real ones work minutes): a slot handed back is prepared again while
  // the other tasks run. The last run, with agents that end at once, shows what happens when
  // tasks end faster than slots are prepared.
  const modes = [
    [`a new worktree per task (worktree_pool 0, the anchor)`, 0, 'worktrees-0', AGENT_SECONDS, false],
    [`worktree_pool ${POOL}, first run (the pool empty at its start)`, POOL, 'worktrees-pool', AGENT_SECONDS, false],
    [`worktree_pool ${POOL}, next run (the pool the first run left)`, POOL, 'worktrees-pool', AGENT_SECONDS, true],
    [`worktree_pool ${POOL}, next run, agents that end at once`, POOL, 'worktrees-pool', 0, false],
  ];
  const figures = [];
  for (const [label, pool, folder, seconds, budgeted] of modes) {
    process.env.BENCH_AGENT_SECONDS = String(seconds);
    git(root, 'reset', '-q', '--hard', initial);
    rmSync(join(root, '.launchpad'), { recursive: true, force: true });
    writeTasks(root, pool);
    const worktreeDir = join(work, folder);
    const r = await measureRun(bench, root, { agent, worktreeDir });
    const s = bench.summarize([...r.latency.values()]);
    if (budgeted) bench.check(`dispatch p50, ${label}`, s, { budgetMs: 150 });
    else bench.info(`dispatch p50, ${label}`, s);
    if (pool) {
      const reused = [...r.latency].filter(([id]) => r.reused.has(id)).map(([, ms]) => ms);
      const fresh = [...r.latency].filter(([id]) => !r.reused.has(id)).map(([, ms]) => ms);
      if (fresh.length) bench.info(`  of which new worktrees (${fresh.length})`, bench.summarize(fresh));
      if (reused.length) bench.info(`  of which prepared ones from the pool (${reused.length})`, bench.summarize(reused));
      bench.fact(`disk held by the pool after the ${label}`, duMb(join(worktreeDir, '.pool')), 'MB');
    }
    bench.fact(`run wall time, ${label}`, (r.wallMs / 1000).toFixed(1), 's');
    figures.push(s.median);
    if (!pool) {
      rmSync(worktreeDir, { recursive: true, force: true });
      git(root, 'worktree', 'prune');
    }
  }
  if (figures.length === 4) bench.fact('p50 speed-up with the pool (next run / anchor)', `${(figures[0] / figures[2]).toFixed(1)}×`);
}
