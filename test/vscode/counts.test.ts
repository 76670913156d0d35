// Every count the window shows of a run (the status bar, the progress notification, the Tasks
// view's groups) is the count `launchpad status --json` gives, during a run with a known mix and
// after it is stopped. The workspace's task file, log and agent setting are restored.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';

import * as vscode from 'vscode';

import { formatCounts, type TaskCounts } from '../../src/core/tasks/counts';
import type { TaskState } from '../../src/core/tasks/dag';
import { COMMANDS, SETTINGS } from '../../src/vscode/contributions';
import type { LaunchpadApi } from '../../src/vscode/extension';
import { STATE_LABELS } from '../../src/vscode/views/taskPresentation';
import { cli, eventually, gatedAgent, git, launchpad, progressFile, shownTasks, tasksFile } from './launchpad';
import { task } from './setup';

// One task in each state; the two P0 tasks take both slots and wait at the gate.
const MIX = [
  task('mix-done', 'Already merged', [], { status: 'completed', attempts: 1 }),
  task('mix-run-1', 'Runs first', [], { priority: 'P0' }),
  task('mix-run-2', 'Runs beside it', [], { priority: 'P0' }),
  task('mix-ready', 'Waits for a slot', [], { priority: 'P2' }),
  task('mix-waits', 'Needs the first', ['mix-run-1']),
  task('mix-retry', 'Failed once', [], { priority: 'P2', status: 'failed', attempts: 1, error_log: ['[TEST_FAIL] expected 1 got 2'] }),
  task('mix-gaveup', 'Failed for good', [], { status: 'failed', attempts: 3, error_log: ['[TEST_FAIL] expected 1 got 2'] }),
  task('mix-blocked', 'Needs the failed one', ['mix-gaveup']),
  task('mix-noval', 'Nothing proves it', [], { validation: { command: null } }),
];

type StatusJson = TaskCounts & { active_session: unknown };

/** The Tasks view's groups as a person reads them: label → the count beside it. */
async function groupCounts(api: LaunchpadApi): Promise<Map<string, number>> {
  const groups = await shownTasks(api, 1);
  return new Map(groups.map((g) => [g.label, Number(g.item.description)]));
}

/** The counts a status --json gives, keyed by the Tasks view's group labels (states with none left out). */
function byLabel(s: TaskCounts): Map<string, number> {
  const field: Record<TaskState, keyof TaskCounts> = {
    running: 'running',
    interrupted: 'interrupted',
    awaiting_answer: 'awaiting_answer',
    awaiting_review: 'awaiting_review',
    ready: 'ready',
    retryable: 'retrying',
    failed: 'failed',
    blocked: 'blocked',
    needs_validation: 'needs_validation',
    waiting: 'waiting',
    completed: 'completed',
  };
  const out = new Map<string, number>();
  for (const [state, label] of Object.entries(STATE_LABELS) as Array<[TaskState, string]>)
    if (s[field[state]]) out.set(label, s[field[state]]);
  return out;
}

const sorted = (m: Map<string, number>) => [...m].sort(([a], [b]) => a.localeCompare(b));

describe('the counts of a run', function () {
  this.timeout(120_000);
  let api: LaunchpadApi;
  let savedTasks: string;
  let savedLog: string;
  let savedAgent: string | undefined;
  const gate = gatedAgent();

  before(async () => {
    api = await launchpad();
    await api.model.whenLoaded();
    savedTasks = fs.readFileSync(tasksFile(), 'utf8');
    savedLog = fs.readFileSync(progressFile(), 'utf8');
    savedAgent = vscode.workspace.getConfiguration().get<string>(SETTINGS.agentCommand);
  });
  after(async () => {
    gate.release();
    await api.runs.active?.done.catch(() => undefined);
    await vscode.workspace.getConfiguration().update(SETTINGS.agentCommand, savedAgent, vscode.ConfigurationTarget.Workspace);
    // The stopped attempts' worktrees and branches go with the tasks.
    for (const id of ['mix-run-1', 'mix-run-2']) {
      const wt = git('worktree', 'list', '--porcelain')
        .split('\n')
        .find((l) => l.startsWith('worktree ') && l.endsWith(`/${id}`));
      if (wt) git('worktree', 'remove', '--force', wt.slice('worktree '.length));
      if (git('branch', '--list', `harness-${id}`).trim()) git('branch', '-D', `harness-${id}`);
    }
    fs.writeFileSync(tasksFile(), savedTasks);
    fs.writeFileSync(progressFile(), savedLog);
    await api.model.refresh();
  });

  it('status bar, notification and Tasks view say what status --json says, while it runs and once stopped', async () => {
    fs.writeFileSync(
      tasksFile(),
      JSON.stringify({ version: 3, session_config: { max_parallel_agents: 2 }, tasks: MIX, session_count: 0 }, null, 2) + '\n',
    );
    await vscode.workspace.getConfiguration().update(SETTINGS.agentCommand, gate.agent, vscode.ConfigurationTarget.Workspace);
    process.env.GATE_DIR = gate.gate;
    await vscode.commands.executeCommand(COMMANDS.run);
    const run = api.runs.active;
    assert.ok(run, 'launchpad.run started a run');
    await eventually(
      'both agents started',
      () => /mix-run-1/.test(read(`${gate.gate}/started`)) && /mix-run-2/.test(read(`${gate.gate}/started`)),
    );

    const live = JSON.parse(await cli('status', '--json')) as StatusJson;
    assert.ok(live.active_session, 'status sees the run');
    const expected = '1/9 completed · 2 running · 1 to retry · 1 failed · 1 blocked · 1 without validation';
    assert.equal(formatCounts(live), expected);
    await eventually('the window showing the same counts', async () => {
      await api.model.refresh();
      const shown = api.shownRun();
      return shown.statusBar === `$(sync~spin) Launchpad: ${expected}` && shown.progress === `running: ${expected}` ? shown : undefined;
    });
    assert.deepEqual(sorted(await groupCounts(api)), sorted(byLabel(live)));

    // Stopped: the two tasks stay in progress, interrupted, in every place.
    await vscode.commands.executeCommand(COMMANDS.stop);
    await run.done;
    const after = JSON.parse(await cli('status', '--json')) as StatusJson;
    assert.equal(after.active_session, null);
    assert.deepEqual([after.running, after.interrupted], [0, 2]);
    const stopped = formatCounts(after);
    assert.match(stopped, /· 2 interrupted ·/);
    await eventually('the status bar showing the stopped run', async () => {
      await api.model.refresh();
      return api.shownRun().statusBar === `$(warning) Launchpad: ${stopped}` || undefined;
    });
    assert.deepEqual(sorted(await groupCounts(api)), sorted(byLabel(after)));
  });
});

function read(file: string): string {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
}
