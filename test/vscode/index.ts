// The entry the VS Code host calls (extensionTestsPath): runs one suite with mocha and writes a
// JSON result file for scripts/vscode-host/run.mjs, because mocha's own output only reaches the
// browser console there. Rejects when a test fails, so the host's exit code is 1.
import * as fs from 'node:fs';
import * as path from 'node:path';

import Mocha from 'mocha';

/** Folders under out/test/vscode holding a suite of their own; all other *.test.js are "trusted".
 *  Keep .vscode-test.mjs and scripts/vscode-host/test-all.mjs in step. */
export const SUITE_DIRS = ['restricted', 'reload', 'detached'];

export interface TestResult {
  title: string;
  state: 'passed' | 'failed' | 'pending';
  durationMs?: number;
  error?: { message: string; stack?: string };
}

/** The suite's test files, relative to `root` (out/test/vscode). */
export function suiteFiles(root: string, suite: string): string[] {
  const walk = (dir: string): string[] =>
    fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
      const rel = dir ? `${dir}/${e.name}` : e.name;
      return e.isDirectory() ? walk(rel) : rel.endsWith('.test.js') ? [rel] : [];
    });
  const inSuite = (f: string) => SUITE_DIRS.find((d) => f.startsWith(`${d}/`)) ?? 'trusted';
  return walk('')
    .filter((f) => inSuite(f) === suite)
    .sort();
}

export async function run(): Promise<void> {
  const suite = process.env.HOST_TEST_SUITE ?? 'trusted';
  const mocha = new Mocha({ ui: 'bdd', color: false, timeout: 120_000, slow: 5_000 });
  if (process.env.HOST_TEST_GREP) mocha.grep(process.env.HOST_TEST_GREP);
  const files = suiteFiles(__dirname, suite);
  if (files.length === 0) throw new Error(`no *.test.js files for suite "${suite}" under ${__dirname}`);
  for (const f of files) mocha.addFile(path.join(__dirname, f));

  const started = Date.now();
  const tests: TestResult[] = [];
  await new Promise<void>((resolve) => {
    const runner = mocha.run(() => resolve());
    const { EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING } = Mocha.Runner.constants;
    runner.on(EVENT_TEST_PASS, (t) => tests.push({ title: t.fullTitle(), state: 'passed', durationMs: t.duration }));
    runner.on(EVENT_TEST_PENDING, (t) => tests.push({ title: t.fullTitle(), state: 'pending' }));
    // Also fires for failing hooks, which then count as a failed "test" named after the hook.
    runner.on(EVENT_TEST_FAIL, (t, err: Error) =>
      tests.push({ title: t.fullTitle(), state: 'failed', durationMs: t.duration, error: { message: err.message, stack: err.stack } }),
    );
  });

  const count = (s: TestResult['state']) => tests.filter((t) => t.state === s).length;
  const summary = {
    suite,
    files,
    passed: count('passed'),
    failed: count('failed'),
    pending: count('pending'),
    durationMs: Date.now() - started,
    tests,
  };
  if (process.env.HOST_TEST_RESULTS) fs.writeFileSync(process.env.HOST_TEST_RESULTS, JSON.stringify(summary, null, 2));
  if (summary.failed > 0) throw new Error(`${summary.failed} of ${tests.length} tests failed`);
  if (summary.passed === 0) throw new Error('no test passed');
}
