// Helpers for the Launchpad host tests: the extension's exports, the workspace, the tree items a
// person would see (through the providers, not the DOM), the CLI, git.
import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as vscode from 'vscode';

import type { LaunchpadApi } from '../../src/vscode/extension';
import type { TaskNode } from '../../src/vscode/views/taskTree';

export const EXTENSION_ID = 'launchpad.launchpad';

export async function launchpad(): Promise<LaunchpadApi> {
  const ext = vscode.extensions.getExtension<LaunchpadApi>(EXTENSION_ID);
  if (!ext) throw new Error(`${EXTENSION_ID} is not installed`);
  return ext.isActive ? ext.exports : await ext.activate();
}

export function workspaceRoot(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) throw new Error('no workspace folder');
  return folder.uri.fsPath;
}

export const tasksFile = () => path.join(workspaceRoot(), 'harness-tasks.json');
export const progressFile = () => path.join(workspaceRoot(), 'harness-progress.txt');

/** The repository's CLI build (the tests run from its out/ folder). */
export const CLI = path.resolve(__dirname, '../../../dist/cli.js');

/** The CLI, started by the test: the workspace is the test's own, so its commands are approved and nothing is recorded. */
/**
 * The CLI as a person runs it in a terminal. Never synchronous: a blocked extension host cannot
 * finish what it holds (the worktrees lock across a `git worktree list`), and a CLI waiting for
 * that would wait for ever.
 */
export function cli(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [CLI, ...args, '--dir', workspaceRoot()],
      { encoding: 'utf8', env: { ...process.env, ELECTRON_RUN_AS_NODE: '1', LAUNCHPAD_TRUST: '1' }, timeout: 120_000 },
      (err, stdout, stderr) => (err ? reject(new Error(`launchpad ${args.join(' ')}: ${err.message}\n${stderr}`)) : resolve(stdout)),
    ),
  );
}

export function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: workspaceRoot(), encoding: 'utf8' });
}

export interface ShownItem {
  node: TaskNode;
  item: vscode.TreeItem;
  label: string;
  children: ShownItem[];
}

/** The Tasks view as shown, `depth` levels deep (groups → tasks, or the dependency tree). */
export async function shownTasks(api: LaunchpadApi, depth = 2, parent?: TaskNode): Promise<ShownItem[]> {
  const nodes = await api.views.tasks.getChildren(parent);
  return Promise.all(
    nodes.map(async (node) => {
      const item = api.views.tasks.getTreeItem(node);
      const label = typeof item.label === 'string' ? item.label : (item.label?.label ?? '');
      const children = depth > 1 ? await shownTasks(api, depth - 1, node) : [];
      return { node, item, label, children };
    }),
  );
}

/** A task's row in the Tasks view (state groups), with the group it is under. */
export async function shownTask(api: LaunchpadApi, id: string): Promise<ShownItem & { group: string }> {
  await api.model.refresh();
  for (const g of await shownTasks(api))
    for (const c of g.children) if (c.node.kind === 'task' && c.node.taskId === id) return { group: g.label, ...c };
  throw new Error(`${id} is not in the tasks view`);
}

/** A tooltip's text with Markdown escapes undone, as a person reads it. */
export function tooltipText(item: vscode.TreeItem): string {
  const t = item.tooltip;
  const text = typeof t === 'string' ? t : (t?.value ?? '');
  return text.replace(/&nbsp;/g, ' ').replace(/\\([\\`*_{}[\]()#+\-.!|<>~&$])/g, '$1');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls an async check until it holds; the last failure's message explains a timeout. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 90_000,
): Promise<T> {
  let last: unknown;
  for (const end = Date.now() + timeoutMs; Date.now() < end; await sleep(150)) {
    try {
      const value = await check();
      if (value) return value;
    } catch (err) {
      last = err;
    }
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

export function readTaskFile(): { tasks: Array<Record<string, unknown> & { id: string }> } & Record<string, unknown> {
  return JSON.parse(fs.readFileSync(tasksFile(), 'utf8'));
}

/** Edits the task file as a person would (written in place, outside the state lock). */
export function editTaskFile(edit: (file: ReturnType<typeof readTaskFile>) => void): void {
  const file = readTaskFile();
  edit(file);
  fs.writeFileSync(tasksFile(), JSON.stringify(file, null, 2) + '\n');
}

/**
 * Runs a command that asks in quick picks and answers each as a person at the keyboard would:
 * Enter (the first item, which is the action) or Esc, until the command returns.
 */
export async function answeringPicks<T>(start: () => Thenable<T>, key: 'enter' | 'esc' = 'enter'): Promise<T> {
  let settled = false;
  const running = Promise.resolve(start()).finally(() => (settled = true));
  const press = key === 'enter' ? 'workbench.action.acceptSelectedQuickOpenItem' : 'workbench.action.closeQuickOpen';
  await eventually(
    'the command to return',
    async () => {
      // Pressed only once the pick has had time to show its items: Enter on a pick whose items
      // have not arrived yet accepts nothing, which the command reads as a cancel.
      await sleep(300);
      if (!settled) await vscode.commands.executeCommand(press);
      await sleep(100);
      return settled;
    },
    30_000,
  );
  return running;
}

/**
 * An agent that says it started, then waits until `release` exists in its gate folder before it
 * does its task as the fixture's agent does: a run can be caught with its agents running.
 * Returns the agent's path and the gate's folder ($GATE_DIR, which the agent reads).
 */
export function gatedAgent(): { agent: string; gate: string; release(): void } {
  const gate = fs.mkdtempSync(path.join(path.dirname(workspaceRoot()), 'gate-'));
  const agent = path.join(gate, 'gated-agent.sh');
  fs.writeFileSync(
    agent,
    [
      '#!/bin/sh',
      'echo "gated agent: $LAUNCHPAD_TASK_ID attempt $LAUNCHPAD_ATTEMPT started"',
      'echo "$LAUNCHPAD_TASK_ID" >> "$GATE_DIR/started"',
      'while [ ! -f "$GATE_DIR/release" ]; do sleep 0.2; done',
      `exec sh '${path.join(workspaceRoot(), 'tools/agent.sh')}'`,
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return { agent, gate, release: () => fs.writeFileSync(path.join(gate, 'release'), '') };
}
