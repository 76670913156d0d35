import * as assert from 'node:assert/strict';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { expectedExtensionRoot, requestScreenshot, waitFor } from './host';

const ID = 'launchpad.launchpad';

describe('activation', () => {
  it('has the extension, loaded from the copy under test', () => {
    const ext = vscode.extensions.getExtension(ID);
    assert.ok(ext, `${ID} is not installed in this host`);
    const root = expectedExtensionRoot();
    if (root) {
      const rel = path.relative(root, ext.extensionPath);
      assert.ok(!rel.startsWith('..') && !path.isAbsolute(rel), `${ext.extensionPath} is not under ${root}`);
    }
  });

  it('activates on its own because the workspace holds harness-tasks.json', async () => {
    const ext = vscode.extensions.getExtension(ID)!;
    await waitFor(`${ID} to activate`, () => ext.isActive);
  });

  it('registers launchpad.status', async () => {
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes('launchpad.status'));
    await vscode.commands.executeCommand('launchpad.status');
    await requestScreenshot('activation');
  });
});
