import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { COMMANDS, CONTEXT_KEYS, SETTINGS, VIEWS } from '../../src/vscode/contributions';
import { EXTENSION_ID, launchpad } from './launchpad';

interface Manifest {
  contributes: {
    commands: Array<{ command: string; category?: string }>;
    views: Record<string, Array<{ id: string }>>;
    configuration: { properties: Record<string, unknown> };
    menus: Record<string, Array<{ command: string; when?: string }>>;
  };
}

function manifest(): Manifest {
  const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
  return JSON.parse(fs.readFileSync(path.join(ext.extensionPath, 'package.json'), 'utf8'));
}

describe('commands and contributions', () => {
  before(async () => {
    await launchpad();
  });

  it('registers every command package.json declares, and no launchpad.* command it does not', async () => {
    const declared = manifest()
      .contributes.commands.map((c) => c.command)
      .sort();
    // VS Code adds <view id>.focus, .open, … for every view: those are not ours to declare.
    const viewIds = Object.values(manifest().contributes.views)
      .flat()
      .map((v) => `${v.id}.`);
    const registered = (await vscode.commands.getCommands(true))
      .filter((c) => c.startsWith('launchpad.') && !viewIds.some((v) => c.startsWith(v)))
      .sort();
    assert.deepEqual(
      declared.filter((c) => !registered.includes(c)),
      [],
      'declared in package.json but not registered',
    );
    assert.deepEqual(
      registered.filter((c) => !declared.includes(c)),
      [],
      'registered but not declared in package.json',
    );
  });

  it('keeps the id table of contributions.ts and package.json in step', () => {
    const m = manifest();
    assert.deepEqual(Object.values(COMMANDS).sort(), m.contributes.commands.map((c) => c.command).sort());
    assert.deepEqual(Object.values(VIEWS).sort(), m.contributes.views.launchpad!.map((v) => v.id).sort());
    assert.deepEqual(Object.values(SETTINGS).sort(), Object.keys(m.contributes.configuration.properties).sort());
    const whens = JSON.stringify(m.contributes);
    for (const key of Object.values(CONTEXT_KEYS)) assert.ok(whens.includes(key), `context key ${key} is used in package.json`);
  });

  it('puts the documented commands in the palette under the Launchpad category', () => {
    const m = manifest();
    const hidden = new Set(m.contributes.menus.commandPalette!.filter((e) => e.when === 'false').map((e) => e.command));
    for (const id of [
      COMMANDS.run,
      COMMANDS.stop,
      COMMANDS.status,
      COMMANDS.addTask,
      COMMANDS.init,
      COMMANDS.retryTask,
      COMMANDS.filterLog,
    ]) {
      assert.equal(m.contributes.commands.find((c) => c.command === id)?.category, 'Launchpad', id);
      assert.ok(!hidden.has(id), `${id} is in the palette`);
    }
  });
});
