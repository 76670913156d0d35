// The Task Graph panel in the host: a diamond of twelve tasks drawn once each, one arrow per
// dependency, the critical path marked, the drawing following the task file, a click on a node
// opening its task. What was drawn is what the webview reads back from its own SVG.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { COMMANDS } from '../../src/vscode/contributions';
import type { DrawnGraph } from '../../src/vscode/dag/protocol';
import type { LaunchpadApi } from '../../src/vscode/extension';
import { requestScreenshot } from './host';
import { editTaskFile, eventually, EXTENSION_ID, launchpad, tasksFile } from './launchpad';
import { task } from './setup';

/**
 * d01 fans out to d02..d05, which meet again in d11 through three branches; d12 follows it.
 * d01 and d05 are done, so the longest unfinished chain is d02 → d06 → d09 → d11 → d12.
 */
const DIAMOND = [
  task('d01', 'Set up the site generator', [], { status: 'completed', attempts: 1 }),
  task('d02', 'Parse the front matter', ['d01'], { status: 'in_progress', attempts: 1 }),
  task('d03', 'Add slugify()', ['d01'], { status: 'failed', attempts: 1, error_log: ['[TASK_FAILURE] slugify drops accents'] }),
  task('d04', 'Load the site config', ['d01']),
  task('d05', 'Copy the static assets', ['d01'], { status: 'completed', attempts: 1 }),
  task('d06', 'Render markdown pages', ['d02']),
  task('d07', 'Build page URLs from the titles and dates', ['d03', 'd04']),
  task('d08', 'Fingerprint the assets', ['d05'], { validation: { command: null } }),
  task('d09', 'Apply the page templates', ['d06']),
  task('d10', 'Write the asset manifest', ['d08']),
  task('d11', 'Write the site to disk', ['d09', 'd07', 'd10']),
  task('d12', 'Publish the site', ['d11']),
];
const EDGES = DIAMOND.flatMap((t) => t.depends_on.map((d) => `${d}→${t.id}`)).sort();

const edgeKeys = (d: DrawnGraph) => d.edges.map(([from, to]) => `${from}→${to}`).sort();

function closeGraph(): Thenable<unknown> {
  const tabs = vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .filter((t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.includes('launchpad.taskGraph'));
  return vscode.window.tabGroups.close(tabs);
}

describe('task graph', () => {
  let api: LaunchpadApi;
  let savedTasks: string;
  before(async () => {
    api = await launchpad();
    await api.model.whenLoaded();
    savedTasks = fs.readFileSync(tasksFile(), 'utf8');
    const file = { version: 3, session_config: {}, tasks: DIAMOND, session_count: 0 };
    fs.writeFileSync(tasksFile(), JSON.stringify(file, null, 2) + '\n');
    await api.model.refresh();
  });
  after(async () => {
    await closeGraph();
    fs.writeFileSync(tasksFile(), savedTasks);
    await api.model.refresh();
  });

  it('has a button on the Tasks view title bar', () => {
    const manifest = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON;
    const command = (manifest.contributes.commands as { command: string; title: string }[]).find(
      (c) => c.command === COMMANDS.showTaskGraph,
    );
    assert.equal(command?.title, 'Show Task Graph');
    const button = (manifest.contributes.menus['view/title'] as { command: string; when: string; group: string }[]).find(
      (m) => m.command === COMMANDS.showTaskGraph,
    );
    assert.ok(button?.when.includes('view == launchpad.tasks') && button.group.startsWith('navigation'), JSON.stringify(button));
  });

  it('draws each task once, each dependency as one arrow, and marks the critical path', async () => {
    await vscode.commands.executeCommand(COMMANDS.showTaskGraph);
    const drawn = await eventually('the diamond drawn', () => {
      const d = api.graph.drawn();
      return d?.nodes.length === DIAMOND.length ? d : undefined;
    });
    assert.deepEqual(
      [...drawn.nodes].sort(),
      DIAMOND.map((t) => t.id),
    );
    assert.equal(new Set(drawn.nodes).size, drawn.nodes.length, 'no task drawn twice');
    assert.deepEqual(edgeKeys(drawn), EDGES);
    assert.deepEqual(drawn.critical, ['d02', 'd06', 'd09', 'd11', 'd12']);
    assert.deepEqual(
      {
        d01: drawn.states.d01,
        d02: drawn.states.d02,
        d03: drawn.states.d03,
        d04: drawn.states.d04,
        d08: drawn.states.d08,
        d11: drawn.states.d11,
      },
      // No run holds d02 here: in progress without a run is interrupted, as the Tasks view says.
      { d01: 'completed', d02: 'interrupted', d03: 'retryable', d04: 'ready', d08: 'needs_validation', d11: 'waiting' },
    );

    // Beside the Tasks view, whose title bar has the button that opens it.
    await vscode.commands.executeCommand('workbench.view.extension.launchpad');
    // The README shows it: --env UPDATE_MEDIA_SCREENSHOTS=1 refreshes media/screenshots/task-graph.png.
    await requestScreenshot('task-graph');
  });

  it('follows the task file: a task that completes and one that starts are drawn again, with the new path', async () => {
    await vscode.commands.executeCommand(COMMANDS.showTaskGraph);
    await eventually('the graph drawn as the file was', () => api.graph.drawn()?.states.d06 === 'waiting');
    editTaskFile((file) => {
      Object.assign(
        file.tasks.find((t) => t.id === 'd02')!,
        { status: 'completed' },
      );
      Object.assign(
        file.tasks.find((t) => t.id === 'd06')!,
        { status: 'in_progress', attempts: 1 },
      );
    });
    const drawn = await eventually('d06 drawn in progress (interrupted: no run holds it)', () => {
      const d = api.graph.drawn();
      return d?.states.d06 === 'interrupted' ? d : undefined;
    });
    assert.equal(drawn.states.d02, 'completed');
    // Four chains of four unfinished tasks now; the first in the file wins.
    assert.deepEqual(drawn.critical, ['d03', 'd07', 'd11', 'd12']);
    assert.deepEqual(edgeKeys(drawn), EDGES);
  });

  it('a click on a node opens its task in the Tasks view', async () => {
    await vscode.commands.executeCommand(COMMANDS.showTaskGraph);
    await eventually('the graph drawn', () => api.graph.drawn()?.nodes.includes('d04'));
    await api.graph.click('d04');
    await eventually('d04 selected in the Tasks view', () => {
      const selected = api.views.tasksView.selection[0];
      return selected?.kind === 'task' && selected.taskId === 'd04';
    });
  });

  it('ships the layout library only in the page, not in the extension bundle', () => {
    const root = vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath;
    // A name dagre's ranker uses, which survives minification.
    const marker = 'network-simplex';
    assert.ok(fs.readFileSync(path.join(root, 'dist', 'webview', 'dag.js'), 'utf8').includes(marker), 'dagre is in the page script');
    assert.ok(!fs.readFileSync(path.join(root, 'dist', 'extension.js'), 'utf8').includes(marker), 'dagre is not in dist/extension.js');
    assert.ok(fs.existsSync(path.join(root, 'dist', 'webview', 'dag.css')));
  });
});
