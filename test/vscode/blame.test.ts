// What is not a task's fault, as the editor tells it: a worktree removed from under a running
// agent gives the attempt back (the task runs again and completes on its first attempt), and the
// end-of-run notification names what happened. The workspace's own task file and log are restored.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';

import * as vscode from 'vscode';

import { COMMANDS } from '../../src/vscode/contributions';
import type { LaunchpadApi } from '../../src/vscode/extension';
import { launchpad, progressFile, readTaskFile, tasksFile } from './launchpad';
import { task } from './setup';

describe('faults that are not the task’s', function () {
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

  it('a worktree removed from under its agent: not charged, the task runs again, and the notification says so', async () => {
    fs.writeFileSync(
      tasksFile(),
      JSON.stringify(
        {
          version: 3,
          session_config: { max_parallel_agents: 1, retry_backoff_seconds: 0 },
          tasks: [task('lost-1', 'Lose its worktree once [lose worktree]', [])],
          session_count: 0,
        },
        null,
        2,
      ) + '\n',
    );
    await api.model.refresh();
    await vscode.commands.executeCommand(COMMANDS.run);
    const run = api.runs.active;
    assert.ok(run, 'launchpad.run started a run');
    const outcome = await run.done;
    assert.equal(outcome?.exitCode, 0, outcome?.message);
    const t = readTaskFile().tasks.find((x) => x.id === 'lost-1')!;
    assert.deepEqual([t.status, t.attempts, t.error_log], ['completed', 1, []]);
    const log = fs.readFileSync(progressFile(), 'utf8');
    assert.match(log, /WARN \[lost-1\] its worktree .* was removed while the attempt ran: not charged, the task runs again/);
    const ended = api
      .notices()
      .filter((n) => n.message.startsWith('Launchpad: all 1 tasks completed'))
      .at(-1);
    assert.ok(
      ended,
      api
        .notices()
        .map((n) => n.message)
        .join('\n'),
    );
    assert.match(ended.message, /lost-1: its worktree .* was removed while the attempt ran; not charged/);
    assert.equal(ended.severity, 'warning', 'a note makes a success a warning');
  });
});
