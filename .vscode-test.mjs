// For machines with desktop VS Code and internet: @vscode/test-cli (`npx vscode-test`) and the
// Extension Test Runner read this file. Offline, as on this project's machines, desktop VS Code
// cannot be downloaded, and scripts/vscode-host/test-all.mjs runs the same suites in code-server
// instead (scripts/vscode-host/README.md). Build first: tests and the workspace setup come from out/.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));
const require = createRequire(import.meta.url);

// The same workspace the code-server runs get: a git repository holding harness-tasks.json.
const workspaceFolder = join(root, '.cache', 'vscode-test-workspace');
rmSync(workspaceFolder, { recursive: true, force: true });
mkdirSync(workspaceFolder, { recursive: true });
const setup = join(root, 'out/test/vscode/setup.js');
if (existsSync(setup)) await require(setup).setup(workspaceFolder);

export default [
  {
    label: 'trusted',
    // Every suite folder but restricted/, reload/ and detached/ (test/vscode/index.ts SUITE_DIRS says the same).
    files: ['out/test/vscode/*.test.js', 'out/test/vscode/!(restricted|reload|detached)/**/*.test.js'],
    version: 'stable',
    workspaceFolder,
    mocha: { ui: 'bdd', timeout: 30_000 },
    env: { HOST_TEST_SUITE: 'trusted', HOST_TEST_EXTENSION_ROOT: root },
  },
  // No "restricted" entry: @vscode/test-electron always starts VS Code with
  // --disable-workspace-trust, so Restricted Mode is only tested in code-server (--trust off).
  // No "reload" or "detached" entry: they rely on code-server (the workbench running the suite
  // again after a reload; the runner closing the editor, scripts/vscode-host/run.mjs --after-close).
];
