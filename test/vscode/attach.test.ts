// A run started in a terminal, as VS Code shows it: the window attaches to it through its event
// stream (the tasks running in the views, a terminal per running task following its transcript
// from the first line), Stop in VS Code stops it as Ctrl-C would (the run's own process ends,
// its tasks stay in progress), and the next run recovers them. The workspace's task file and log
// are restored.
import * as assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { COMMANDS } from '../../src/vscode/contributions';
import type { LaunchpadApi } from '../../src/vscode/extension';
import { STATE_LABELS } from '../../src/vscode/views/taskPresentation';
import { CLI, eventually, gatedAgent, git, launchpad, progressFile, readTaskFile, shownTask, tasksFile, workspaceRoot } from './launchpad';
import { task } from './setup';

const IDS = ['term-1', 'term-2'];

describe('a run started in a terminal', function () {
  this.timeout(120_000);
  let api: LaunchpadApi;
  let savedTasks: string;
  let savedLog: string;
  let child: ChildProcess | undefined;
  let exited: Promise<number | null>;
  const gated = () => gate!;
  let gate: ReturnType<typeof gatedAgent> | undefined;

  before(async () => {
    api = await launchpad();
    await api.model.whenLoaded();
    savedTasks = fs.readFileSync(tasksFile(), 'utf8');
    savedLog = fs.readFileSync(progressFile(), 'utf8');
    gate = gatedAgent();
  });
  after(async () => {
    child?.kill('SIGKILL');
    delete process.env.LAUNCHPAD_AGENT;
    delete process.env.GATE_DIR;
    fs.writeFileSync(tasksFile(), savedTasks);
    fs.writeFileSync(progressFile(), savedLog);
    await api.model.refresh();
  });

  it('is shown: its tasks running in the view, a terminal per task following its transcript from the first line', async () => {
    const file = {
      version: 3,
      session_config: { max_parallel_agents: 2 },
      tasks: IDS.map((id) => task(id, `Terminal ${id}`, [])),
      session_count: 0,
    };
    fs.writeFileSync(tasksFile(), JSON.stringify(file, null, 2) + '\n');
    // As a person types it in a terminal: the CLI, with its agent, in the workspace.
    child = spawn(process.execPath, [CLI, 'run', '--agent', gated().agent, '--dir', workspaceRoot()], {
      // LAUNCHPAD_TRUST: this workspace's commands are the test's own, approved as a person would.
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1', LAUNCHPAD_TRUST: '1', GATE_DIR: gated().gate },
      stdio: 'ignore',
    });
    exited = new Promise((r) => child!.on('exit', (code) => r(code)));

    const run = await eventually('the window attached to the run', () =>
      api.runs.active?.pid === child!.pid ? api.runs.active : undefined,
    );
    assert.equal(run.startedHere, false);
    for (const id of IDS) {
      await eventually(`${id} running in the Tasks view`, async () => (await shownTask(api, id)).group === STATE_LABELS.running);
      const text = await eventually(`${id}'s terminal showing its agent`, () => {
        const t = api.runs.terminalText(id)?.replace(/\r/g, '');
        return t?.includes('started\n') ? t : undefined;
      });
      assert.ok(
        text.startsWith(`gated agent: ${id} attempt 1 started\n`),
        `from the transcript's first line: ${JSON.stringify(text.slice(0, 200))}`,
      );
      assert.ok(
        vscode.window.terminals.some((t) => t.name === `Terminal ${id} · ${id}`),
        vscode.window.terminals.map((t) => t.name).join(' | '),
      );
    }
  });

  it('Stop in VS Code stops it as Ctrl-C would; the next run recovers its tasks and merges each once', async () => {
    const run = api.runs.active!;
    await vscode.commands.executeCommand(COMMANDS.stop);
    const outcome = await run.done;
    assert.equal(outcome.reason, 'stopped');
    assert.equal(await exited, 1, "the run's own process ended, as after Ctrl-C");
    for (const id of IDS) assert.equal(readTaskFile().tasks.find((t) => t.id === id)?.status, 'in_progress', `${id} left for recovery`);
    assert.ok(!fs.existsSync(path.join(workspaceRoot(), '.launchpad/session.lock')), 'lock released');
    assert.match(fs.readFileSync(progressFile(), 'utf8'), /STATS .*in_batch=2/);
    await eventually('the terminals ended with the run', () => IDS.every((id) => /the run ended/.test(api.runs.terminalText(id) ?? '')));

    const before = fs.readFileSync(progressFile(), 'utf8').length;
    gated().release();
    process.env.LAUNCHPAD_AGENT = gated().agent;
    process.env.GATE_DIR = gated().gate;
    await vscode.commands.executeCommand(COMMANDS.run);
    const next = api.runs.active!;
    assert.ok(next.startedHere);
    const done = await next.done;
    assert.equal(done.exitCode, 0, done.message);
    const log = fs.readFileSync(progressFile(), 'utf8').slice(before);
    for (const id of IDS) {
      assert.match(log, new RegExp(`RECOVERY \\[${id}\\]`));
      assert.equal(readTaskFile().tasks.find((t) => t.id === id)?.status, 'completed');
      const merges = git('log', '--merges', '--format=%s')
        .split('\n')
        .filter((s) => s.startsWith(`Merge [${id}]`));
      assert.equal(merges.length, 1, `${id} merged once`);
    }
  });
});
