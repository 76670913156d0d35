// Commands on a task's worktree: open it in a new window, open a terminal there, compare it with
// its base, remove it. All need a trusted workspace (they start git, a shell, or a window on it).
import * as vscode from 'vscode';

import { Git } from '../../core/git/git';
import { confirm } from '../confirm';
import { COMMANDS } from '../contributions';
import type { StateSnapshot } from '../model/stateModel';
import { requireTrust } from '../trust';
import { toWorktree, type Worktree, worktreeOf } from './args';
import { compareWorktree } from './compareWorktree';
import type { CommandDeps, Handlers } from './deps';
import { reportEditError } from './errors';

type WorktreeCommand =
  typeof COMMANDS.openWorktree | typeof COMMANDS.openWorktreeTerminal | typeof COMMANDS.compareWorktree | typeof COMMANDS.removeWorktree;

export function worktreeCommands(deps: CommandDeps): Handlers<WorktreeCommand> {
  const withWorktree = (action: string, body: (wt: Worktree) => unknown) => async (arg: unknown) => {
    if (!requireTrust(action)) return;
    const s = deps.model.snapshot ?? (await deps.model.refresh());
    const wt = worktreeOf(arg, s) ?? (arg === undefined ? await pickWorktree(s) : undefined);
    if (!wt) {
      if (arg !== undefined) void vscode.window.showInformationMessage('Launchpad: that task has no worktree (any more).');
      return;
    }
    await body(wt);
  };
  return {
    [COMMANDS.openWorktree]: withWorktree('Open Worktree', (wt) =>
      vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(wt.path), { forceNewWindow: true }),
    ),
    [COMMANDS.openWorktreeTerminal]: withWorktree('Open Terminal in Worktree', (wt) =>
      vscode.window.createTerminal({ name: `${wt.taskId} worktree`, cwd: wt.path }).show(),
    ),
    [COMMANDS.compareWorktree]: withWorktree('Compare Worktree', (wt) => compareWorktree(deps.model, wt)),
    [COMMANDS.removeWorktree]: withWorktree('Remove Worktree', (wt) => removeWorktree(deps, wt)),
  };
}

async function pickWorktree(s: StateSnapshot): Promise<Worktree | undefined> {
  if (!s.worktrees.length) {
    void vscode.window.showInformationMessage('Launchpad: no task worktrees.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    s.worktrees.map((w) => ({ label: w.task, description: s.byId.get(w.task)?.title, detail: w.path, w })),
    { placeHolder: 'A task worktree' },
  );
  return picked && toWorktree(picked.w);
}

/**
 * Asks first (a quick pick); asks again when the worktree may be in use (a run here or elsewhere, or its task
 * in progress). The branch and its commits stay: a later run's recovery picks them up.
 */
async function removeWorktree({ model, runs, logger }: CommandDeps, wt: Worktree): Promise<void> {
  const s = model.snapshot;
  const entry = s?.byId.get(wt.taskId);
  const remove = await confirm({
    title: `Remove the worktree of ${wt.taskId}?`,
    action: 'Remove',
    detail: `${wt.path}: uncommitted changes in it are lost. Its commits stay on branch ${wt.branch}.`,
  });
  if (!remove) return;

  const inUse = entry?.status === 'in_progress' || runs.active !== undefined || s?.activeSession !== undefined;
  if (inUse) {
    const why =
      entry?.status === 'in_progress'
        ? `${wt.taskId} is in progress: an agent or its validation may be working in this worktree right now`
        : 'a Launchpad run is going';
    const again = await confirm({
      title: `${why}. Remove it anyway?`,
      action: 'Remove Anyway',
      detail: 'The running attempt fails, or the next run recovers the task from its branch.',
    });
    if (!again) return;
  }
  try {
    await new Git(model.stateRoot()?.root ?? wt.path).removeWorktree(wt.path);
    logger.info(`removed worktree ${wt.path} (${wt.taskId}) at the user's request`);
  } catch (err) {
    reportEditError('remove worktree', err, logger);
  } finally {
    await model.refresh();
  }
}
