import type { Task } from '../../core/taskFile/schema';
import { blockedByOf, isPermanentlyFailed, rootBlocker } from '../../core/tasks/dag';
import { retryTasksLogged } from '../../core/tasks/edits';
import { positions, taskById } from '../../core/tasks/taskIndex';
import { canRetry } from '../../core/tasks/transitions';
import type { Command } from '../command';
import { EXIT, UsageError } from '../exit';
import { existingStateRoot } from '../stateRoot';

export const retryCommand: Command = {
  name: 'retry',
  usage: 'launchpad retry ID... | --failed [--json]',
  summary: 'Make failed tasks eligible again: pending, attempts reset (their budget restored), error log kept for the next prompt.',
  details: 'Tasks that were blocked because of them go back to pending too. Any failed task can be retried; all the ids given, or none.',
  options: {
    failed: { type: 'boolean', help: 'every failed task' },
    json: { type: 'boolean', help: 'print the tasks reset as JSON: {"reset": [{"id", "max_attempts", "unblocked_by"}]}' },
  },
  positionals: { min: 0, max: Infinity },
  async run(ctx) {
    const all = ctx.values.failed === true;
    const json = ctx.values.json === true;
    if (all && ctx.positionals.length) throw new UsageError(`retry: ids or --failed, not both\nusage: ${retryCommand.usage}`);
    if (!all && !ctx.positionals.length) {
      throw new UsageError(
        `retry: expected 1 argument, got 0 (the id of a failed task; several ids, or --failed, retry more)\nusage: ${retryCommand.usage}`,
      );
    }
    const store = existingStateRoot(ctx, 'retry');
    let ids = ctx.positionals;
    if (all) {
      ids = store
        .load()
        .file.tasks.filter(canRetry)
        .map((t) => t.id);
      if (!ids.length) {
        ctx.io.out(json ? JSON.stringify({ reset: [] }, null, 2) + '\n' : 'no failed task: nothing to retry\n');
        return EXIT.OK;
      }
    }
    const stillBlocked = blockedByStayingFailure(store.load().file.tasks, ids);
    const { reset, unblockedBy } = await retryTasksLogged(store, ids);
    for (const [id, root] of stillBlocked)
      ctx.io.err(
        `note: ${id} is blocked by failed ${root}, which stays failed: the next run blocks ${id} again; retry ${root} to unblock it\n`,
      );
    if (json) {
      // unblocked_by: the retried task that freed it; null for a task retried itself.
      const rows = reset.map((t) => ({
        id: t.id,
        max_attempts: t.max_attempts,
        unblocked_by: ids.includes(t.id) ? null : (unblockedBy.get(t.id) ?? null),
      }));
      ctx.io.out(JSON.stringify({ reset: rows }, null, 2) + '\n');
      return EXIT.OK;
    }
    for (const t of reset) {
      const by = unblockedBy.get(t.id);
      ctx.io.out(
        `${t.id}: pending${by === undefined || ids.includes(t.id) ? ` (attempts 0/${t.max_attempts})` : ` (was blocked by ${by})`}\n`,
      );
    }
    return EXIT.OK;
  },
};

/** The ids among `ids` blocked by a failure that this retry leaves failed, each with the task to retry instead. */
function blockedByStayingFailure(tasks: readonly Task[], ids: readonly string[]): Map<string, string> {
  const pos = positions(tasks);
  const found = new Map<string, string>();
  for (const id of ids) {
    const task = taskById(tasks, pos, id);
    const first = task && blockedByOf(task);
    if (first === undefined) continue;
    const root = rootBlocker(tasks, pos, first);
    const rootTask = taskById(tasks, pos, root);
    if (rootTask && isPermanentlyFailed(rootTask) && !ids.includes(root)) found.set(id, root);
  }
  return found;
}
