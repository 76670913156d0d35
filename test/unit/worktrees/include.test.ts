// .worktreeinclude on real repositories: what is copied (matched AND ignored), how (folders
// recursively, links as links, modes and mtimes kept), what never is (tracked files, untracked
// files that are not ignored, anything through a link out of the worktree), and the sync a
// pooled worktree gets.
import assert from 'node:assert/strict';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

import { Git } from '../../../src/core/git/git';
import { copyIncluded, includedFiles, readIncludeRules } from '../../../src/core/worktrees/include';
import { git, makeRepo, writeFiles } from '../helpers/gitRepo';
import { tempDir } from '../helpers/tmp';

/** A repository with ignored files of every kind in its main checkout, and a new worktree of it. */
function project(include: string) {
  const root = makeRepo({
    '.gitignore': 'node_modules/\n.env\n*.log\nbuild/\nconfig/local/\n',
    'src/app.js': 'module.exports = 1;\n',
    'tracked.env.example': 'A=1\n',
    'config/shared.json': '{}\n',
  });
  writeFiles(root, {
    '.env': 'SECRET=main\n',
    'node_modules/tiny/index.js': 'module.exports = 2;\n',
    'node_modules/tiny/package.json': '{"name":"tiny"}\n',
    'node_modules/deep/a/b/c.js': 'c\n',
    'node_modules/.bin/tiny-cli': '#!/bin/sh\necho tiny\n',
    'debug.log': 'not named\n',
    'build/out.js': 'not named\n',
    'config/local/dev.json': '{"dev":true}\n',
    'config/local/notes.txt': 'not named\n',
    'wip.txt': 'untracked, not ignored\n',
  });
  chmodSync(join(root, 'node_modules/.bin/tiny-cli'), 0o755);
  symlinkSync('../tiny', join(root, 'node_modules/deep/tiny-link'));
  writeFileSync(join(root, '.worktreeinclude'), include);
  const worktree = join(tempDir('launchpad-wt-'), 'w');
  git(root, 'worktree', 'add', '-q', '--detach', worktree, 'HEAD');
  return { root, worktree, git: new Git(root) };
}

const INCLUDE = '# copied into every worktree\n.env\nnode_modules\nconfig/local/*.json\nwip.txt\ntracked.env.example\n\n';

describe('worktrees/include: .worktreeinclude', () => {
  it('reads the patterns, skipping blank lines and comments; no file or no pattern is no rules', () => {
    const dir = tempDir();
    assert.equal(readIncludeRules(dir), undefined);
    writeFileSync(join(dir, '.worktreeinclude'), '# nothing yet\n\n');
    assert.equal(readIncludeRules(dir), undefined);
    writeFileSync(join(dir, '.worktreeinclude'), '.env\r\n# comment\n  \nnode_modules/\n');
    assert.deepEqual(readIncludeRules(dir)?.patterns, ['.env', 'node_modules/']);
  });

  it('lists only files both named by a pattern and ignored by git: not tracked ones, not untracked ones that are not ignored', async () => {
    const p = project(INCLUDE);
    const files = await includedFiles(p.git, p.root, readIncludeRules(p.root)!);
    assert.deepEqual(files, [
      '.env',
      'config/local/dev.json',
      'node_modules/.bin/tiny-cli',
      'node_modules/deep/a/b/c.js',
      'node_modules/deep/tiny-link',
      'node_modules/tiny/index.js',
      'node_modules/tiny/package.json',
    ]);
  });

  it('copies them into a new worktree: folders recursively, links as links, the mode and mtime kept', async () => {
    const p = project(INCLUDE);
    const old = new Date('2020-01-02T03:04:05Z');
    utimesSync(join(p.root, '.env'), old, old);
    const report = await copyIncluded(p.git, p.root, p.worktree, readIncludeRules(p.root)!, { sync: false });

    assert.equal(report.copied, 7);
    assert.equal(readFileSync(join(p.worktree, '.env'), 'utf8'), 'SECRET=main\n');
    assert.equal(readFileSync(join(p.worktree, 'node_modules/deep/a/b/c.js'), 'utf8'), 'c\n');
    assert.equal(readFileSync(join(p.worktree, 'config/local/dev.json'), 'utf8'), '{"dev":true}\n');
    assert.ok(lstatSync(join(p.worktree, 'node_modules/deep/tiny-link')).isSymbolicLink());
    assert.equal(readlinkSync(join(p.worktree, 'node_modules/deep/tiny-link')), '../tiny');
    assert.equal(statSync(join(p.worktree, 'node_modules/.bin/tiny-cli')).mode & 0o777, 0o755);
    assert.equal(statSync(join(p.worktree, '.env')).mtime.getTime(), old.getTime());
    for (const notCopied of ['debug.log', 'build/out.js', 'config/local/notes.txt', 'wip.txt']) {
      assert.ok(!existsSync(join(p.worktree, notCopied)), `${notCopied} is not copied`);
    }
    assert.equal(readFileSync(join(p.worktree, 'tracked.env.example'), 'utf8'), 'A=1\n', 'the tracked file is the checkout');
    assert.equal(git(p.worktree, 'status', '--porcelain'), '', 'git sees nothing new: every copy is ignored');
  });

  it('never writes through a tracked link that leads out of the worktree', async () => {
    const outside = tempDir('launchpad-outside-');
    const root = makeRepo({ '.gitignore': 'secrets/\n' });
    mkdirSync(join(root, 'secrets'));
    writeFileSync(join(root, 'secrets/key'), 'k\n');
    writeFileSync(join(root, '.worktreeinclude'), 'secrets/\n');
    const worktree = join(tempDir('launchpad-wt-'), 'w');
    git(root, 'worktree', 'add', '-q', '--detach', worktree, 'HEAD');
    // The worktree's own `secrets` is a link out of it (as a tracked link of another commit could be).
    symlinkSync(outside, join(worktree, 'secrets'));

    const report = await copyIncluded(new Git(root), root, worktree, readIncludeRules(root)!, { sync: false });
    assert.equal(report.copied, 0);
    assert.ok(!existsSync(join(outside, 'key')), 'nothing written outside the worktree');
  });

  it('syncs a used worktree: changed files copied again, unchanged ones left, the ones the main checkout lost removed', async () => {
    const p = project(INCLUDE);
    const rules = readIncludeRules(p.root)!;
    await copyIncluded(p.git, p.root, p.worktree, rules, { sync: false });
    // The last task changed an included file and added one; the main checkout changed one and lost a folder.
    writeFileSync(join(p.worktree, 'node_modules/tiny/index.js'), 'patched by a test run\n');
    writeFileSync(join(p.worktree, 'node_modules/tiny/extra.js'), 'left by the last task\n');
    writeFileSync(join(p.root, '.env'), 'SECRET=rotated\n');
    rmSync(join(p.root, 'node_modules/deep'), { recursive: true });

    const report = await copyIncluded(p.git, p.root, p.worktree, rules, { sync: true });

    assert.equal(readFileSync(join(p.worktree, 'node_modules/tiny/index.js'), 'utf8'), 'module.exports = 2;\n');
    assert.equal(readFileSync(join(p.worktree, '.env'), 'utf8'), 'SECRET=rotated\n');
    assert.ok(!existsSync(join(p.worktree, 'node_modules/tiny/extra.js')));
    assert.ok(!existsSync(join(p.worktree, 'node_modules/deep')), 'emptied folders go too');
    assert.deepEqual(await includedFiles(p.git, p.worktree, rules), await includedFiles(p.git, p.root, rules));
    assert.equal(report.copied, 2);
    assert.equal(report.unchanged, 3);
    assert.equal(report.removed, 3);
  });
});
