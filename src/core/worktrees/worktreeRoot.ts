// Where task worktrees (and the pool's, in its .pool/ folder) live: one rule for a run, `status`,
// `launchpad pool` and the extension's Worktrees view.
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';

import type { StatePaths } from '../statePaths';
import type { TaskFile } from '../taskFile/schema';

/** What of a run's settings says where worktrees go. */
export interface WorktreeSettings {
  /** --worktree-dir, or the editor's launchpad.worktree.location. */
  worktreeDir?: string | undefined;
  env?: NodeJS.ProcessEnv | undefined;
}

/**
 * --worktree-dir or the editor's launchpad.worktree.location, $LAUNCHPAD_WORKTREE_DIR,
 * session_config.worktree_dir (relative to the state root), else beside the repository.
 */
export function resolveWorktreeRoot(settings: WorktreeSettings, file: TaskFile, paths: StatePaths, toplevel: string): string {
  const env = settings.env ?? process.env;
  const worktreeDir = settings.worktreeDir ?? env.LAUNCHPAD_WORKTREE_DIR ?? file.session_config.worktree_dir ?? undefined;
  if (!worktreeDir) return defaultWorktreeRoot(toplevel);
  return isAbsolute(worktreeDir) ? worktreeDir : resolve(paths.root, worktreeDir);
}

/**
 * Beside the repository, not inside it: tools that walk the project (test runners, linters,
 * the editor's search) must not find a copy of it per running task.
 */
export function defaultWorktreeRoot(toplevel: string): string {
  return join(dirname(toplevel), `${basename(toplevel)}.launchpad-worktrees`);
}
