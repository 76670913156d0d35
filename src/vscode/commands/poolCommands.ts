// Clear Worktree Pool: frees the disk of the idle worktrees session_config.worktree_pool keeps,
// through the core's clearing (each slot claimed first, so a run going meanwhile is safe; a slot a
// live process claimed, or on a branch, is kept). Asks first; a trusted workspace only.
import * as vscode from 'vscode';

import { formatBytes } from '../../core/worktrees/diskUse';
import { describePool } from '../../core/worktrees/poolText';
import { readSettings, toRunSettings } from '../config';
import { confirm } from '../confirm';
import { COMMANDS } from '../contributions';
import { loadCore } from '../coreLoader';
import { requireTrust } from '../trust';
import type { CommandDeps, Handlers } from './deps';
import { reportEditError } from './errors';

export function poolCommands(deps: CommandDeps): Handlers<typeof COMMANDS.clearWorktreePool> {
  return { [COMMANDS.clearWorktreePool]: () => clearWorktreePool(deps) };
}

async function clearWorktreePool({ model, logger }: CommandDeps): Promise<void> {
  if (!requireTrust('Clear Worktree Pool')) return;
  const s = await model.refresh();
  const pool = s.pool;
  if (!s.file || !pool?.slots.length) {
    void vscode.window.showInformationMessage('Launchpad: the worktree pool holds no worktrees.');
    return;
  }
  const clear = await confirm({
    title: `Clear the worktree pool? ${describePool(pool)}`,
    action: 'Clear',
    detail: `Removes the idle worktrees in ${pool.dir}; a slot a live process is preparing or taking, or one on a branch, is kept. Runs prepare new ones.`,
  });
  if (!clear) return;
  try {
    const [{ clearPool }, { settings }] = await Promise.all([loadCore(), readSettings()]);
    const done = await clearPool(s.paths, s.file, { settings: toRunSettings(settings) });
    const n = done.removed.length;
    const kept = done.kept.map((k) => `${k.name}: ${k.reason}`);
    const message = `${n} worktree${n === 1 ? '' : 's'} removed from the pool, ${formatBytes(done.bytes_freed)} freed${kept.length ? `; kept ${kept.join('; ')}` : ''}`;
    logger.info(`worktree pool cleared at the user's request: ${message}`);
    void vscode.window.showInformationMessage(`Launchpad: ${message}.`);
  } catch (err) {
    reportEditError('clear the worktree pool', err, logger);
  } finally {
    await model.refresh();
  }
}
