// The extension host is a large process (hundreds of MB), so a session run from VS Code starts its
// git commands from the helper process beside the extension's bundle (core/process/spawner.ts),
// found in the installed copy too. The workspace's task file and log are restored.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { COMMANDS } from '../../src/vscode/contributions';
import type { LaunchpadApi } from '../../src/vscode/extension';
import { EXTENSION_ID, launchpad, progressFile, tasksFile } from './launchpad';
import { task } from './setup';

/** This process's children: pid and command line, from /proc. */
function children(): Array<{ pid: number; argv: string[] }> {
  const found: Array<{ pid: number; argv: string[] }> = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      found.push({ pid: Number(name), argv: fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean) });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe('git from a helper process', function () {
  this.timeout(120_000);
  let api: LaunchpadApi;
  let savedTasks: string;
  let savedLog: string;

  before(async () => {
    api = await launchpad();
    await api.model.whenLoaded();
    savedTasks = fs.readFileSync(tasksFile(), 'utf8');
    savedLog = fs.readFileSync(progressFile(), 'utf8');
  });
  after(async () => {
    fs.writeFileSync(tasksFile(), savedTasks);
    fs.writeFileSync(progressFile(), savedLog);
    await api.model.refresh();
  });

  it('a session run from the extension host starts its git commands from the helper beside the bundle', async function () {
    if (!fs.existsSync('/proc/self/stat')) return this.skip(); // found through /proc
    assert.ok(process.memoryUsage.rss() >= 100 * 1024 * 1024, `the extension host is past 100 MB resident`);
    const file = { version: 3, session_config: { max_parallel_agents: 1 }, tasks: [task('helper-1', 'Helper', [])], session_count: 0 };
    fs.writeFileSync(tasksFile(), JSON.stringify(file, null, 2) + '\n');
    fs.writeFileSync(progressFile(), '');
    await api.model.refresh();

    await vscode.commands.executeCommand(COMMANDS.run);
    const run = api.runs.active;
    assert.ok(run, 'launchpad.run started a run');
    const outcome = await run.done;
    assert.equal(outcome.exitCode, 0, outcome.message);
    assert.match(fs.readFileSync(progressFile(), 'utf8'), /Completed \[helper-1\]/);

    const bundle = vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath;
    const helpers = children().filter((c) => c.argv.some((a) => a.endsWith('spawnerMain.js')));
    assert.equal(helpers.length, 1, `one helper: ${JSON.stringify(children())}`);
    assert.ok(
      helpers[0]!.argv.includes(path.join(bundle, 'dist', 'spawnerMain.js')),
      `the helper is the bundle's own: ${helpers[0]!.argv.join(' ')}`,
    );
  });
});
