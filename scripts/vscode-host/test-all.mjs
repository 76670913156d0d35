#!/usr/bin/env node
// The one entry for CI and `npm test` (the caller builds first): every suite of test/vscode, each
// in its own VS Code host run, then one closing `N passed, N failed` line for them all.
//   node scripts/vscode-host/test-all.mjs [--vsix FILE] [--only trusted,restricted,reload,detached,vsix] [--timeout SECONDS]
import { join, resolve } from 'node:path';

import { CACHE, ROOT } from './install.mjs';
import { interruptedExitCode, runSuite } from './run.mjs';

const args = process.argv.slice(2);
const flag = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const vsix = flag('--vsix');
const only = flag('--only')?.split(',');
const timeout = Number(flag('--timeout') ?? 1200);

/** The trusted suite's tests the packaged extension runs (a mocha grep over the full titles; D49). */
const VSIX_TESTS = '^(activation|packaging|commands and contributions|task graph|run) ';

const suites = [
  { label: 'trusted', suite: 'trusted', trust: true },
  { label: 'restricted', suite: 'restricted', trust: false }, // the folder opens in Restricted Mode
  // A window reload mid-run: the workbench runs the suite again in the new extension host.
  { label: 'reload', suite: 'reload', trust: true },
  // The editor closed mid-run: the runner kills it and afterClose checks the run goes on alone.
  { label: 'detached', suite: 'detached', trust: true, afterClose: join(ROOT, 'out/test/vscode/detached/afterClose.js') },
  // The packaged extension as a user would install it: what packaging can break (activation, the
  // files shipped, the contributions, the Task Graph's page, a run of the bundled CLI). The rest
  // of the trusted suite runs the same bundle from the dev folder (docs/decisions.md, D49).
  ...(vsix ? [{ label: 'vsix', suite: 'trusted', trust: true, vsix: resolve(vsix), grep: VSIX_TESTS }] : []),
].filter((s) => !only || only.includes(s.label));

const outcomes = [];
for (const s of suites) {
  console.log(`\n=== ${s.label} ===`);
  const started = Date.now();
  try {
    const r = await runSuite({
      ...s,
      extensionPath: ROOT,
      tests: join(ROOT, 'out/test/vscode/index.js'),
      setup: join(ROOT, 'out/test/vscode/setup.js'), // a git repository holding harness-tasks.json
      screenshot: join(CACHE, 'screenshots', `${s.label}.png`),
      // UPDATE_MEDIA_SCREENSHOTS=1 node scripts/vscode-host/test-all.mjs --only trusted: the README's pictures.
      env: {
        ...(process.env.UPDATE_MEDIA_SCREENSHOTS === '1' ? { UPDATE_MEDIA_SCREENSHOTS: '1' } : {}),
        ...(s.grep ? { HOST_TEST_GREP: s.grep } : {}),
      },
      timeout,
    });
    outcomes.push({ ...s, ...r, seconds: (Date.now() - started) / 1000 });
    if (interruptedExitCode) process.exit(interruptedExitCode); // SIGINT/SIGTERM: no further suites
  } catch (e) {
    console.error(`vscode-host: ${s.label}: ${e.message}`);
    outcomes.push({ ...s, ok: false, passed: 0, failed: 0, seconds: (Date.now() - started) / 1000 });
  }
}

console.log('\n=== summary ===');
for (const o of outcomes) {
  console.log(
    `  ${o.ok ? 'ok  ' : 'FAIL'} ${o.label.padEnd(10)} ${o.passed} passed, ${o.failed} failed, ${o.seconds.toFixed(1)} s${o.ok ? '' : `  ${o.logFile ?? ''}`}`,
  );
}
// The failures again, last: a CI log cut in the middle still names them.
for (const o of outcomes)
  for (const t of o.tests ?? [])
    if (t.state === 'failed')
      console.log(`  FAIL ${o.label}: ${t.title}\n       ${(t.error?.message ?? '').split('\n').slice(0, 12).join('\n       ')}`);
const sum = (k) => outcomes.reduce((n, o) => n + o[k], 0);
console.log(`${sum('passed')} passed, ${sum('failed')} failed`);
process.exit(outcomes.length > 0 && outcomes.every((o) => o.ok) ? 0 : 1);
