// The VS Code extension's budgets: the bundle ≤ 250 KB minified, and activation —
// loading dist/extension.js and calling activate() — ≤ 50 ms.
//
// Activation is timed here in plain node, each run in a fresh process: a minimal stand-in for
// the `vscode` module (a proxy that answers every call with itself; no folder open) exists
// only so that require() and activate() can run; nothing is mocked to be faster. Node's
// built-in modules the bundle uses are loaded before the clock starts, as they are in an
// extension host. The figure is wall time (median); CPU time is beside it, since other work
// on the machine stretches wall time. This is the figure the budget is checked against.
//
// For comparison, the real host's own clock: test/vscode/packaging.test.ts reads the extension
// host's performance marks (code/extHost/willLoadExtensionCode … didActivateExtension) and
// writes .cache/vscode-host/runs/<run>/activation-times.json; the newest one is shown below.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

export const description = 'extension bundle size (≤ 250 KB) and activation, code load + activate (≤ 50 ms)';

const BUNDLE_BUDGET_BYTES = 250 * 1000;
const ACTIVATION_BUDGET_MS = 50;

// Runs in the child (node -e PROBE ROOT BUNDLE NAMES): times require() and activate() of the bundle.
const PROBE = String.raw`
const Module = require('node:module');
for (const m of ['fs', 'path', 'os', 'child_process', 'crypto', 'events', 'util', 'net', 'stream', 'url', 'zlib']) require('node:' + m);
const overrides = {
  version: '1.90.0',
  workspace: { workspaceFolders: undefined, isTrusted: true, textDocuments: [] },
  window: { visibleTextEditors: [], activeTextEditor: undefined },
};
// The bundle copies the module's own properties (esbuild's import * as vscode): list the API's.
const apiNames = JSON.parse(process.argv[3]);
const stub = (over) => new Proxy(function () {}, {
  get(target, key) {
    if (key === 'then') return undefined; // not a promise
    if (key === Symbol.iterator) return function* () {};
    if (key === Symbol.toPrimitive) return () => '';
    if (over && Object.prototype.hasOwnProperty.call(over, key)) {
      const v = over[key];
      return v && typeof v === 'object' && !Array.isArray(v) ? stub(v) : v;
    }
    return stub();
  },
  apply: () => stub(),
  construct: () => stub(),
});
const vscode = {};
for (const name of apiNames) Object.defineProperty(vscode, name, { enumerable: true, get: () => stub(overrides[name]) });
for (const name of Object.keys(overrides)) if (!apiNames.includes(name)) vscode[name] = overrides[name];
const load = Module._load;
Module._load = function (request, ...rest) { return request === 'vscode' ? vscode : load.call(this, request, ...rest); };
const context = { subscriptions: [], extensionPath: process.argv[1], extensionUri: stub(), globalState: stub(), workspaceState: stub(), storageUri: undefined, globalStorageUri: stub(), logUri: stub(), extensionMode: 1, asAbsolutePath: (p) => p };
const clock = () => ({ t: process.hrtime.bigint(), c: process.cpuUsage() });
const since = (a) => ({ wallMs: Number(process.hrtime.bigint() - a.t) / 1e6, cpuMs: (() => { const c = process.cpuUsage(a.c); return (c.user + c.system) / 1000; })() });
const a = clock();
const ext = require(process.argv[2]);
const loaded = since(a);
const b = clock();
ext.activate(context);
const activated = since(b);
process.stdout.write(JSON.stringify({ loaded, activated, subscriptions: context.subscriptions.length }) + '\n');
process.exit(0); // the background refresh activate() started has nothing to find
`;

const bytes = (buf) => buf.length;

/** The names `vscode` exports (namespaces, classes, enums, functions), from @types/vscode. */
function vscodeApiNames(root) {
  const dts = readFileSync(join(root, 'node_modules', '@types', 'vscode', 'index.d.ts'), 'utf8');
  return [...new Set([...dts.matchAll(/^\texport (?:namespace|class|enum|const|let|function) (\w+)/gm)].map((m) => m[1]))];
}

function probe(root, bundle, names) {
  return new Promise((resolve, reject) => {
    const cp = spawn(process.execPath, ['-e', PROBE, root, bundle, JSON.stringify(names)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    cp.stdout.on('data', (d) => (out += d));
    cp.on('error', reject);
    cp.on('close', (code) => {
      try {
        resolve(JSON.parse(out));
      } catch {
        reject(new Error(`activation probe exited with ${code} and printed: ${out.slice(0, 500)}`));
      }
    });
  });
}

/** The newest in-host measurement written by the host tests, if any. */
function hostFigures(root) {
  const runs = join(root, '.cache', 'vscode-host', 'runs');
  if (!existsSync(runs)) return undefined;
  const files = readdirSync(runs)
    .map((r) => join(runs, r, 'activation-times.json'))
    .filter((f) => existsSync(f))
    .sort((x, y) => statSync(y).mtimeMs - statSync(x).mtimeMs);
  return files[0] ? { file: files[0], ...JSON.parse(readFileSync(files[0], 'utf8')) } : undefined;
}

export default async function run(bench) {
  const bundle = join(bench.ROOT, 'dist', 'extension.js');
  if (!existsSync(bundle)) throw new Error('dist/extension.js is missing: run "npm run build" first (npm run bench does)');
  const code = readFileSync(bundle);
  // esbuild's minified output: long lines (only template literals keep newlines), no source map.
  const minified = bytes(code) / code.toString('utf8').split('\n').length > 500 && !code.includes('sourceMappingURL');
  if (!minified) throw new Error('dist/extension.js is a development build: run "node esbuild.mjs" without --dev');

  // The bundle.
  const size = bytes(code);
  const sizeOk = size <= BUNDLE_BUDGET_BYTES;
  bench.fact(
    'bundle dist/extension.js',
    `${size.toLocaleString('en')} bytes minified (${(size / 1000).toFixed(1)} KB), ${(gzipSync(code).length / 1000).toFixed(1)} KB gzipped — budget ≤ ${BUNDLE_BUDGET_BYTES / 1000} KB: ${sizeOk ? 'PASS' : 'OVER'}`,
  );

  // Activation in node, a fresh process per run.
  const load = [];
  const activate = [];
  const total = [];
  let subscriptions = 0;
  const names = vscodeApiNames(bench.ROOT);
  const reps = bench.reps(20);
  for (let i = 0; i < 3 + reps; i++) {
    const r = await probe(bench.ROOT, bundle, names);
    subscriptions = r.subscriptions;
    if (i < 3) continue; // warm the page cache and the machine
    load.push(r.loaded);
    activate.push(r.activated);
    total.push({ wallMs: r.loaded.wallMs + r.activated.wallMs, cpuMs: r.loaded.cpuMs + r.activated.cpuMs });
  }
  const stats = (list) => ({ ...bench.summarize(list.map((m) => m.wallMs)), cpu: bench.summarize(list.map((m) => m.cpuMs)) });
  bench.info('code load: require(dist/extension.js), node + vscode stand-in', stats(load));
  bench.info(`activate(context): ${subscriptions} disposables registered`, stats(activate));
  bench.check('activation, code load + activate (node + vscode stand-in)', stats(total), { budgetMs: ACTIVATION_BUDGET_MS });

  // The real host's figure from the last host test run, for comparison.
  const host = hostFigures(bench.ROOT);
  if (host) {
    const age = Math.round((Date.now() - statSync(host.file).mtimeMs) / 60000);
    bench.fact(
      'activation in the VS Code host (its own marks, last host test run)',
      `code load ${host.codeLoadMs} ms + activate ${host.activateMs} ms = ${host.totalMs} ms (${host.vsix ? 'installed .vsix' : 'dev folder'}, ${age} min ago; ${host.file})`,
    );
  } else {
    bench.fact('activation in the VS Code host', 'no figure yet: npm run test:vscode writes one');
  }
  if (!sizeOk) throw new Error(`dist/extension.js is ${size} bytes, over the ${BUNDLE_BUDGET_BYTES}-byte budget`);
}
