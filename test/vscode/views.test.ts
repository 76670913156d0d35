import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { COMMANDS } from '../../src/vscode/contributions';
import type { LaunchpadApi } from '../../src/vscode/extension';
import { STATE_LABELS } from '../../src/vscode/views/taskPresentation';
import { PAGE_SIZE } from '../../src/vscode/views/taskTree';
import { cli, eventually, launchpad, shownTasks, tasksFile, tooltipText, type ShownItem } from './launchpad';

const idOf = (s: ShownItem) => (s.node.kind === 'task' ? s.node.taskId : undefined);

describe('tasks view', () => {
  let api: LaunchpadApi;
  before(async () => {
    api = await launchpad();
    await api.model.whenLoaded();
  });
  afterEach(() => api.views.setMode('state'));

  it('groups the tasks by the state the core gives them', async () => {
    const s = await api.model.refresh();
    const groups = await shownTasks(api);
    assert.ok(groups.length > 0);
    for (const g of groups) {
      assert.equal(g.node.kind, 'group');
      for (const child of g.children) {
        const entry = s.byId.get(idOf(child)!)!;
        assert.equal(g.label, STATE_LABELS[entry.state], `${entry.id} is under the group of its state`);
        assert.equal(child.label, `${entry.id}: ${entry.title}`);
        assert.match(String(child.item.contextValue), new RegExp(`^task:${entry.state}(:|$)`));
        assert.deepEqual(child.item.command?.arguments, [entry.id]);
        assert.equal(child.item.command?.command, COMMANDS.taskClicked);
        assert.match(String(child.item.description), /^P[012] · attempts \d+\/\d+/);
      }
    }
    // task-005 has no validation command, whatever else has happened in this workspace.
    const needs = groups.find((g) => g.label === STATE_LABELS.needs_validation);
    assert.ok(needs?.children.some((c) => idOf(c) === 'task-005'));
  });

  it('shows each task under what it depends on in the dependency view', async () => {
    await vscode.commands.executeCommand(COMMANDS.viewByDependency);
    assert.equal(api.views.tasks.mode, 'dependency');
    const roots = await shownTasks(api, 4);
    const rootIds = roots.map(idOf);
    for (const id of ['task-001', 'task-003', 'task-005']) assert.ok(rootIds.includes(id), `${id} is a root`);
    assert.ok(!rootIds.includes('task-002') && !rootIds.includes('task-004'));
    const under = (items: ShownItem[], id: string) => items.find((i) => idOf(i) === id)?.children ?? [];
    const t002 = under(roots, 'task-001').find((c) => idOf(c) === 'task-002');
    assert.ok(t002, 'task-002 is under task-001');
    assert.ok(t002.children.some((c) => idOf(c) === 'task-004'), 'task-004 is under task-002');
    assert.ok(under(roots, 'task-003').some((c) => idOf(c) === 'task-004'), 'and under task-003 too');
    await vscode.commands.executeCommand(COMMANDS.viewByState);
    assert.equal(api.views.tasks.mode, 'state');
  });

  it('reveals a task by id (the progress log links to it)', async () => {
    await vscode.commands.executeCommand(COMMANDS.revealTask, 'task-002');
    await eventually('task-002 selected', () => api.views.tasksView.selection[0]?.kind === 'task' && (api.views.tasksView.selection[0] as { taskId: string }).taskId === 'task-002');
  });

  it('follows a task added by the CLI in another process', async () => {
    const id = cli('add', 'Added from a terminal', '--validate', 'true', '--files', 'src/live/').trim();
    await eventually(`${id} in the tasks view`, async () => {
      const groups = await shownTasks(api);
      return groups.some((g) => g.children.some((c) => idOf(c) === id));
    });
  });

  it('shows the task file error (file and field) instead of an empty tree', async () => {
    const good = fs.readFileSync(tasksFile(), 'utf8');
    try {
      const bad = JSON.parse(good);
      bad.tasks[0].status = 'almost-done';
      fs.writeFileSync(tasksFile(), JSON.stringify(bad, null, 2));
      const [only, ...rest] = await eventually('the error item', async () => {
        const items = await shownTasks(api, 1);
        return items[0]?.node.kind === 'error' ? items : undefined;
      });
      assert.equal(rest.length, 0);
      assert.match(only!.label, /harness-tasks\.json/);
      assert.match(only!.label, /tasks\[0\]\.status/);
      assert.match(tooltipText(only!.item), /tasks\[0\]\.status/);
    } finally {
      fs.writeFileSync(tasksFile(), good);
    }
    await eventually('the tasks back', async () => (await shownTasks(api, 1))[0]?.node.kind === 'group');
  });

  it('pages a group past a few hundred tasks', async () => {
    const good = fs.readFileSync(tasksFile(), 'utf8');
    try {
      const many = Array.from({ length: PAGE_SIZE * 2 + 50 }, (_, i) => ({
        id: `bulk-${i + 1}`,
        title: `Bulk ${i + 1}`,
        status: 'pending',
        validation: { command: 'true' },
      }));
      fs.writeFileSync(tasksFile(), JSON.stringify({ version: 3, tasks: many }, null, 2));
      const ready = await eventually('the ready group of the bulk file', async () => {
        const groups = await shownTasks(api);
        const g = groups.find((x) => x.label === STATE_LABELS.ready);
        return g && g.node.kind === 'group' && g.node.count === many.length ? g : undefined;
      });
      assert.equal(ready.children.length, PAGE_SIZE + 1);
      const more = ready.children.at(-1)!;
      assert.equal(more.node.kind, 'more');
      assert.match(more.label, /more/);
      await vscode.commands.executeCommand(more.item.command!.command, ...(more.item.command!.arguments ?? []));
      const again = (await shownTasks(api)).find((x) => x.label === STATE_LABELS.ready)!;
      assert.equal(again.children.length, PAGE_SIZE * 2 + 1);
      // Revealing a task further down pages far enough to show it.
      assert.ok(await api.views.revealTask(`bulk-${many.length}`));
    } finally {
      fs.writeFileSync(tasksFile(), good);
    }
    await eventually('the tasks back', async () => api.model.snapshot?.byId.has('task-001'));
  });
});
