import { retryTaskLogged } from '../../core/tasks/harnessEdits';
import type { Command } from '../command';
import { EXIT } from '../exit';
import { existingHarness } from '../harness';

export const retryCommand: Command = {
  name: 'retry',
  usage: 'launchpad retry ID',
  summary: 'Make a failed task eligible again: pending, attempts reset (its budget restored), error log kept for the next prompt.',
  details: 'Tasks that were blocked because of it go back to pending too.',
  options: {},
  positionals: { min: 1, max: 1 },
  async run(ctx) {
    const id = ctx.positionals[0]!;
    const store = existingHarness(ctx, 'retry');
    const reset = await retryTaskLogged(store, id);
    for (const t of reset) ctx.io.out(`${t.id}: pending${t.id === id ? ` (attempts 0/${t.max_attempts})` : ` (was blocked by ${id})`}\n`);
    return EXIT.OK;
  },
};
