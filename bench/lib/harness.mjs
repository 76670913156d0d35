// The measuring kit every benchmark module gets as its one argument (`bench`).
//
//   const s = await bench.time(fn, { warmup, reps, before })   samples → { median, min, max, … }
//   bench.check(label, s, { budgetMs })                       a figure against an absolute budget
//   bench.info(label, s)                                      a figure shown for information
//   const p = await bench.pair(ours, peer, { … })             ours and a peer, interleaved
//   bench.checkRatio(label, p, { budget, peerName })          ours / peer against a ratio budget
//   bench.tmp('name')                                         a fresh dir under this run's temp dir
//   bench.core('log/logReader')                                   require('out/src/core/log/logReader.js')
//   bench.rng(seed)                                           a seeded PRNG (mulberry32)
//
// Every timed run is preceded by a full GC (the runner starts children with --expose-gc), so
// each repetition starts from the same heap; a GC the measured code itself causes still counts.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const require = createRequire(join(ROOT, 'package.json'));

/** Statistics of a list of samples (milliseconds unless said otherwise). */
export function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  const mid = n >> 1;
  const median = n % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { n, median, min: sorted[0], max: sorted[n - 1], mean: sorted.reduce((a, b) => a + b, 0) / n, samples };
}

/** mulberry32: small, fast and good enough for test data; the same seed gives the same data. */
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    /** integer in [lo, hi] */
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (list) => list[Math.floor(next() * list.length)],
    /** true with probability p */
    chance: (p) => next() < p,
    /** pick by weight: [[value, weight], …] */
    weighted(pairs) {
      const total = pairs.reduce((s, [, w]) => s + w, 0);
      let r = next() * total;
      for (const [v, w] of pairs) if ((r -= w) < 0) return v;
      return pairs[pairs.length - 1][0];
    },
  };
}

const gc = typeof globalThis.gc === 'function' ? globalThis.gc : () => {};

/**
 * One timed run after a full GC. `fn` may return a value, a promise, or a measurement of its
 * own ({ value, wallMs, cpuMs }: a child process timed by spawnTimed), which is used as is.
 * In-process runs get their CPU time from process.cpuUsage().
 */
async function once(fn, i) {
  gc();
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  let r = fn(i);
  if (r && typeof r.then === 'function') r = await r;
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const c = process.cpuUsage(c0);
  if (r && typeof r === 'object' && typeof r.wallMs === 'number') return r;
  return { value: r, wallMs, cpuMs: (c.user + c.system) / 1000 };
}

function withCpu(stats, cpu) {
  if (cpu.length === stats.n) stats.cpu = summarize(cpu);
  return stats;
}

export function fmtMs(ms) {
  if (ms >= 100) return ms.toFixed(0);
  if (ms >= 10) return ms.toFixed(1);
  if (ms >= 1) return ms.toFixed(2);
  return ms.toFixed(3);
}

function fmtStats(s, unit = 'ms') {
  const cpu = s.cpu ? `, cpu median ${fmtMs(s.cpu.median)}` : '';
  return `median ${fmtMs(s.median)} ${unit} (min ${fmtMs(s.min)}, max ${fmtMs(s.max)}, n=${s.n}${cpu})`;
}

// Child processes are timed by a small python3 wrapper when one is available: it forks, execs
// the command and wait4()s it, so it reports the child's own wall time and its CPU time (user +
// system, from rusage) without python's start-up. CPU time is what stays comparable when other
// work shares the machine. Without python3, the wall time seen from node is used.
// The CPU time is the whole process tree's: the wrapper is a child subreaper, so a descendant
// orphaned by its parent's exit (one that outlives `launchpad run` by a moment) is waited for
// here too, with everything it waited for.
export const RUSAGE_WRAPPER = `
import ctypes, os, resource, sys, time
try:
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
except Exception:
    pass
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.close(3)
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, _ = os.wait4(pid, 0)
wall = (time.perf_counter() - t0) * 1000
deadline = time.monotonic() + 10
while True:
    try:
        if os.waitpid(-1, os.WNOHANG)[0] == 0:
            if time.monotonic() > deadline:
                break
            time.sleep(0.002)
    except ChildProcessError:
        break
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
os.write(3, ("%f %f %d\\n" % (wall, (ru.ru_utime + ru.ru_stime) * 1000, os.waitstatus_to_exitcode(status))).encode())
`;
let python;
function pythonPath() {
  if (python === undefined) {
    const r = spawnSync('python3', ['-c', 'import sys, os; print(sys.executable if hasattr(os, "wait4") else "")'], { encoding: 'utf8' });
    python = r.status === 0 ? r.stdout.trim() : '';
  }
  return python;
}

/**
 * Runs `cmd args` with stdout on a pipe this process drains (counting lines), or on /dev/null
 * with `devNull`; stderr inherited. Resolves { value: lines, wallMs, cpuMs?, code }.
 */
export function spawnTimed(cmd, args, { env = process.env, devNull = false } = {}) {
  const py = pythonPath();
  return new Promise((resolve, reject) => {
    const out = devNull ? openSync('/dev/null', 'w') : 'pipe';
    const t0 = process.hrtime.bigint();
    const cp = py
      ? spawn(py, ['-c', RUSAGE_WRAPPER, cmd, ...args], { stdio: ['ignore', out, 'inherit', 'pipe'], env })
      : spawn(cmd, args, { stdio: ['ignore', out, 'inherit'], env });
    if (devNull) closeSync(out);
    let lines = 0;
    cp.stdout?.on('data', (chunk) => {
      for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
    });
    let report = '';
    cp.stdio[3]?.on('data', (d) => (report += d));
    cp.on('error', reject);
    cp.on('close', (code) => {
      const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
      if (py) {
        const [w, c, status] = report.trim().split(' ').map(Number);
        if (!Number.isFinite(w)) return reject(new Error(`timing wrapper failed for ${cmd} (exit ${code})`));
        resolve({ value: lines, wallMs: w, cpuMs: c, code: status });
      } else resolve({ value: lines, wallMs, code });
    });
  });
}

export function createBench(moduleName, { tmpRoot, scale = 1, verbose = false }) {
  const results = [];
  let tmpCount = 0;

  /** Repetitions scaled by --quick / --reps-scale, never below 3. */
  const reps = (n) => Math.max(3, Math.round(n * scale));

  const bench = {
    name: moduleName,
    ROOT,
    rng,
    summarize,
    reps,
    verbose,
    log: (...args) => console.log(`  ${moduleName}:`, ...args),
    debug: (...args) => verbose && console.log(`  ${moduleName}:`, ...args),

    core(mod) {
      try {
        return require(join(ROOT, 'out', 'src', 'core', `${mod}.js`));
      } catch (err) {
        if (err.code === 'MODULE_NOT_FOUND')
          throw new Error(`out/src/core/${mod}.js is missing: run "npm run build" first (npm run bench does)`);
        throw err;
      }
    },

    tmp(name = 'tmp') {
      const dir = join(tmpRoot, `${moduleName}-${name}-${tmpCount++}`);
      mkdirSync(dir, { recursive: true });
      return dir;
    },

    /**
     * Times `fn` (sync or async): `warmup` untimed runs, then `reps` timed ones. `before(i)` runs
     * untimed ahead of each run (warm-ups included), e.g. to put a file back as it was.
     */
    async time(fn, { warmup = 5, reps: n = 20, before } = {}) {
      const samples = [];
      const cpu = [];
      const total = warmup + reps(n);
      for (let i = 0; i < total; i++) {
        if (before) await before(i);
        const m = await once(fn, i);
        if (i >= warmup) {
          samples.push(m.wallMs);
          if (m.cpuMs !== undefined) cpu.push(m.cpuMs);
        }
      }
      return withCpu(summarize(samples), cpu);
    },

    /**
     * Times `ours` and `peer` alternately (ours, peer, ours, peer …) so both see the same
     * background load, and gives the ratio of the medians. Each may return a value (a line
     * count) which is kept from the last run as `oursValue` / `peerValue`.
     */
    async pair(ours, peer, { warmup = 3, reps: n = 15 } = {}) {
      const runs = { ours: { wall: [], cpu: [] }, peer: { wall: [], cpu: [] } };
      const values = {};
      const total = warmup + reps(n);
      for (let i = 0; i < total; i++) {
        for (const [key, fn] of [
          ['ours', ours],
          ['peer', peer],
        ]) {
          const m = await once(fn, i);
          values[key] = m.value;
          if (i >= warmup) {
            runs[key].wall.push(m.wallMs);
            if (m.cpuMs !== undefined) runs[key].cpu.push(m.cpuMs);
          }
        }
      }
      const os = withCpu(summarize(runs.ours.wall), runs.ours.cpu);
      const ps = withCpu(summarize(runs.peer.wall), runs.peer.cpu);
      const ratios = summarize(runs.ours.wall.map((x, i) => x / runs.peer.wall[i]));
      const cpuRatio = os.cpu && ps.cpu ? os.cpu.median / ps.cpu.median : undefined;
      return {
        ours: os,
        peer: ps,
        ratio: os.median / ps.median,
        pairRatios: ratios,
        cpuRatio,
        oursValue: values.ours,
        peerValue: values.peer,
      };
    },

    /** A figure with an absolute budget in ms; `budgetMs` undefined makes it information only. */
    check(label, stats, { budgetMs, note } = {}) {
      const verdict =
        budgetMs === undefined ? 'info' : stats.median <= budgetMs ? 'PASS' : stats.cpu && stats.cpu.median <= budgetMs ? 'OVER*' : 'OVER';
      const budget = budgetMs === undefined ? '' : `budget ≤ ${budgetMs} ms`;
      console.log(`  ${moduleName} ${label}: ${fmtStats(stats)}${budget ? `  ${budget}` : ''}  ${verdict}${note ? `  (${note})` : ''}`);
      results.push({
        module: moduleName,
        label,
        unit: 'ms',
        median: stats.median,
        min: stats.min,
        max: stats.max,
        n: stats.n,
        cpu: stats.cpu?.median,
        budget,
        verdict,
        note,
      });
      return verdict;
    },

    info(label, stats, opts = {}) {
      return bench.check(label, stats, { ...opts, budgetMs: undefined });
    },

    /** ours / peer (ratio of the medians) against a budget ratio; `budget` undefined is info. */
    checkRatio(label, pair, { budget, peerName = 'peer', note } = {}) {
      const r = pair.ratio;
      const verdict =
        budget === undefined ? 'info' : r <= budget ? 'PASS' : pair.cpuRatio !== undefined && pair.cpuRatio <= budget ? 'OVER*' : 'OVER';
      const b = budget === undefined ? '' : `budget ≤ ${budget}× ${peerName}`;
      console.log(
        `  ${moduleName} ${label}: ${r.toFixed(2)}× ${peerName} — ours ${fmtStats(pair.ours)}, ${peerName} ${fmtStats(pair.peer)}; ` +
          `per-pair ratio min ${pair.pairRatios.min.toFixed(2)} max ${pair.pairRatios.max.toFixed(2)}` +
          `${pair.cpuRatio !== undefined ? `; cpu-time ratio ${pair.cpuRatio.toFixed(2)}×` : ''}${b ? `  ${b}` : ''}  ${verdict}${note ? `  (${note})` : ''}`,
      );
      results.push({
        module: moduleName,
        label,
        unit: '×',
        median: r,
        min: pair.pairRatios.min,
        max: pair.pairRatios.max,
        n: pair.ours.n,
        cpu: pair.cpuRatio,
        ours: { median: pair.ours.median, min: pair.ours.min, max: pair.ours.max, cpu: pair.ours.cpu?.median },
        peer: { name: peerName, median: pair.peer.median, min: pair.peer.min, max: pair.peer.max, cpu: pair.peer.cpu?.median },
        budget: b,
        verdict,
        note,
      });
      return verdict;
    },

    /** A plain number worth showing (bytes, counts), no timing. */
    fact(label, value, unit = '') {
      console.log(`  ${moduleName} ${label}: ${value}${unit ? ' ' + unit : ''}`);
      results.push({ module: moduleName, label, unit, value, verdict: 'fact' });
    },

    results,
  };
  return bench;
}
