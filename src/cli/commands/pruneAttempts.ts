// launchpad prune-attempts: deletes the refs that keep failed or interrupted attempts.
import { Git } from '../../core/git/git';
import { pruneKeptAttempts } from '../../core/git/keptAttempts';
import { type Command, numberOption } from '../command';
import { EXIT } from '../exit';
import { existingStateRoot } from '../stateRoot';

export const pruneAttemptsCommand: Command = {
  name: 'prune-attempts',
  usage: 'launchpad prune-attempts [ID…] [--older-than DAYS] [--dry-run]',
  summary: 'Delete the refs keeping the commits of failed or interrupted attempts: those of completed tasks, or of the tasks named.',
  details: [
    "Before a task's branch is deleted or rebased, Launchpad keeps its commits (and an interrupted",
    "attempt's uncommitted work) at refs/launchpad/attempts/<id>/<attempt>, so no agent's work is lost;",
    '"launchpad status" lists them. Without IDs this deletes those of completed tasks; with IDs, those',
    "of the tasks named, whatever their state. The deleted commits are then git's to collect.",
  ].join('\n'),
  options: {
    'older-than': { type: 'string', value: 'DAYS', help: 'only attempts whose kept commit is older than DAYS days' },
    'dry-run': { type: 'boolean', help: 'print what would be deleted, delete nothing' },
  },
  positionals: { min: 0, max: Infinity },
  async run(ctx) {
    const olderThanDays = numberOption('older-than', ctx.values['older-than'], { min: 0 });
    const store = existingStateRoot(ctx, 'prune-attempts');
    const { file } = store.load();
    const git = new Git(store.paths.root);
    if (!(await git.toplevel())) {
      ctx.io.out(`nothing to prune: ${store.paths.root} is not in a git repository\n`);
      return EXIT.OK;
    }
    const dryRun = ctx.values['dry-run'] === true;
    const pruned = await pruneKeptAttempts(git, file.tasks, { ids: ctx.positionals, olderThanDays, dryRun });
    const status = new Map(file.tasks.map((t) => [t.id, t.status]));
    for (const k of pruned) {
      const what = `${k.taskId}, ${status.get(k.taskId) ?? 'not in harness-tasks.json'}, commit ${k.commit.slice(0, 7)} of ${k.committedAt}`;
      ctx.io.out(`${dryRun ? 'would delete' : 'deleted'} ${k.ref} (${what})\n`);
    }
    const scope = ctx.positionals.length ? `of ${ctx.positionals.join(', ')}` : 'of completed tasks';
    const age = olderThanDays === undefined ? '' : ` older than ${olderThanDays} day(s)`;
    if (!pruned.length) ctx.io.out(`nothing to prune: no kept attempts ${scope}${age}\n`);
    else ctx.io.out(`${pruned.length} kept attempt(s) ${scope}${age} ${dryRun ? 'would be deleted (dry run)' : 'deleted'}\n`);
    return EXIT.OK;
  },
};
