import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { COMMANDS } from '../../src/vscode/contributions';
import type { LaunchpadApi } from '../../src/vscode/extension';
import { answeringPicks, eventually, launchpad, progressFile, readTaskFile, tasksFile, workspaceRoot } from './launchpad';

describe('task edits from the editor', () => {
  let api: LaunchpadApi;
  before(async () => {
    api = await launchpad();
    await api.model.whenLoaded();
  });

  it('adds a task through the core, as `launchpad add` does', async () => {
    const id = await vscode.commands.executeCommand<string>(COMMANDS.addTask, {
      title: 'Add a sitemap',
      validate: 'test -f sitemap.xml',
      files: ['src/sitemap/'],
      dependsOn: ['task-001'],
      priority: 'P2',
    });
    assert.match(id ?? '', /^task-\d{3}$/);
    const t = readTaskFile().tasks.find((x) => x.id === id)!;
    assert.deepEqual(
      [t.title, t.status, t.priority, t.depends_on, t.files_hint],
      ['Add a sitemap', 'pending', 'P2', ['task-001'], ['src/sitemap/']],
    );
    assert.equal((t.validation as { command: string }).command, 'test -f sitemap.xml');
    assert.match(
      fs.readFileSync(progressFile(), 'utf8'),
      new RegExp(`INIT \\[${id}\\] task added: "Add a sitemap" priority=P2 depends_on=\\[task-001\\]`),
    );
    await eventually(`${id} in the model`, () => api.model.snapshot?.byId.has(id!));
  });

  it('refuses a dependency that does not exist, with the core message', async () => {
    const before = fs.readFileSync(tasksFile(), 'utf8');
    const id = await vscode.commands.executeCommand<string>(COMMANDS.addTask, { title: 'Broken', dependsOn: ['task-999'] });
    assert.equal(id, undefined);
    assert.equal(fs.readFileSync(tasksFile(), 'utf8'), before);
  });

  it('adds nothing when the quick input is dismissed (Esc)', async () => {
    const before = fs.readFileSync(tasksFile(), 'utf8');
    let settled = false;
    const pending = Promise.resolve(vscode.commands.executeCommand<string>(COMMANDS.addTask)).finally(() => (settled = true));
    await eventually('the title input to go away on Esc', async () => {
      await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
      await new Promise((r) => setTimeout(r, 200));
      return settled;
    });
    assert.equal(await pending, undefined);
    assert.equal(fs.readFileSync(tasksFile(), 'utf8'), before);
  });

  it("asks in a quick pick before initializing (the welcome view's button); Esc changes nothing", async () => {
    const names = ['harness-tasks.json', 'harness-progress.txt', '.gitignore', '.harness-active'];
    const read = () =>
      names.map((f) => (fs.existsSync(path.join(workspaceRoot(), f)) ? fs.readFileSync(path.join(workspaceRoot(), f), 'utf8') : null));
    const before = read();
    await answeringPicks(() => vscode.commands.executeCommand(COMMANDS.init), 'esc');
    assert.deepEqual(read(), before);
  });

  it('initializes an existing harness without touching it', async () => {
    const files = ['harness-tasks.json', 'harness-progress.txt', '.gitignore'].map((f) => path.join(workspaceRoot(), f));
    const before = files.map((f) => fs.readFileSync(f, 'utf8'));
    await vscode.commands.executeCommand(COMMANDS.init, { gitignore: false });
    assert.deepEqual(
      files.map((f) => fs.readFileSync(f, 'utf8')),
      before,
    );
  });
});
