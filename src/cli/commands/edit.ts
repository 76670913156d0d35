import { editTaskLogged } from '../../core/tasks/edits';
import type { TaskChanges } from '../../core/tasks/taskOps';
import { type Command, numberOption, splitList } from '../command';
import { EXIT, UsageError } from '../exit';
import { commandIn } from '../invocation';
import { existingStateRoot } from '../stateRoot';
import { approveTypedIn } from '../trust';
import { TASK_FIELD_OPTIONS } from './add';

const EDIT_OPTIONS = {
  title: { type: 'string', value: 'T', help: 'the new title' },
  ...TASK_FIELD_OPTIONS,
} as const;

export const editCommand: Command = {
  name: 'edit',
  usage:
    'launchpad edit ID [--title T] [--context T] [--priority P] [--depends-on a,b] [--files a,b] [--protect a,b] [--review manual|auto] [--validate CMD] [--timeout S] [--max-attempts N]',
  summary: 'Change fields of a task that is not running; prints each change.',
  details: [
    'The options are those of add. An empty value clears a field: --context "" (the prompt then uses the title),',
    '--depends-on "", --files "" and --protect "" (none), --review "" (session_config.review decides), --validate "" (no run starts the task), --timeout "" (the default, 600 s).',
    'A task in progress is refused: its agent works from the task as it was given. A failed task stays failed: retry it to run it again.',
    'Safe while a run is going (the next batch sees the change).',
  ].join('\n'),
  options: EDIT_OPTIONS,
  positionals: { min: 1, max: 1 },
  async run(ctx) {
    const { values } = ctx;
    const id = ctx.positionals[0]!;
    if (!Object.keys(EDIT_OPTIONS).some((k) => values[k] !== undefined)) {
      throw new UsageError(
        `edit: nothing to change; give one or more of ${Object.keys(EDIT_OPTIONS)
          .map((k) => `--${k}`)
          .join(', ')}`,
      );
    }
    const text = (name: string) => values[name] as string | undefined;
    const cleared = (name: string) => (text(name) === '' ? null : text(name));
    const changes: TaskChanges = {
      title: text('title'),
      context: cleared('context'),
      priority: text('priority'),
      dependsOn: splitList(values['depends-on']),
      files: splitList(values.files),
      protect: splitList(values.protect),
      review: cleared('review'),
      validate: cleared('validate'),
      timeoutSeconds: text('timeout') === '' ? null : numberOption('timeout', values.timeout, { min: 0, above: true }),
      maxAttempts: numberOption('max-attempts', values['max-attempts'], { integer: true, min: 1 }),
    };
    const store = existingStateRoot(ctx, 'edit');
    const { task, changed } = await editTaskLogged(store, id, changes);
    if (changes.validate) approveTypedIn(ctx, store.paths, (c) => c.field === `tasks[${id}].validation.command`);
    if (!changed.length) ctx.io.out(`${id}: nothing changed (the values given are the ones it has)\n`);
    for (const c of changed) ctx.io.out(`${id}: ${c.field} ${show(c.before)} -> ${show(c.after)}\n`);
    if (changed.length && task.status === 'completed') ctx.io.err(`note: ${id} is completed; the change does not make it run again\n`);
    if (changed.length && task.status === 'failed')
      ctx.io.err(`note: ${id} has failed; to run it again: ${commandIn(ctx.io, store.paths.root)} retry ${id}\n`);
    if (changed.some((c) => c.field === 'validation.command' && c.after === null)) {
      ctx.io.err(`note: ${id} has no validation command now; a run will not start it until it has one\n`);
    }
    return EXIT.OK;
  },
};

function show(value: unknown): string {
  if (value === null) return '(none)';
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.join(', ')}]`;
  return String(value);
}
