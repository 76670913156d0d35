// Shared by the controller benchmarks (controller.mjs, makespan.mjs): a generated repository, a
// task file, scripted agents, `launchpad run` as a child process timed from here, and the cost
// of starting a process from node (what running an agent or a `true` validation costs at least).
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { ROOT, RUSAGE_WRAPPER, summarize } from './harness.mjs';

export const CLI = join(ROOT, 'dist', 'cli.js');

/** git's environment as the controller sets it (no prompts, no editor, C messages). */
export const GIT_ENV = { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_EDITOR: 'true', GIT_MERGE_AUTOEDIT: 'no', LC_ALL: 'C' };

export function git(cwd, ...args) {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: GIT_ENV }).trim();
}

/**
 * A repository of `files` source files (~1 KB each, in nested folders), one commit on `main`,
 * seeded so two runs generate the same tree.
 */
export function makeRepo(dir, { files = 300, rng }) {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Launchpad Bench');
  git(dir, 'config', 'user.email', 'bench@launchpad.invalid');
  git(dir, 'config', 'commit.gpgsign', 'false');
  const areas = ['api', 'auth', 'billing', 'cache', 'cli', 'core', 'db', 'jobs', 'ui', 'util'];
  for (let i = 0; i < files; i++) {
    const path = join(dir, 'src', areas[i % areas.length], `mod${Math.floor(i / areas.length) % 6}`, `file${i}.ts`);
    mkdirSync(dirname(path), { recursive: true });
    const lines = [];
    for (let l = 0; l < 30; l++) lines.push(`export const v${i}_${l} = ${rng.int(0, 1e9)}; // ${'x'.repeat(rng.int(0, 20))}`);
    writeFileSync(path, lines.join('\n') + '\n');
  }
  writeFileSync(join(dir, 'README.md'), '# bench repository\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  return dir;
}

/**
 * A copy of a repository (no worktrees exist in the source), untimed set-up for one rep. The
 * copy's files have new inodes, so git would re-hash every file at its first look (the index
 * refresh): done here, so neither side pays for it.
 */
export function copyRepo(src, dest) {
  execFileSync('cp', ['-a', src, dest]);
  git(dest, 'status', '--porcelain');
  return dest;
}

/**
 * harness-tasks.json + an empty progress log in `dir`: `tasks` to run, after `history` (task
 * objects as they are, e.g. gen.mjs generateHistory's) when given.
 */
export function writeTasks(dir, tasks, sessionConfig = {}, history = []) {
  const file = {
    version: 3,
    session_config: { max_parallel_agents: 1, max_tasks_per_session: 10_000, ...sessionConfig },
    tasks: [
      ...history,
      ...tasks.map((t) => ({
        id: t.id,
        title: t.title ?? `Task ${t.id}`,
        status: 'pending',
        priority: 'P1',
        depends_on: t.deps ?? [],
        attempts: 0,
        max_attempts: 3,
        context: t.context ?? `Do ${t.id}`,
        files_hint: [`work/${t.id}/`],
        validation: { command: 'true', timeout_seconds: 600 },
        on_failure: { cleanup: null },
        error_log: [],
      })),
    ],
    session_count: 0,
  };
  writeFileSync(join(dir, 'harness-tasks.json'), JSON.stringify(file, null, 2) + '\n');
  writeFileSync(join(dir, 'harness-progress.txt'), '');
}

/**
 * The no-op agent: one file, one commit, RESULT:SUCCESS. It notes its own start and end
 * ($EPOCHREALTIME, bash) and CPU time (`times`) in $BENCH_TIMES/<id>, so its time can be taken
 * out of the run's. With
 * `sleepFromContext` it first sleeps the task's `sleep_ms=N` (makespan). Its git commands are kept
 * out of a profiling run's trace2 file (GIT_TRACE2_EVENT unset).
 */
export function writeAgent(dir, { sleepFromContext = false } = {}) {
  const path = join(dir, sleepFromContext ? 'sleep-agent.sh' : 'noop-agent.sh');
  writeFileSync(
    path,
    `#!/bin/bash
t0=$EPOCHREALTIME
unset GIT_TRACE2_EVENT
${
  sleepFromContext
    ? `ms=$(sed -n 's/.*sleep_ms=\\([0-9][0-9]*\\).*/\\1/p' "$LAUNCHPAD_PROMPT_FILE" | head -n 1)
sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
`
    : ''
}mkdir -p "work/$LAUNCHPAD_TASK_ID"
echo "work of $LAUNCHPAD_TASK_ID" > "work/$LAUNCHPAD_TASK_ID/done.txt"
git add -A && git commit -q -m "[$LAUNCHPAD_TASK_ID] $LAUNCHPAD_TASK_TITLE"
{ echo "$t0 $EPOCHREALTIME"; times; } > "$BENCH_TIMES/$LAUNCHPAD_TASK_ID"
echo "RESULT:SUCCESS"
`,
  );
  chmodSync(path, 0o755);
  return path;
}

/**
 * A child process timed from node's spawn to its close (ms), as the controller spawns its own;
 * with `cpu`, run under the rusage parent instead: wall time from its fork to its exit, and CPU
 * time (user + system) of the child and all it waited for.
 */
export function timedSpawn(file, args, { cwd, env = process.env, input, cpu = false } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const [cmd, argv] = cpu ? ['python3', ['-c', RUSAGE_WRAPPER, file, ...args]] : [file, args];
    const stdio = [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'];
    if (cpu) stdio.push('pipe');
    const child = spawn(cmd, argv, { cwd, env, stdio });
    let stdout = '';
    let stderr = '';
    let usage = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    if (cpu) child.stdio[3].on('data', (d) => (usage += d));
    if (input !== undefined) child.stdin.end(input);
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (!cpu) return resolve({ ms, code, stdout, stderr });
      const [wall, cpuMs, status] = usage.trim().split(' ').map(Number);
      if (!Number.isFinite(cpuMs)) return reject(new Error(`rusage wrapper failed for ${file} (exit ${code}): ${stderr}`));
      resolve({ ms: wall, cpuMs, code: status, stdout, stderr });
    });
  });
}

/**
 * `launchpad run` in `dir`, timed (wall and CPU of its whole process tree); throws unless it
 * exits 0 (or 1 with `workLeft`: a file with tasks no run can finish).
 */
export async function runLaunchpad(dir, { agent, maxParallel, worktreeDir, env = {}, cli = CLI, workLeft = false }) {
  const r = await timedSpawn(
    process.execPath,
    [cli, 'run', '--agent', agent, '--max-parallel', String(maxParallel), '--worktree-dir', worktreeDir],
    // The repository is made here: its commands are approved (docs/trust.md).
    { cwd: dir, env: { ...process.env, HARNESS_STATE_ROOT: '', LAUNCHPAD_AGENT: '', LAUNCHPAD_TRUST: '1', ...env }, cpu: true },
  );
  if (r.code !== 0 && !(workLeft && r.code === 1))
    throw new Error(`launchpad run exited ${r.code} in ${dir}:\n${(r.stdout + r.stderr).slice(-3000)}`);
  return r;
}

/**
 * Median wall time (ms, spawned from node as the controller does) and CPU time (ms) to start and
 * finish `file args`: a floor under any process run.
 */
export async function spawnFloor(file, args, { cwd, n = 15 } = {}) {
  const wall = [];
  const cpu = [];
  for (let i = 0; i < n + 3; i++) {
    const w = await timedSpawn(file, args, { cwd });
    const c = await timedSpawn(file, args, { cwd, cpu: true });
    if (i < 3) continue;
    wall.push(w.ms);
    cpu.push(c.cpuMs);
  }
  return { ms: summarize(wall).median, cpuMs: summarize(cpu).median };
}

/**
 * What the agent wrote of itself, per task: its own wall time (ms, from two $EPOCHREALTIME) and
 * CPU time (ms, bash's `times`: the shell and its children, user + system).
 */
export function agentTimes(dir, ids, read) {
  const out = new Map();
  for (const id of ids) {
    const [span, ...times] = read(join(dir, id)).trim().split('\n');
    const [a, b] = span.split(' ').map(Number);
    const cpuMs = times
      .join(' ')
      .split(/\s+/)
      .filter(Boolean)
      .map((t) => {
        const m = /^(\d+)m([\d.]+)s$/.exec(t);
        return m ? (Number(m[1]) * 60 + Number(m[2])) * 1000 : 0;
      })
      .reduce((x, y) => x + y, 0);
    out.set(id, { ms: (b - a) * 1000, cpuMs });
  }
  return out;
}
