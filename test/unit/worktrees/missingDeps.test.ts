// The hint a failed validation gets when the worktree lacks the project's dependencies: the
// signatures (literal output of node, bash, zsh, dash, python), the worktree check, and a reason
// that still fits an error_log entry.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { MAX_REASON_CHARS } from '../../../src/core/tasks/errorEntry';
import { explainMissingDependencies, missingDependencySign, suggestedSetup } from '../../../src/core/worktrees/missingDeps';
import { tempDir } from '../helpers/tmp';

const NODE = `node:internal/modules/cjs/loader:1228
  throw err;
  ^

Error: Cannot find module 'left-pad'
Require stack:
- /wt/task-001/test.js
    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15) {
  code: 'MODULE_NOT_FOUND',
}`;

describe('worktrees/missingDeps: "dependencies missing in the worktree"', () => {
  const empty = () => tempDir('launchpad-deps-');

  it('recognises a missing module or program in the output', () => {
    const dir = empty();
    const sign = (out: string) => missingDependencySign(out, dir, dir);
    assert.equal(sign(NODE), "Cannot find module 'left-pad'");
    assert.equal(
      sign("Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'vitest' imported from /wt/x.mjs"),
      "Cannot find package 'vitest'",
    );
    assert.equal(sign('> app@1.0.0 test\n> jest\n\nsh: 1: jest: not found\n'), 'sh: 1: jest: not found');
    assert.equal(sign('bash: line 1: jest: command not found'), 'jest: command not found');
    assert.equal(sign('zsh:1: command not found: jest'), 'command not found: jest');
    assert.equal(sign("ModuleNotFoundError: No module named 'requests'"), "No module named 'requests'");
    assert.equal(sign('AssertionError: expected 3 to equal 4\n  at test.js:3'), undefined, 'a plain test failure is not one');
  });

  it('sees package.json without the node_modules the main checkout has', () => {
    const main = empty();
    const wt = empty();
    writeFileSync(join(wt, 'package.json'), '{}');
    assert.equal(missingDependencySign('1 failing', wt, main), undefined, 'the main checkout has none either');
    mkdirSync(join(main, 'node_modules'));
    assert.equal(missingDependencySign('1 failing', wt, main), 'node_modules is missing');
    mkdirSync(join(wt, 'node_modules'));
    assert.equal(missingDependencySign('1 failing', wt, main), undefined);
  });

  it('suggests the set-up command from the lock files', () => {
    const dir = empty();
    assert.equal(suggestedSetup(dir), 'npm ci');
    writeFileSync(join(dir, 'requirements.txt'), '');
    assert.equal(suggestedSetup(dir), 'pip install -r requirements.txt');
    writeFileSync(join(dir, 'package.json'), '{}');
    assert.equal(suggestedSetup(dir), 'npm install');
    writeFileSync(join(dir, 'yarn.lock'), '');
    assert.equal(suggestedSetup(dir), 'yarn install --frozen-lockfile');
  });

  it("says what to set, within an entry's length, only when neither .worktreeinclude nor worktree_setup is set", () => {
    const main = empty();
    writeFileSync(join(main, 'package-lock.json'), '{}');
    const ctx = { toplevel: main, paths: { root: main }, config: { worktreeSetup: undefined as string | undefined } };
    const long = `npm test exited with 1: ${'x'.repeat(600)}`;
    const reason = explainMissingDependencies(ctx, empty(), long, NODE);
    assert.ok(reason.length <= MAX_REASON_CHARS, `${reason.length} characters`);
    assert.match(reason, /^npm test exited with 1: x+ — dependencies missing in the worktree \(Cannot find module 'left-pad'\): /);
    assert.match(reason, /set session_config\.worktree_setup \(e\.g\. "npm ci"\) or list the ignored files to copy in \.worktreeinclude$/);

    assert.equal(explainMissingDependencies(ctx, empty(), 'npm test exited with 1', 'AssertionError'), 'npm test exited with 1');
    assert.equal(explainMissingDependencies({ ...ctx, config: { worktreeSetup: 'npm ci' } }, empty(), 'r', NODE), 'r');
    writeFileSync(join(main, '.worktreeinclude'), 'node_modules\n');
    assert.equal(explainMissingDependencies(ctx, empty(), 'r', NODE), 'r');
  });
});
