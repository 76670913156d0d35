// The Worktrees view: the repository's task worktrees (git worktree list, branches harness-<id>),
// the task each serves and that task's state. Read from the model's snapshot on every call.
import * as vscode from 'vscode';

import { toWorktree, type Worktree } from '../commands/args';
import { escapeMarkdown } from '../markdown';
import type { StateModel } from '../model/stateModel';
import { STATE_LABELS, stateIcon } from './taskPresentation';

/** A row of the view; commands get it as their argument (commands/args.ts). */
export interface WorktreeNode extends Worktree {
  kind: 'worktree';
}

export class WorktreesProvider implements vscode.TreeDataProvider<WorktreeNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<WorktreeNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly model: StateModel) {
    // As the Tasks view does: refreshed only when what it shows changed (tasksProvider.ts says why).
    let lastKey: string | undefined;
    this.subscription = model.onDidChange((s) => {
      const key = JSON.stringify(s.worktrees.map((w) => [w.path, w.branch, w.task, s.byId.get(w.task)?.state, s.byId.get(w.task)?.title]));
      const first = lastKey === undefined;
      if (key === lastKey) return;
      lastKey = key;
      if (!first) this.changed.fire(undefined);
    });
  }

  async getChildren(node?: WorktreeNode): Promise<WorktreeNode[]> {
    if (node) return [];
    const s = await this.model.whenLoaded();
    return s.worktrees.map((w) => ({ kind: 'worktree', ...toWorktree(w) }));
  }

  getTreeItem(node: WorktreeNode): vscode.TreeItem {
    const entry = this.model.snapshot?.byId.get(node.taskId);
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
