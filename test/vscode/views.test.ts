import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';

import * as vscode from 'vscode';

import { COMMANDS } from '../../src/vscode/contributions';
import type { LaunchpadApi } from '../../src/vscode/extension';
import { STATE_LABELS } from '../../src/vscode/views/taskPresentation';
import { PAGE_SIZE } from '../../src/vscode/views/taskTree';
import { requestScreen } from './host';
import { cli, eventually, launchpad, type ShownItem, shownTasks, tasksFile, tooltipText } from './launchpad';

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
        // The title leads, the id and the figures follow: a cut row keeps what a person calls it.
        assert.equal(child.label, entry.title);
        assert.match(String(child.item.contextValue), new RegExp(`^task:${entry.state}(:|$)`));
        assert.deepEqual(child.item.command?.arguments, [entry.id]);
        assert.equal(child.item.command?.command, COMMANDS.taskClicked);
        const description = String(child.item.description);
        assert.ok(description.startsWith(`${entry.id} · `), description);
        assert.ok(description.includes(`${entry.attempts}/${entry.max_attempts} · ${entry.priority}`), description);
        const waits = entry.depends_on.filter((d) => s.byId.get(d)?.status !== 'completed');
        if (entry.state === 'waiting') {
          assert.ok(description.endsWith(` · waits for ${waits.join(', ')}`), description);
          assert.match(tooltipText(child.item), new RegExp(`Waits for:\\*?\\*? ${waits.join(', ')}`));
        }
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
    assert.ok(
      t002.children.some((c) => idOf(c) === 'task-004'),
      'task-004 is under task-002',
    );
    // A join shows once, in full under its first dependency; under the other it points there.
    const full = t002.children.find((c) => idOf(c) === 'task-004')!;
    assert.match(String(full.item.description), / · also after task-003$/);
    const pointer = under(roots, 'task-003').find((c) => idOf(c) === 'task-004');
    assert.ok(pointer, 'and under task-003 too');
    assert.match(String(pointer.item.description), / · shown under task-002$/);
    assert.equal(pointer.item.collapsibleState, vscode.TreeItemCollapsibleState.None);
    assert.notEqual(pointer.item.id, full.item.id);
    await vscode.commands.executeCommand(COMMANDS.viewByState);
    assert.equal(api.views.tasks.mode, 'state');
  });

  it('opens a task on a click whatever its state: its details, and a click changes nothing', async () => {
    const before = fs.readFileSync(tasksFile(), 'utf8');
    for (const id of ['task-005', 'task-003', 'task-001']) {
      const row = (await shownTasks(api)).flatMap((g) => g.children).find((c) => idOf(c) === id)!;
      if (api.model.snapshot?.byId.get(id)?.state === 'running') continue;
      await vscode.commands.executeCommand(row.item.command!.command, ...(row.item.command!.arguments ?? []));
      const doc = await eventually(`the details of ${id}`, () =>
        vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'launchpad-task' && d.uri.path === `/${id}.md`),
      );
      const entry = api.model.snapshot!.byId.get(id)!;
      const text = doc.getText().replace(/\\([\\`*_{}[\]()#+\-.!|<>~&$])/g, '$1');
      assert.ok(text.startsWith(`# ${entry.title}\n`), text);
      assert.match(text, /\*\*State:\*\* /);
      assert.match(text, /\*\*Validation:\*\* /);
    }
    assert.equal(fs.readFileSync(tasksFile(), 'utf8'), before, 'a click retried or changed nothing');
  });

  it('reveals a task by id (the progress log links to it)', async () => {
    await vscode.commands.executeCommand(COMMANDS.revealTask, 'task-002');
    await eventually(
      'task-002 selected',
      () =>
        api.views.tasksView.selection[0]?.kind === 'task' && (api.views.tasksView.selection[0] as { taskId: string }).taskId === 'task-002',
    );
  });

  it('follows a task added by the CLI in another process', async () => {
    const id = (await cli('add', 'Added from a terminal', '--validate', 'true', '--files', 'src/live/')).trim();
    await eventually(`${id} in the tasks view`, async () => {
      const groups = await shownTasks(api);
      return groups.some((g) => g.children.some((c) => idOf(c) === id));
    });
  });

  it('lays a task row out for a narrow sidebar: the title, then id, attempts, priority (screenshot tasks-default-width)', async () => {
    const good = fs.readFileSync(tasksFile(), 'utf8');
    const row = (id: string, title: string, extra: Record<string, unknown>) => ({
      id,
      title,
      status: 'pending',
      priority: 'P1',
      depends_on: [],
      attempts: 0,
      max_attempts: 3,
      validation: { command: 'true' },
      error_log: [],
      ...extra,
    });
    const checkpoint = { step: 2, total: 5, description: 'tokenizer done', timestamp: '2026-01-01T00:00:00Z' };
    const failed = ['[TEST_FAIL] npm test exited with 1'];
    const rows = [
      row('task-011', 'Parse the front matter of every page', { status: 'in_progress', attempts: 1, checkpoints: [checkpoint] }),
      row('task-012', 'Render the index page', { priority: 'P0' }),
      row('task-013', 'Add slugify() to src/text', { status: 'failed', attempts: 1, error_log: failed }),
      row('task-014', 'Use slugify in page titles', { status: 'failed', attempts: 3, priority: 'P2', error_log: failed }),
      row('task-015', 'Write the docs', { validation: { command: null } }),
      row('task-016', 'Publish the site', { depends_on: ['task-011'] }),
      row('task-017', 'Link the pages', { depends_on: ['task-014'] }),
      row('task-018', 'Set up the repository', { status: 'completed', attempts: 2 }),
    ];
    // label, description, group: what a person reads at the default sidebar width, in order.
    const expected: Array<[string, string, string]> = [
      ['Parse the front matter of every page', 'task-011 · interrupted · 1/3 · P1 · step 2/5', STATE_LABELS.interrupted],
      ['Render the index page', 'task-012 · 0/3 · P0', STATE_LABELS.ready],
      ['Add slugify() to src/text', 'task-013 · 1/3 · P1', STATE_LABELS.retryable],
      ['Use slugify in page titles', 'task-014 · 3/3 · P2', STATE_LABELS.failed],
      ['Link the pages', 'task-017 · 0/3 · P1 · waits for task-014', STATE_LABELS.blocked],
      ['Write the docs', 'task-015 · 0/3 · P1', STATE_LABELS.needs_validation],
      ['Publish the site', 'task-016 · 0/3 · P1 · waits for task-011', STATE_LABELS.waiting],
      ['Set up the repository', 'task-018 · 2/3 · P1', STATE_LABELS.completed],
    ];
    try {
      fs.writeFileSync(tasksFile(), JSON.stringify({ version: 3, tasks: rows }, null, 2));
      const groups = await eventually('the rows of the file', async () => {
        const shown = await shownTasks(api);
        return shown.some((g) => g.children.some((c) => idOf(c) === 'task-018')) ? shown : undefined;
      });
      const seen = groups.flatMap((g) => g.children.map((c): [string, string, string] => [c.label, String(c.item.description), g.label]));
      assert.deepEqual(seen, expected);
      const t3 = groups.flatMap((g) => g.children).find((c) => idOf(c) === 'task-013')!;
      assert.equal(
        t3.item.accessibilityInformation?.label,
        'Add slugify() to src/text (task-013), Failed, will be retried, attempts 1 of 3, priority P1',
      );
      // In progress with no run holding it (Ctrl-C, a stopped run): interrupted, as `launchpad status` says.
      const t1 = groups.flatMap((g) => g.children).find((c) => idOf(c) === 'task-011')!;
      assert.equal((t1.item.iconPath as vscode.ThemeIcon).id, 'debug-pause');
      assert.match(tooltipText(t1.item), /State:.* Interrupted \(the next run resumes it\)/);
      assert.match(await cli('status'), /task-011: .* - interrupted: the next run resumes it/);
      assert.match(tooltipText(t3.item), /State:.* Failed, will be retried · P1 · attempts 1\/3/);

      // The dependency view has no groups: the state is a word at the front.
      await vscode.commands.executeCommand(COMMANDS.viewByDependency);
      const roots = await shownTasks(api, 2);
      const t4 = roots.find((r) => idOf(r) === 'task-014')!;
      assert.equal(t4.label, 'Use slugify in page titles');
      assert.equal(t4.item.description, 'task-014 · failed · 3/3 · P2');
      assert.equal(t4.children.find((c) => idOf(c) === 'task-017')?.item.description, 'task-017 · blocked · 0/3 · P1 · waits for task-014');
      await vscode.commands.executeCommand(COMMANDS.viewByState);

      await vscode.commands.executeCommand('workbench.view.extension.launchpad');
      await api.views.revealTask('task-018');
      const screen = await requestScreen('tasks-default-width');
      if (screen) {
        // Every title is on screen, in the view's order (the text is whole even where the row is cut).
        const at = expected.map(([title]) => screen.text.sidebar.indexOf(title));
        assert.ok(
          at.every((i, n) => i >= 0 && (n === 0 || i > at[n - 1]!)),
          `the titles in order in:\n${screen.text.sidebar}`,
        );
      }
    } finally {
      fs.writeFileSync(tasksFile(), good);
    }
    await eventually('the tasks back', async () => api.model.snapshot?.byId.has('task-001'));
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
