// Closing the editor in the middle of a run (its own suite; the runner's --after-close module,
// afterClose.ts beside this file, checks what follows): the run started from the command palette
// goes on without any editor, `launchpad status` in a terminal shows it progressing, and it
// completes with every task merged once.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { COMMANDS } from '../../../src/vscode/contributions';
import { requestEditorClose } from '../host';
import { eventually, launchpad, progressFile, tasksFile, workspaceRoot } from '../launchpad';
import { task } from '../setup';
import { CLOSE_IDS } from './afterClose';

describe('closing the editor mid-run', function () {
  this.timeout(120_000);

  it('starts a run from the command palette, then the editor is closed while its agents run', async () => {
    const api = await launchpad();
    await api.model.whenLoaded();
    // Agents that take a few seconds each: two batches, the second after the editor is gone.
    const agent = path.join(path.dirname(workspaceRoot()), 'slow-agent.sh');
    fs.writeFileSync(agent, `#!/bin/sh\nsleep 4\nexec sh '${path.join(workspaceRoot(), 'tools/agent.sh')}'\n`, { mode: 0o755 });
    process.env.LAUNCHPAD_AGENT = agent;
    const file = {
      version: 3,
      session_config: { max_parallel_agents: 2 },
      tasks: CLOSE_IDS.map((id) => task(id, `Close ${id}`, [])),
      session_count: 0,
    };
    fs.writeFileSync(tasksFile(), JSON.stringify(file, null, 2) + '\n');
    fs.writeFileSync(progressFile(), '');
    await api.model.refresh();
    await vscode.commands.executeCommand(COMMANDS.run);
    const run = api.runs.active;
    assert.ok(run?.startedHere, 'the command started a run');
    await eventually('its first agents running', () => /DISPATCH \[close-1\]/.test(fs.readFileSync(progressFile(), 'utf8')));
    await requestEditorClose();
  });
});
