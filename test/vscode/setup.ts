// Fills the folder the host opens, before the workbench starts (run.mjs --setup; plain Node).
// A git repository with a task file: the shape of a project Launchpad works on.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export async function setup(dir: string): Promise<void> {
  fs.writeFileSync(path.join(dir, 'harness-tasks.json'), JSON.stringify({ version: 3, tasks: [] }, null, 2) + '\n');
  fs.writeFileSync(path.join(dir, 'README.md'), '# fixture\n');
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=Launchpad Tests', '-c', 'user.email=tests@launchpad.invalid', ...args], { cwd: dir, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'fixture');
}
