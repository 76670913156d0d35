// Finding the state root for a command.
import { findStateRoot, StatePaths } from '../core/statePaths';
import { TaskFileMissingError } from '../core/taskFile/read';
import { StateStore } from '../core/taskFile/store';
import type { CommandContext } from './command';
import { HarnessNotFoundError } from './exit';

/** The state root of an existing harness: --dir, $HARNESS_STATE_ROOT, or found upward. */
export function existingStateRoot(ctx: CommandContext, command: string): StateStore {
  const root = findStateRoot(ctx.io.cwd, ctx.dir, ctx.io.env);
  if (!root) throw new HarnessNotFoundError(ctx.io.cwd);
  const store = new StateStore(new StatePaths(root), `launchpad ${command}`);
  // Checked before anything else: --dir or $HARNESS_STATE_ROOT naming a folder without a harness
  // must not get a .launchpad/ lock folder created in it, and `log` must not print nothing and exit 0.
  if (!store.exists()) throw new TaskFileMissingError(store.paths.tasks);
  return store;
}

/** Where `init` (and a first `run`) creates the harness: --dir, $HARNESS_STATE_ROOT, found upward, or here. */
export function stateRootForInit(ctx: CommandContext): StatePaths {
  return new StatePaths(findStateRoot(ctx.io.cwd, ctx.dir, ctx.io.env) ?? ctx.io.cwd);
}
