#!/usr/bin/env node
// The benchmark driver: `npm run bench` (build, then every benchmark), or
//   node bench/run.mjs [NAME …] [--quick] [--keep] [--json FILE] [--list] [--verbose]
//
// A benchmark is any bench/NAME.mjs other than this file: it exports `description` and a default
// async function taking the measuring kit (bench/lib/harness.mjs). Each runs in its own node
// process (--expose-gc), so one's heap and JIT state do not colour another's figures. Generated
// data goes under one temp dir, removed at the end (--keep keeps it). Exit code 1 when a figure
// is OVER its budget or a benchmark failed.
import { fork } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { createBench, fmtMs, ROOT } from './lib/harness.mjs';

const BENCH_DIR = join(ROOT, 'bench');
const SELF = 'run.mjs';

function available() {
  return readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith('.mjs') && f !== SELF)
    .map((f) => basename(f, '.mjs'))
    .sort();
}

async function child(name, tmpRoot, scale, verbose) {
  const bench = createBench(name, { tmpRoot, scale, verbose });
  let error;
  try {
    const mod = await import(pathToFileURL(join(BENCH_DIR, `${name}.mjs`)).href);
    await mod.default(bench);
  } catch (err) {
    error = err instanceof Error ? err.stack : String(err);
    console.error(`  ${name}: FAILED\n${error}`);
  }
  process.send({ results: bench.results, error }, () => process.exit(0));
}

function parseArgs(argv) {
  const opts = { names: [], quick: false, keep: false, json: undefined, list: false, verbose: false, child: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quick') opts.quick = true;
    else if (a === '--keep') opts.keep = true;
    else if (a === '--list') opts.list = true;
    else if (a === '--verbose' || a === '-v') opts.verbose = true;
    else if (a === '--json') opts.json = argv[++i];
    else if (a === '--child') opts.child = argv[++i];
    else if (a === '--tmp') opts.tmp = argv[++i];
    else if (a === '--help' || a === '-h') opts.help = true;
    else if (a.startsWith('-')) throw new Error(`unknown option ${a}`);
    else opts.names.push(a);
  }
  return opts;
}

function runChild(name, tmpRoot, opts) {
  return new Promise((resolve) => {
    const args = ['--child', name, '--tmp', tmpRoot];
    if (opts.quick) args.push('--quick');
    if (opts.verbose) args.push('--verbose');
    const cp = fork(join(BENCH_DIR, SELF), args, { execArgv: ['--expose-gc'], stdio: 'inherit' });
    let message;
    cp.on('message', (m) => (message = m));
    cp.on('exit', (code, signal) => {
      if (message) resolve(message);
      else resolve({ results: [], error: `exited with ${signal ?? code} before reporting` });
    });
  });
}

function pad(s, n, right = false) {
  s = String(s);
  return right ? s.padStart(n) : s.padEnd(n);
}

function table(rows) {
  const head = ['benchmark', 'measurement', 'median', 'min', 'max', 'cpu', 'budget', 'verdict'];
  const cells = rows.map((r) => {
    const f = (v) => (v === undefined ? '' : r.unit === '×' ? `${v.toFixed(2)}×` : `${fmtMs(v)} ms`);
    return [r.module, r.label, f(r.median), f(r.min), f(r.max), f(r.cpu), r.budget ?? '', r.verdict];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c) =>
    c
      .map((v, i) => pad(v, widths[i], i >= 2 && i <= 5))
      .join('  ')
      .trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const scale = opts.quick ? 0.3 : 1;
  if (opts.child) return child(opts.child, opts.tmp, scale, opts.verbose);

  const all = available();
  if (opts.help || opts.list) {
    console.log('usage: node bench/run.mjs [NAME …] [--quick] [--keep] [--json FILE] [--verbose]\n\nbenchmarks:');
    const width = Math.max(...all.map((n) => n.length));
    for (const name of all) {
      const mod = await import(pathToFileURL(join(BENCH_DIR, `${name}.mjs`)).href);
      console.log(`  ${name.padEnd(width)}  ${mod.description ?? ''}`);
    }
    return;
  }
  const unknown = opts.names.filter((n) => !all.includes(n));
  if (unknown.length) {
    console.error(`unknown benchmark(s): ${unknown.join(', ')}; available: ${all.join(', ')}`);
    process.exitCode = 2;
    return;
  }
  const names = opts.names.length ? opts.names : all;

  let commit = '';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    // Not a git checkout: the report goes without a commit.
  }
  const cpu = cpus();
  console.log(
    `launchpad bench — node ${process.version}, ${cpu.length}× ${cpu[0]?.model ?? 'cpu'}, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}${commit ? `, commit ${commit}` : ''}${opts.quick ? ', --quick' : ''}`,
  );

  const tmpRoot = mkdtempSync(join(tmpdir(), 'launchpad-bench-'));
  const rows = [];
  const failed = [];
  try {
    for (const name of names) {
      console.log(`\n[${name}]`);
      const t0 = Date.now();
      const { results, error } = await runChild(name, tmpRoot, opts);
      rows.push(...results);
      if (error) failed.push(name);
      console.log(`  (${name} took ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    }
  } finally {
    if (opts.keep) console.log(`\ngenerated data kept in ${tmpRoot}`);
    else rmSync(tmpRoot, { recursive: true, force: true });
  }

  console.log('\nSummary\n');
  const facts = rows.filter((r) => r.verdict === 'fact');
  for (const r of facts) console.log(`${r.module} ${r.label}: ${r.value}${r.unit ? ' ' + r.unit : ''}`);
  if (facts.length) console.log('');
  console.log(table(rows.filter((r) => r.verdict !== 'fact')));
  const over = rows.filter((r) => r.verdict.startsWith('OVER'));
  const starred = rows.filter((r) => r.verdict === 'OVER*');
  console.log(
    `\n${rows.filter((r) => r.verdict === 'PASS').length} PASS, ${over.length} OVER, ${rows.filter((r) => r.verdict === 'info').length} info` +
      (failed.length ? `, FAILED: ${failed.join(', ')}` : ''),
  );
  if (starred.length) {
    console.log(
      'OVER* = over on wall time, within the budget on CPU time: the machine was busy with other work (see the load); run again when it is idle.',
    );
  }
  console.log(
    `load after: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  if (opts.json) {
    writeFileSync(
      opts.json,
      JSON.stringify({ node: process.version, cpus: cpu.length, commit, date: new Date().toISOString(), results: rows }, null, 2) + '\n',
    );
  }
  if (over.length || failed.length) process.exitCode = 1;
}

await main();
