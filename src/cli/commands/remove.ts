import { removeTaskLogged } from '../../core/tasks/edits';
import type { Command } from '../command';
import { EXIT } from '../exit';
import { existingStateRoot } from '../stateRoot';

export const removeCommand: Command = {
  name: 'remove',
  usage: 'launchpad remove ID [--force]',
  summary: 'Remove a task that is not running from harness-tasks.json (its log lines and attempt folders stay).',
  details: [
    'Refused while other tasks depend on it. --force removes it anyway and takes it out of their depends_on;',
    'those a run had marked blocked because of it go back to pending.',
  ].join('\n'),
  options: {
    force: { type: 'boolean', help: 'remove it even when other tasks depend on it (they stop depending on it)' },
  },
  positionals: { min: 1, max: 1 },
  async run(ctx) {
    const id = ctx.positionals[0]!;
    const store = existingStateRoot(ctx, 'remove');
    const { task, detached, unblocked } = await removeTaskLogged(store, id, { force: ctx.values.force === true });
    ctx.io.out(`${id}: removed ("${task.title}")\n`);
    for (const d of detached)
      ctx.io.out(`${d}: no longer depends on ${id}${unblocked.includes(d) ? '; pending again (was blocked by it)' : ''}\n`);
    for (const u of unblocked.filter((u) => !detached.includes(u))) ctx.io.out(`${u}: pending again (was blocked through ${id})\n`);
    return EXIT.OK;
  },
};
