// The Tasks view: the task DAG grouped by state, or each task under what it depends on. A thin
// provider: every call reads the model's current snapshot; the only state kept here is the
// view's own (the mode, how far long lists are paged).
import * as vscode from 'vscode';

import type { RevertedTask } from '../../core/integration/state';
import { countOf } from '../../core/tasks/counts';
import { COMMANDS } from '../contributions';
import { fencedBlock } from '../markdown';
import type { StateModel, StateSnapshot, TaskEntry } from '../model/stateModel';
import { STATE_LABELS, stateIcon, taskIcon, taskRow, taskTooltip, unfinishedDependencies } from './taskPresentation';
import {
  type DependencyIndex,
  dependencyIndex,
  groupByState,
  groupKey,
  type GroupNode,
  limitShowing,
  page,
  PAGE_SIZE,
  pathOf,
  pathTo,
  ROOT_KEY,
  type TaskItemNode,
  taskKey,
  type TaskNode,
  type TasksViewMode,
} from './taskTree';

export class TasksProvider implements vscode.TreeDataProvider<TaskNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<TaskNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly subscription: vscode.Disposable;
  /** How many children each list shows (view state, not task state). */
  private readonly limits = new Map<string, number>();
  /** Derived per snapshot, dropped with it. */
  private readonly groups = new WeakMap<StateSnapshot, ReturnType<typeof groupByState>>();
  private readonly indexes = new WeakMap<StateSnapshot, DependencyIndex>();
  private lastKey: string | undefined;

  constructor(
    private readonly model: StateModel,
    private viewMode: TasksViewMode,
  ) {
    this.subscription = model.onDidChange((s) => {
      // Only a change the view shows refreshes it. A refresh drops every row VS Code knows; a
      // request for the children of a group already shown, arriving meanwhile, gets nothing,
      // and the group stays empty until the next refresh (which, in a quiet workspace, never
      // comes). The first snapshot is what the view's first request waits for: nothing to redo.
      const key = shownKey(s);
      const first = this.lastKey === undefined;
      if (key === this.lastKey) return;
      this.lastKey = key;
      if (!first) this.changed.fire(undefined);
    });
  }

  get mode(): TasksViewMode {
    return this.viewMode;
  }

  setMode(mode: TasksViewMode): void {
    if (mode === this.viewMode) return;
    this.viewMode = mode;
    this.changed.fire(undefined);
  }

  /** The "show more" item of a list: one page more. */
  showMore(listKey: string): void {
    this.limits.set(listKey, this.limit(listKey) + PAGE_SIZE);
    this.changed.fire(undefined);
  }

  async getChildren(node?: TaskNode): Promise<TaskNode[]> {
    const s = await this.model.whenLoaded();
    if (!node) {
      if (s.error) return [{ kind: 'error', key: 'error', message: s.error.message }];
      if (this.viewMode === 'state') {
        return [...this.groupsOf(s)].map(([state]): GroupNode => ({
          kind: 'group',
          key: groupKey(state),
          state,
          count: countOf(s.counts, state),
        }));
      }
      return this.paged(ROOT_KEY, this.indexOf(s).roots, undefined, (id) => this.depNode(s, [id], undefined));
    }
    if (node.kind === 'group') {
      const ids = this.groupsOf(s).get(node.state) ?? [];
      return this.paged(node.key, ids, node, (id) => stateNode(id, node));
    }
    if (node.kind === 'task' && this.viewMode === 'dependency' && node.expandable) {
      const path = pathOf(node);
      const ids = this.indexOf(s).dependents.get(node.taskId) ?? [];
      return this.paged(node.key, ids, node, (id) => this.depNode(s, [...path, id], node));
    }
    return [];
  }

  getParent(node: TaskNode): TaskNode | undefined {
    return node.kind === 'task' || node.kind === 'more' ? node.parent : undefined;
  }

  getTreeItem(node: TaskNode): vscode.TreeItem {
    switch (node.kind) {
      case 'error':
        return errorItem(node.message, this.model.snapshot?.paths.tasks);
      case 'group': {
        const item = new vscode.TreeItem(STATE_LABELS[node.state], vscode.TreeItemCollapsibleState.Expanded);
        item.id = node.key;
        item.description = String(node.count);
        item.iconPath = stateIcon(node.state, false);
        item.contextValue = `group:${node.state}`;
        return item;
      }
      case 'more': {
        const item = new vscode.TreeItem(`Show ${Math.min(node.hidden, PAGE_SIZE)} more…`, vscode.TreeItemCollapsibleState.None);
        item.id = node.key;
        item.description = `${node.hidden} not shown`;
        item.iconPath = new vscode.ThemeIcon('ellipsis');
        item.command = { command: COMMANDS.showMore, title: 'Show More', arguments: [node.listKey] };
        return item;
      }
      case 'task':
        return this.taskItem(node);
    }
  }

  private taskItem(node: TaskItemNode): vscode.TreeItem {
    const s = this.model.snapshot;
    const t = s?.byId.get(node.taskId);
    const collapsible = node.expandable ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None;
    if (!s || !t) {
      const bare = new vscode.TreeItem(node.taskId, collapsible);
      bare.id = node.key;
      return bare;
    }
    const waitsFor = t.state === 'waiting' || t.state === 'blocked' ? unfinishedDependencies(t, s.byId) : undefined;
    const home = this.viewMode === 'dependency' && node.shownUnder === undefined ? this.indexOf(s).home.get(t.id) : undefined;
    const row = taskRow(t, {
      stateWord: this.viewMode === 'dependency',
      cycle: node.cycle,
      waitsFor,
      shownUnder: node.shownUnder,
      alsoAfter: home ? t.depends_on.filter((d) => d !== home && s.byId.has(d)) : undefined,
    });
    const item = new vscode.TreeItem(row.label, collapsible);
    item.id = node.key;
    item.description = row.description;
    item.accessibilityInformation = { label: row.accessible };
    item.iconPath = taskIcon(t);
    item.tooltip = taskTooltip(t, { waitsFor, reverted: revertOf(s, t.id) });
    item.contextValue = taskContextValue(t, s);
    item.command = { command: COMMANDS.taskClicked, title: 'Open Task', arguments: [t.id] };
    return item;
  }

  /**
   * The node of a task as the current mode shows it (the first place it appears in the
   * dependency view), paging its lists far enough to include it. Undefined when it is not shown.
   */
  async nodeOf(taskId: string): Promise<TaskItemNode | undefined> {
    const s = await this.model.whenLoaded();
    const entry = s.byId.get(taskId);
    if (!entry || s.error) return undefined;
    let grew = false;
    const include = (listKey: string, ids: readonly string[], id: string) => {
      const limit = this.limit(listKey);
      const wanted = limitShowing(ids.indexOf(id), limit);
      if (wanted !== limit) {
        this.limits.set(listKey, wanted);
        grew = true;
      }
    };
    let node: TaskItemNode | undefined;
    if (this.viewMode === 'state') {
      const ids = this.groupsOf(s).get(entry.state) ?? [];
      const group: GroupNode = { kind: 'group', key: groupKey(entry.state), state: entry.state, count: ids.length };
      include(group.key, ids, taskId);
      node = stateNode(taskId, group);
    } else {
      const index = this.indexOf(s);
      const path = pathTo(index, taskId);
      if (!path) return undefined;
      let parent: TaskItemNode | undefined;
      for (let i = 0; i < path.length; i++) {
        const list = i === 0 ? index.roots : (index.dependents.get(path[i - 1]!) ?? []);
        include(parent?.key ?? ROOT_KEY, list, path[i]!);
        parent = this.depNode(s, path.slice(0, i + 1), parent);
      }
      node = parent;
    }
    if (grew) this.changed.fire(undefined);
    return node;
  }

  private paged(listKey: string, ids: readonly string[], parent: TaskNode | undefined, make: (id: string) => TaskNode): TaskNode[] {
    const { shown, hidden } = page(ids, this.limit(listKey));
    const nodes = shown.map(make);
    if (hidden) nodes.push({ kind: 'more', key: `${listKey}#more`, listKey, parent, hidden });
    return nodes;
  }

  private depNode(s: StateSnapshot, path: string[], parent: TaskItemNode | undefined): TaskItemNode {
    const id = path.at(-1)!;
    const index = this.indexOf(s);
    const cycle = path.indexOf(id) < path.length - 1;
    // A task with several dependencies is shown in full once, under its home; elsewhere it points there.
    const home = index.home.get(id);
    const shownUnder = parent && home !== parent.taskId ? (home ?? '') : undefined;
    const expandable = !cycle && shownUnder === undefined && (index.dependents.get(id)?.length ?? 0) > 0;
    return { kind: 'task', key: taskKey('dependency', path), taskId: id, parent, cycle, expandable, shownUnder };
  }

  private limit(listKey: string): number {
    return this.limits.get(listKey) ?? PAGE_SIZE;
  }

  private groupsOf(s: StateSnapshot) {
    let g = this.groups.get(s);
    if (!g) this.groups.set(s, (g = groupByState(s.tasks)));
    return g;
  }

  private indexOf(s: StateSnapshot): DependencyIndex {
    let i = this.indexes.get(s);
    if (!i) this.indexes.set(s, (i = dependencyIndex(s.tasks)));
    return i;
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}

/** What of a snapshot the Tasks view shows: equal keys, equal rows. */
function shownKey(s: StateSnapshot): string {
  return JSON.stringify([
    s.paths.root,
    s.exists,
    s.error?.message,
    s.fileText,
    !!s.activeSession,
    s.worktrees.map((w) => w.task),
    [...s.withAttempts],
  ]);
}

function stateNode(id: string, group: GroupNode): TaskItemNode {
  return { kind: 'task', key: taskKey('state', [id]), taskId: id, parent: group, cycle: false, expandable: false };
}

/** `task:<state>`, plus `:worktree` and `:transcript` when it has them (package.json menus match these). */
export function taskContextValue(t: TaskEntry, s: StateSnapshot): string {
  let value = `task:${t.state}`;
  if (s.worktrees.some((w) => w.task === t.id)) value += ':worktree';
  if (s.withAttempts.has(t.id)) value += ':transcript';
  return value;
}

function errorItem(message: string, tasksFile: string | undefined): vscode.TreeItem {
  const first = message.split('\n')[0]!;
  const item = new vscode.TreeItem(first, vscode.TreeItemCollapsibleState.None);
  item.id = 'error';
  item.iconPath = new vscode.ThemeIcon('error', new vscode.ThemeColor('list.errorForeground'));
  item.tooltip = new vscode.MarkdownString(fencedBlock(message)).appendMarkdown(
    "\nClick to open the file and fix it. A run never replaces a file a person changed: to go back to the version before Launchpad's last write instead, run `launchpad restore-backup` in a terminal (the broken file is kept as `harness-tasks.json.corrupt-<time>`).",
  );
  item.contextValue = 'taskFileError';
  if (tasksFile) item.command = { command: 'vscode.open', title: 'Open harness-tasks.json', arguments: [vscode.Uri.file(tasksFile)] };
  return item;
}

/** The integration gate's newest revert of the task's merge. */
export function revertOf(s: StateSnapshot, id: string): RevertedTask | undefined {
  return s.integration?.reverted.filter((r) => r.task === id).at(-1);
}
