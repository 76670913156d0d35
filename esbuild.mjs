// Builds the two shipped bundles and a transpiled tree for the tests.
//   dist/extension.js  the VS Code extension (vscode is provided by the host)
//   dist/cli.js        the headless CLI; bundled with no vscode at all, so a stray
//                      vscode import in the core fails this build (bullmq stays external)
//   dist/webview/      the Task Graph page's script (with its layout library) and styles, loaded
//                      by the webview when the panel opens, never by the extension
//   dist/THIRD_PARTY_NOTICES.txt  the license of every package bundled into the three above
//   out/               every .ts under src/ and test/ transpiled one-to-one (CommonJS),
//                      for mocha in node and for the tests inside a VS Code host
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import * as esbuild from 'esbuild';

import { writeSettings } from './scripts/gen-settings.mjs';

const { version } = JSON.parse(readFileSync('package.json', 'utf8'));

const production = !process.argv.includes('--dev');

function tsFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return tsFiles(p);
    return p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

/**
 * The bundles keep no license comments (legalComments: 'none'): each package they hold is named
 * here with its version and its own license text instead, as the licenses ask.
 */
function thirdPartyNotices(results) {
  const packages = new Set();
  for (const r of results)
    for (const input of Object.keys(r.metafile.inputs)) {
      const m = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
      if (m) packages.add(m[1]);
    }
  // A package's dependencies count too: a prebuilt dist may hold them inlined (dagre holds graphlib).
  for (const name of packages) {
    const deps = JSON.parse(readFileSync(join('node_modules', name, 'package.json'), 'utf8')).dependencies ?? {};
    for (const dep of Object.keys(deps)) packages.add(dep);
  }
  const sections = [...packages].sort().map((name) => {
    const dir = join('node_modules', name);
    const { version, license } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const file = readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
    if (!file) throw new Error(`${name}: bundled, but it has no license file to ship`);
    return `${name} ${version} (${license})\n\n${readFileSync(join(dir, file), 'utf8').trim()}\n`;
  });
  return `Launchpad's bundles (dist/) include these packages, under their own licenses.\n\n${sections.join('\n' + '-'.repeat(72) + '\n\n')}`;
}

function jsFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? jsFiles(p) : p.endsWith('.js') ? [p] : [];
  });
}

const shared = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify: production,
  sourcemap: !production,
  logLevel: 'warning',
  legalComments: 'none',
};

const testSources = [...tsFiles('src'), ...tsFiles('test')];
const shipped = await Promise.all([
  esbuild.build({
    ...shared,
    metafile: true,
    entryPoints: ['src/vscode/extension.ts'],
    outfile: 'dist/extension.js',
    external: ['vscode'],
  }),
  esbuild.build({
    ...shared,
    metafile: true,
    entryPoints: ['src/cli/main.ts'],
    outfile: 'dist/cli.js',
    banner: { js: '#!/usr/bin/env node' },
    // BullMQ and ioredis serve only the queue's paths (run --executor queue, worker), loaded on
    // first use from node_modules: a package dependency, kept out so the CLI starts as fast as before.
    external: ['bullmq', 'ioredis'],
    define: { LAUNCHPAD_VERSION: JSON.stringify(version) },
  }),
  esbuild.build({
    metafile: true,
    entryPoints: ['src/vscode/dag/webview/dag.ts', 'src/vscode/dag/webview/dag.css'],
    outdir: 'dist/webview',
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'chrome120',
    minify: production,
    sourcemap: production ? false : 'inline',
    logLevel: 'warning',
    legalComments: 'none',
  }),
]);
writeFileSync('dist/THIRD_PARTY_NOTICES.txt', thirdPartyNotices(shipped));
await Promise.all([
  esbuild.build({
    entryPoints: testSources,
    outdir: 'out',
    outbase: '.',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: 'inline',
    logLevel: 'warning',
  }),
]);

// Outputs whose source is gone would still be picked up by mocha: remove them. (out/ is never
// wiped as a whole, so a test run in progress keeps its files while another build runs.)
const expected = new Set(testSources.map((f) => join('out', f.replace(/\.ts$/, '.js'))));
const outputs = statSync('out', { throwIfNoEntry: false }) ? jsFiles('out') : [];
for (const f of outputs) if (!expected.has(f)) rmSync(f);

// The task file's JSON Schema comes from the zod schema, so the editor and the core agree.
const require = createRequire(import.meta.url);
const { taskFileJsonSchema } = require('./out/src/core/taskFile/jsonSchema.js');
mkdirSync('dist', { recursive: true });
writeFileSync('dist/harness-tasks.schema.json', JSON.stringify(taskFileJsonSchema(), null, 2) + '\n');

// The settings in package.json come from their declarations (src/vscode/settingsSchema.ts).
if (writeSettings()) console.log('package.json: settings regenerated from src/vscode/settingsSchema.ts (commit it)');
