// Clear Worktree Pool: frees the disk of the idle worktrees session_config.worktree_pool keeps,
// through `launchpad pool clear` (each slot claimed first, so a run going meanwhile is safe; a
// slot a live process claimed, or on a branch, is kept). Asks first; a trusted workspace only.
import * as vscode from 'vscode';

import { formatBytes } from '../../core/worktrees/diskUse';
import type { PoolClearing } from '../../core/worktrees/poolClear';
import { describePool } from '../../core/worktrees/poolText';
import { readSettings } from '../config';
import { confirm } from '../confirm';
import { COMMANDS } from '../contributions';
import { cliJson } from '../run/cli';
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
    // Where a run from this window keeps the pool: launchpad.worktree.location, else the task file's.
    const { worktreeLocation } = (await readSettings()).settings;
    const done = await cliJson<PoolClearing>(
      ['pool', 'clear', '--dir', s.paths.root, ...(worktreeLocation === undefined ? [] : [`--worktree-dir=${worktreeLocation}`])],
      { cwd: s.paths.root },
    );
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
