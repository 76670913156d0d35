import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { COMMANDS, CONTEXT_KEYS, SETTINGS, VIEWS } from '../../src/vscode/contributions';
import { cli, eventually, EXTENSION_ID, launchpad, workspaceRoot } from './launchpad';

interface Manifest {
  contributes: {
    commands: Array<{ command: string; title: string; category?: string }>;
    views: Record<string, Array<{ id: string; when?: string }>>;
    viewsWelcome: Array<{ view: string; contents: string; when?: string }>;
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

  it('gives every command a title that says what it acts on, never a bare verb', () => {
    const titles = new Map(manifest().contributes.commands.map((c) => [c.command, c.title]));
    const bare = [...titles].filter(([, title]) => title.replace(/…$/, '').trim().split(/\s+/).length < 2);
    assert.deepEqual(bare, [], 'a palette entry "Launchpad: Approve" does not say what it approves');
    assert.deepEqual(
      [COMMANDS.run, COMMANDS.stop, COMMANDS.status, COMMANDS.init, COMMANDS.refresh, COMMANDS.approveMilestone].map((id) =>
        titles.get(id),
      ),
      ['Run Tasks', 'Stop Run', 'Show Status', 'Initialize Task File', 'Refresh Tasks', 'Approve Milestone…'],
    );
  });

  it('leads the welcome of an empty workspace with what Launchpad does, then the button, then the files it creates', () => {
    const welcome = manifest().contributes.viewsWelcome.find(
      (w) => w.view === VIEWS.tasks && w.when === 'isWorkspaceTrusted && !launchpad.hasTaskFile',
    )!;
    const [what, button, files, ...rest] = welcome.contents.split('\n');
    assert.match(what!, /^Launchpad runs coding agents on this repository/);
    assert.doesNotMatch(what!, /harness-/, 'no file the newcomer has not heard of yet');
    assert.equal(button, `[Initialize Task File](command:${COMMANDS.init})`);
    assert.match(files!, /creates harness-tasks\.json .*harness-progress\.txt/);
    assert.deepEqual(rest, []);
  });

  it('shows the Milestones view only where a long run exists; Run Long Run stays in the palette', async () => {
    const m = manifest();
    assert.equal(m.contributes.views.launchpad!.find((v) => v.id === VIEWS.milestones)?.when, CONTEXT_KEYS.hasLongRun);
    assert.ok(!m.contributes.menus.commandPalette!.some((e) => e.command === COMMANDS.runLongRun), 'Run Long Run is in the palette');
    const api = await launchpad();
    const seen = async (want: boolean) => (await api.milestones.model.refresh()) && api.milestones.hasLongRun() === want;
    // The suite's workspace starts without one; a test file run earlier may have made one.
    const docs = path.join(workspaceRoot(), 'docs');
    if (fs.existsSync(path.join(docs, 'engineering-discipline/harness'))) {
      await eventually('the long run seen', () => seen(true));
      return;
    }
    await eventually('no long run', () => seen(false));
    try {
      await cli('milestones', 'init', 'Probe run');
      await eventually('the long run seen', () => seen(true));
    } finally {
      fs.rmSync(docs, { recursive: true, force: true });
    }
    await eventually('the long run gone', () => seen(false));
  });
});
