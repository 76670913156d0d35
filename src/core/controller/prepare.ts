// What a task's worktree gets between its checkout and its agent: a block of ports, the ignored
// files .worktreeinclude names, then worktree_setup; for a pooled worktree, a record of what
// the set-up left (kept on its next reuse). Any failure here is the machine's (ENV_SETUP).
import type { AttemptPaths } from '../statePaths';
import type { Task } from '../taskFile/schema';
import { formatBytes } from '../worktrees/diskUse';
import { copyIncluded, type CopyReport, readIncludeRules, WORKTREE_INCLUDE_FILE } from '../worktrees/include';
import { recordKept } from '../worktrees/pool';
import type { Session } from './session';
import type { TaskTerminal } from './types';
import { runWorktreeSetup, type SetupFailure } from './worktreeSetup';

/** Where the task's worktree came from: a new checkout, the pool (prepared at `preparedAt`), or an interrupted (or answered) attempt. */
export type WorktreeOrigin = { kind: 'new' } | { kind: 'pool'; preparedAt: number } | { kind: 'resumed'; after?: 'answer' | 'review' };

export type Prepared =
  | { kind: 'ready'; /** For the agent's environment: LAUNCHPAD_PORT_BASE, LAUNCHPAD_PORT_COUNT. */ env: Record<string, string> }
  | { kind: 'failed'; failure: SetupFailure }
  | { kind: 'interrupted' };

/**
 * Prepares `worktree` for the task's agent. A new worktree gets the included files copied; the
 * pool's have them already (copied when the slot was prepared); an interrupted attempt's are
 * brought up to date. The task's port block stays leased until the task's run ends (the
 * controller releases it).
 */
export async function prepareWorktree(
  s: Session,
  task: Task,
  worktree: string,
  terminal: TaskTerminal,
  attempt: AttemptPaths,
  from: WorktreeOrigin,
): Promise<Prepared> {
  let env: Record<string, string>;
  try {
    env = (await s.ports.lease(task.id)).env;
  } catch (err) {
    return {
      kind: 'failed',
      failure: { cause: (err as Error).message, advice: 'end the programs listening there, or lower session_config.port_block_size' },
    };
  }

  const rules = from.kind === 'pool' ? undefined : readIncludeRules(s.toplevel);
  let copied: CopyReport | undefined;
  if (rules) {
    try {
      copied = await copyIncluded(s.git, s.toplevel, worktree, rules, { sync: from.kind === 'resumed' });
    } catch (err) {
      return {
        kind: 'failed',
        failure: {
          cause: `could not copy the files ${WORKTREE_INCLUDE_FILE} names into ${worktree}: ${(err as Error).message}`,
          advice: `check ${rules.file} and the disk`,
        },
      };
    }
  }
  if (copied || from.kind !== 'new') {
    const message = describePreparation(from, copied);
    s.log({ type: 'INIT', taskId: task.id, message });
    terminal.write(`[launchpad] ${task.id}: ${message}\r\n`);
  }
  if (s.stopping) return { kind: 'interrupted' };

  const setup = await runWorktreeSetup(s, task, worktree, terminal, attempt, env);
  if (setup.kind === 'interrupted') return setup;
  if (setup.kind === 'fail') return { kind: 'failed', failure: setup.failure };

  if (s.config.worktreePool > 0) {
    try {
      await recordKept(s.git, worktree, !!s.config.worktreeSetup);
    } catch (err) {
      // Without the record, the next reuse cleans everything but the included files: slower, not wrong.
      s.logger.warn(`worktree pool: could not record what the set-up of ${task.id} made: ${(err as Error).message}`);
    }
  }
  return { kind: 'ready', env };
}

/** `new worktree; .worktreeinclude: 3 files copied (1.2 MB), 40 unchanged, 1 removed`. */
export function describePreparation(from: WorktreeOrigin, copied: CopyReport | undefined): string {
  const parts = [
    from.kind === 'resumed'
      ? `worktree of the ${from.after === 'answer' ? 'attempt that asked the question' : from.after === 'review' ? 'attempt under review' : 'interrupted attempt'}`
      : from.kind === 'pool'
        ? `worktree from the pool, prepared at ${new Date(from.preparedAt).toISOString().slice(11, 19)} (its included files as the main checkout had them then)`
        : 'new worktree',
  ];
  if (copied) {
    const counts = [`${copied.copied} file${copied.copied === 1 ? '' : 's'} copied (${formatBytes(copied.bytes)})`];
    if (copied.unchanged) counts.push(`${copied.unchanged} unchanged`);
    if (copied.removed) counts.push(`${copied.removed} removed`);
    if (copied.skipped) counts.push(`${copied.skipped} skipped (the worktree has a file there)`);
    parts.push(`${WORKTREE_INCLUDE_FILE}: ${counts.join(', ')}`);
  }
  return parts.join('; ');
}
