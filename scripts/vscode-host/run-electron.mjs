#!/usr/bin/env node
// The trusted suite in desktop VS Code through @vscode/test-electron, for machines that can
// download it (these cannot: use test-all.mjs, which runs the same suites in code-server).
// Build first (node esbuild.mjs): the tests and the workspace setup come from out/.
import { mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { runTests } from '@vscode/test-electron';

import { ROOT } from './install.mjs';

const require = createRequire(import.meta.url);
const workspace = join(ROOT, '.cache', 'vscode-test-workspace');
rmSync(workspace, { recursive: true, force: true });
mkdirSync(workspace, { recursive: true });
await require(join(ROOT, 'out/test/vscode/setup.js')).setup(workspace);

try {
  await runTests({
    version: process.env.VSCODE_VERSION ?? 'stable',
    extensionDevelopmentPath: ROOT,
    extensionTestsPath: join(ROOT, 'out/test/vscode/index.js'),
    launchArgs: [workspace, '--disable-extensions'],
    extensionTestsEnv: { HOST_TEST_SUITE: 'trusted', HOST_TEST_EXTENSION_ROOT: ROOT },
  });
} catch (err) {
  console.error(`run-electron: ${err instanceof Error ? err.message : err}`);
  process.exit(1);
}
