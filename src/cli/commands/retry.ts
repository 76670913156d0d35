import { retryTasksLogged } from '../../core/tasks/edits';
import { canRetry } from '../../core/tasks/transitions';
import type { Command } from '../command';
import { EXIT, UsageError } from '../exit';
import { existingStateRoot } from '../stateRoot';

export const retryCommand: Command = {
  name: 'retry',
  usage: 'launchpad retry ID... | --failed',
  summary: 'Make failed tasks eligible again: pending, attempts reset (their budget restored), error log kept for the next prompt.',
  details: 'Tasks that were blocked because of them go back to pending too. Any failed task can be retried; all the ids given, or none.',
  options: {
    failed: { type: 'boolean', help: 'every failed task' },
  },
  positionals: { min: 0, max: Infinity },
  async run(ctx) {
    const all = ctx.values.failed === true;
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
        ctx.io.out('no failed task: nothing to retry\n');
        return EXIT.OK;
      }
    }
    const { reset, unblockedBy } = await retryTasksLogged(store, ids);
    for (const t of reset) {
      const by = unblockedBy.get(t.id);
      ctx.io.out(
        `${t.id}: pending${by === undefined || ids.includes(t.id) ? ` (attempts 0/${t.max_attempts})` : ` (was blocked by ${by})`}\n`,
      );
    }
    return EXIT.OK;
  },
};
