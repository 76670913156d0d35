// The two tree views and what commands need from them: reveal a task, switch the Tasks view's
// mode, page a long list. The mode is remembered per workspace.
import * as vscode from 'vscode';

import { CONTEXT_KEYS, VIEWS } from '../contributions';
import type { StateModel } from '../model/stateModel';
import { TasksProvider } from './tasksProvider';
import type { TaskNode, TasksViewMode } from './taskTree';
import { WorktreesProvider, type WorktreesViewNode } from './worktreesProvider';

const MODE_KEY = 'launchpad.tasksViewMode';

export interface Views {
  readonly tasks: TasksProvider;
  readonly worktrees: WorktreesProvider;
  readonly tasksView: vscode.TreeView<TaskNode>;
  readonly worktreesView: vscode.TreeView<WorktreesViewNode>;
  /** Shows the task in the Tasks view and selects it; false when it is not there. */
  revealTask(taskId: string): Promise<boolean>;
  setMode(mode: TasksViewMode): void;
}

export function registerViews(context: vscode.ExtensionContext, model: StateModel): Views {
  const saved = context.workspaceState.get<TasksViewMode>(MODE_KEY);
  const mode: TasksViewMode = saved === 'dependency' ? 'dependency' : 'state';
  const tasks = new TasksProvider(model, mode);
  const worktrees = new WorktreesProvider(model);
  const tasksView = vscode.window.createTreeView(VIEWS.tasks, { treeDataProvider: tasks, showCollapseAll: true });
  const worktreesView = vscode.window.createTreeView(VIEWS.worktrees, { treeDataProvider: worktrees });
  context.subscriptions.push(tasks, worktrees, tasksView, worktreesView);
  void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.tasksViewMode, mode);

  return {
    tasks,
    worktrees,
    tasksView,
    worktreesView,
    async revealTask(taskId) {
      const node = await tasks.nodeOf(taskId);
      if (!node) return false;
      await tasksView.reveal(node, { select: true, focus: true, expand: false });
      return true;
    },
    setMode(next) {
      tasks.setMode(next);
      void context.workspaceState.update(MODE_KEY, next);
      void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.tasksViewMode, next);
    },
  };
}
