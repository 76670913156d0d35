// The Worktrees view: the repository's task worktrees (git worktree list, branches harness-<id>),
// the task each serves and that task's state; then, when session_config.worktree_pool keeps any,
// one "Worktree pool" node with a row per idle slot (kept out of the task rows: no task owns
// one). Read from the model's snapshot on every call.
import * as vscode from 'vscode';

import type { PoolSlot } from '../../core/worktrees/poolReport';
import { describePool, describeSlot, describeStates } from '../../core/worktrees/poolText';
import { toWorktree, type Worktree } from '../commands/args';
import { escapeMarkdown } from '../markdown';
import type { StateModel, StateSnapshot } from '../model/stateModel';
import { STATE_LABELS, stateIcon } from './taskPresentation';

/** A task's row of the view; commands get it as their argument (commands/args.ts). */
export interface WorktreeNode extends Worktree {
  kind: 'worktree';
}

/** The pool's node (the Clear Worktree Pool command's argument from its menu). */
export interface PoolNode {
  kind: 'pool';
}

/** One slot of the pool. */
export interface PoolSlotNode {
  kind: 'poolSlot';
  path: string;
}

export type WorktreesViewNode = WorktreeNode | PoolNode | PoolSlotNode;

export class WorktreesProvider implements vscode.TreeDataProvider<WorktreesViewNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<WorktreesViewNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly model: StateModel) {
    // As the Tasks view does: refreshed only when what it shows changed (tasksProvider.ts says why).
    let lastKey: string | undefined;
    this.subscription = model.onDidChange((s) => {
      const key = JSON.stringify([
        s.worktrees.map((w) => [w.path, w.branch, w.task, s.byId.get(w.task)?.state, s.byId.get(w.task)?.title]),
        s.pool,
      ]);
      const first = lastKey === undefined;
      if (key === lastKey) return;
      lastKey = key;
      if (!first) this.changed.fire(undefined);
    });
  }

  async getChildren(node?: WorktreesViewNode): Promise<WorktreesViewNode[]> {
    const s = await this.model.whenLoaded();
    if (node?.kind === 'pool') return (s.pool?.slots ?? []).map((slot) => ({ kind: 'poolSlot', path: slot.path }));
    if (node) return [];
    const tasks: WorktreesViewNode[] = s.worktrees.map((w) => ({ kind: 'worktree', ...toWorktree(w) }));
    return s.pool?.slots.length ? [...tasks, { kind: 'pool' }] : tasks;
  }

  getTreeItem(node: WorktreesViewNode): vscode.TreeItem {
    const s = this.model.snapshot;
    if (node.kind === 'pool') return poolItem(s);
    if (node.kind === 'poolSlot')
      return slotItem(
        s?.pool?.slots.find((slot) => slot.path === node.path),
        node.path,
      );
    const entry = s?.byId.get(node.taskId);
    const item = new vscode.TreeItem(entry ? `${node.taskId}: ${entry.title}` : node.taskId, vscode.TreeItemCollapsibleState.None);
    item.id = `worktree:${node.path}`;
    const state = entry ? STATE_LABELS[entry.state].toLowerCase() : 'not in harness-tasks.json';
    item.description = `${state} · ${node.branch}`;
    item.iconPath = entry ? stateIcon(entry.state) : new vscode.ThemeIcon('git-branch');
    const task = entry ? `${entry.id}: ${entry.title} (${state})` : `${node.taskId} (${state})`;
    item.tooltip = new vscode.MarkdownString(
      [
        `**Worktree:** ${escapeMarkdown(node.path)}`,
        `**Branch:** ${escapeMarkdown(node.branch)}`,
        `**Task:** ${escapeMarkdown(task)}`,
      ].join('\n\n'),
    );
    item.contextValue = `worktree:${entry?.state ?? 'orphaned'}`;
    return item;
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}

function poolItem(s: StateSnapshot | undefined): vscode.TreeItem {
  const pool = s?.pool;
  const n = pool?.slots.length ?? 0;
  const item = new vscode.TreeItem(`Worktree pool: ${n} slot${n === 1 ? '' : 's'}`, vscode.TreeItemCollapsibleState.Collapsed);
  item.id = 'worktree-pool';
  item.iconPath = new vscode.ThemeIcon('archive');
  if (pool) {
    item.description = describeStates(pool);
    item.tooltip = new vscode.MarkdownString(
      [
        `**Worktree pool:** ${escapeMarkdown(pool.dir)}`,
        `**session_config.worktree_pool:** ${pool.size}`,
        escapeMarkdown(describePool(pool)),
        'Idle worktrees kept prepared for the next tasks. Clear Worktree Pool removes the idle ones (a slot a live process claimed, or on a branch, is kept); `launchpad pool --disk` shows the disk they hold.',
      ].join('\n\n'),
    );
  }
  item.contextValue = 'pool';
  return item;
}

function slotItem(slot: PoolSlot | undefined, path: string): vscode.TreeItem {
  const item = new vscode.TreeItem(slot?.name ?? path, vscode.TreeItemCollapsibleState.None);
  item.id = `pool-slot:${path}`;
  if (!slot) return item;
  item.description = describeSlot(slot);
  item.iconPath = new vscode.ThemeIcon(SLOT_ICONS[slot.state]);
  item.tooltip = new vscode.MarkdownString([`**Slot:** ${escapeMarkdown(slot.path)}`, escapeMarkdown(describeSlot(slot))].join('\n\n'));
  item.contextValue = `poolSlot:${slot.state}`;
  return item;
}

const SLOT_ICONS: Record<PoolSlot['state'], string> = {
  prepared: 'pass',
  claimed: 'sync',
  stale_claim: 'warning',
  not_prepared: 'circle-outline',
  on_branch: 'git-branch',
  not_worktree: 'question',
};
