import * as assert from 'node:assert/strict';

import * as vscode from 'vscode';

import { waitFor } from '../host';

// Runs only in a host started without --disable-workspace-trust (suite "restricted").
describe('restricted mode', () => {
  it('opens the workspace untrusted', () => {
    assert.equal(vscode.workspace.workspaceFolders?.length, 1);
    assert.equal(vscode.workspace.isTrusted, false);
  });

  it('still activates Launchpad, which declares limited untrusted support', async () => {
    const ext = vscode.extensions.getExtension('launchpad.launchpad');
    assert.ok(ext);
    await waitFor('launchpad.launchpad to activate', () => ext.isActive);
  });
});
