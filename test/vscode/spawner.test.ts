// The extension host is a large process (hundreds of MB), so a session run from VS Code starts its
// git commands from a helper process whose script is beside the extension's bundle
// (core/process/spawner.ts): python3's, or node's when told to, found in the installed copy too.
// The workspace's task file and log are restored.
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

  /** Runs a one-task session from the extension; returns the helpers beside the bundle that are this host's children. */
  async function runSession(id: string): Promise<Array<{ pid: number; argv: string[] }>> {
    const file = { version: 3, session_config: { max_parallel_agents: 1 }, tasks: [task(id, 'Helper', [])], session_count: 0 };
    fs.writeFileSync(tasksFile(), JSON.stringify(file, null, 2) + '\n');
    fs.writeFileSync(progressFile(), '');
    await api.model.refresh();

    await vscode.commands.executeCommand(COMMANDS.run);
    const run = api.runs.active;
    assert.ok(run, 'launchpad.run started a run');
    const outcome = await run.done;
    assert.equal(outcome.exitCode, 0, outcome.message);
    assert.match(fs.readFileSync(progressFile(), 'utf8'), new RegExp(`Completed \\[${id}\\]`));
    return children().filter((c) => c.argv.some((a) => /spawnerMain\.(py|js)$/.test(a)));
  }

  it("a session run from the extension host starts its git commands from python3's helper beside the bundle; node's when told to", async function () {
    if (!fs.existsSync('/proc/self/stat')) return this.skip(); // found through /proc
    assert.ok(process.memoryUsage.rss() >= 100 * 1024 * 1024, `the extension host is past 100 MB resident`);
    const dist = path.join(vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath, 'dist');

    const first = await runSession('helper-1');
    assert.equal(first.length, 1, `one helper: ${JSON.stringify(children())}`);
    assert.ok(
      first[0]!.argv.includes(path.join(dist, 'spawnerMain.py')) && /python/.test(first[0]!.argv[0]!),
      `the helper is python3 with the bundle's own script: ${first[0]!.argv.join(' ')}`,
    );

    process.env.LAUNCHPAD_SPAWNER_HELPER = 'node';
    try {
      const second = (await runSession('helper-2')).filter((c) => c.pid !== first[0]!.pid);
      assert.equal(second.length, 1, `a new helper: ${JSON.stringify(children())}`);
      assert.ok(
        second[0]!.argv.includes(path.join(dist, 'spawnerMain.js')),
        `the helper is node with the bundle's own script: ${second[0]!.argv.join(' ')}`,
      );
    } finally {
      delete process.env.LAUNCHPAD_SPAWNER_HELPER;
    }
  });
});
