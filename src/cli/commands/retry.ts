import { ProgressLog } from '../../core/progressLog';
import { retryTask } from '../../core/taskOps';
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
    const { reset, session, previousAttempts } = await store.transact((file) => {
      const previousAttempts = file.tasks.find((t) => t.id === id)?.attempts ?? 0;
      return { reset: retryTask(file, id), session: file.session_count, previousAttempts };
    });
    const log = new ProgressLog(store.paths.progress);
    log.append(
      session,
      ...reset.map((t) =>
        t.id === id
          ? { type: 'RECOVERY' as const, taskId: t.id, message: `action="retry" reason="requested by user" attempts_before=${previousAttempts}` }
          : { type: 'RECOVERY' as const, taskId: t.id, message: `action="unblocked" reason="retry of ${id}"` },
      ),
    );
    for (const t of reset) ctx.io.out(`${t.id}: pending${t.id === id ? ` (attempts 0/${t.max_attempts})` : ` (was blocked by ${id})`}\n`);
    return EXIT.OK;
  },
};
