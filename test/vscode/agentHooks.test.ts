import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { COMMANDS } from '../../src/vscode/contributions';
import { launchpad, workspaceRoot } from './launchpad';

describe('Install Agent Hooks', () => {
  after(() => fs.rmSync(path.join(workspaceRoot(), '.claude'), { recursive: true, force: true }));

  it("writes the hooks into the agent's settings beside what is there, and removes only them", async () => {
    await launchpad();
    const file = path.join(workspaceRoot(), '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const mine = { model: 'opus', hooks: { Stop: [{ hooks: [{ type: 'command', command: './notify.sh' }] }] } };
    fs.writeFileSync(file, JSON.stringify(mine, null, 2) + '\n');

    await vscode.commands.executeCommand(COMMANDS.installHooks, { agents: ['claude'] });
    const installed = JSON.parse(fs.readFileSync(file, 'utf8'));
    assert.equal(installed.model, 'opus');
    assert.deepEqual(
      installed.hooks.Stop.map((g: { hooks: Array<{ command: string }> }) => g.hooks[0]!.command),
      ['./notify.sh', 'launchpad hook stop --agent claude'],
    );
    assert.equal(installed.hooks.SessionStart[0].hooks[0].command, 'launchpad hook session-start --agent claude');

    await vscode.commands.executeCommand(COMMANDS.installHooks, { agents: ['claude'], remove: true });
    assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), mine);
  });
});
