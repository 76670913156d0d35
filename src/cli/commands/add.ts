import { DEFAULT_VALIDATION_TIMEOUT_S, type TaskFile } from '../../core/taskFile/schema';
import { addTaskLogged } from '../../core/tasks/edits';
import { checkDependsOn, checkPriority, checkTimeout, checkTitle, type NewTask } from '../../core/tasks/taskOps';
import { type Command, type CommandContext, numberOption, splitList } from '../command';
import { EXIT, UsageError } from '../exit';
import { existingStateRoot } from '../stateRoot';
import { approveTypedIn } from '../trust';
import { ask } from '../ui/questions';

/** The options that set a field of the task: any of them skips the questions. */
export const TASK_FIELD_OPTIONS = {
  context: { type: 'string', value: 'T', help: 'what to implement, constraints, approach (goes into the agent prompt)' },
  priority: { type: 'string', value: 'P', help: 'P0, P1 (default) or P2' },
  'depends-on': { type: 'string', value: 'IDS', help: 'comma-separated ids this task waits for' },
  files: { type: 'string', value: 'PATHS', help: 'comma-separated files/directories the task works in (files_hint); none = runs alone' },
  protect: {
    type: 'string',
    value: 'PATHS',
    help: 'comma-separated files/directories its agent may not change, e.g. its tests (protected_paths)',
  },
  review: {
    type: 'string',
    value: 'manual|auto',
    help: 'manual: once validated it waits for a person (launchpad review, approve, request-changes) before it merges',
  },
  validate: { type: 'string', value: 'CMD', help: 'shell command that exits 0 when the task is done' },
  timeout: { type: 'string', value: 'S', help: `validation timeout in seconds (default ${DEFAULT_VALIDATION_TIMEOUT_S})` },
  'max-attempts': { type: 'string', value: 'N', help: 'attempts before the task counts as failed for good (default 3)' },
} as const;

export const addCommand: Command = {
  name: 'add',
  usage:
    'launchpad add TITLE [--context T] [--priority P0|P1|P2] [--depends-on a,b] [--files a,b] [--protect a,b] [--review manual] [--validate CMD] [--timeout S] [--max-attempts N]',
  summary: 'Append a pending task with the next task-NNN id and print the id.',
  details: [
    'A task needs --validate before a run will start it: the validation command is the only proof a task is done.',
    'On a terminal, add without options asks for each field (Enter takes the default shown; Ctrl-C cancels); any option',
    'skips the questions, and without a terminal only the options are used. A title that starts with "-" goes last, after "--":',
    '  launchpad add --validate "npm test" -- "-v prints the version"',
    'Safe while a run is going: the controller picks the new task up for its next batch.',
  ].join('\n'),
  options: TASK_FIELD_OPTIONS,
  positionals: { min: 1, max: 1, askable: true },
  async run(ctx) {
    const { values } = ctx;
    const anyField = Object.keys(TASK_FIELD_OPTIONS).some((k) => values[k] !== undefined);
    const askQuestions = ctx.io.interactive && !!ctx.io.ask && !anyField;
    if (!ctx.positionals.length && !askQuestions)
      throw new UsageError(
        `add: expected 1 argument, got 0 (the title; on a terminal without options it is asked)\nusage: ${addCommand.usage}`,
      );
    const store = existingStateRoot(ctx, 'add');
    const input = askQuestions
      ? await askForTask(ctx, store.load().file)
      : {
          title: ctx.positionals[0]!,
          context: values.context as string | undefined,
          priority: values.priority as string | undefined,
          dependsOn: splitList(values['depends-on']),
          files: splitList(values.files),
          protect: splitList(values.protect),
          review: values.review as string | undefined,
          validate: values.validate as string | undefined,
          timeoutSeconds: numberOption('timeout', values.timeout, { min: 0, above: true }),
          maxAttempts: numberOption('max-attempts', values['max-attempts'], { integer: true, min: 1 }),
        };
    const task = await addTaskLogged(store, input);
    approveTypedIn(ctx, store.paths, (c) => c.field === `tasks[${task.id}].validation.command`);
    ctx.io.out(`${task.id}\n`);
    if (!task.validation?.command) ctx.io.err(`note: ${task.id} has no validation command; a run will not start it until it has one\n`);
    return EXIT.OK;
  },
};

/** The questions of `add` on a terminal, each answer checked as the option would be. */
async function askForTask(ctx: CommandContext, file: TaskFile): Promise<NewTask> {
  const { io } = ctx;
  const ids = file.tasks.map((t) => t.id);
  const title = ctx.positionals[0] ?? (await ask(io, { label: 'Title', required: true, parse: checkTitle }));
  const context = await ask(io, {
    label: 'Context',
    hint: 'what to do, constraints, approach: the agent reads it',
    required: true,
    parse: (a) => a,
  });
  const priority = await ask(io, {
    label: 'Priority',
    hint: 'P0, P1 or P2',
    defaultAnswer: 'P1',
    parse: (a) => checkPriority(a.toUpperCase()),
  });
  const dependsOn = ids.length
    ? await ask(io, {
        label: 'Depends on',
        hint: `comma-separated ids, e.g. ${ids.slice(-2).join(',')}; empty: none`,
        parse: (a) => checkDependsOn(file, splitList(a) ?? [], undefined),
      })
    : [];
  const files = await ask(io, {
    label: 'Files',
    hint: 'comma-separated files or directories it works in; empty: it runs alone',
    parse: (a) => splitList(a) ?? [],
  });
  const validate = await ask(io, {
    label: 'Validation command',
    hint: 'exits 0 when the task is done, e.g. npm test; empty: no run starts it until it has one',
    parse: (a) => a || undefined,
  });
  const timeoutSeconds = validate
    ? await ask(io, {
        label: 'Validation timeout in seconds',
        defaultAnswer: String(DEFAULT_VALIDATION_TIMEOUT_S),
        parse: (a) => {
          const n = numberOption('timeout', a, { min: 0, above: true })!;
          checkTimeout(n);
          return n === DEFAULT_VALIDATION_TIMEOUT_S ? undefined : n;
        },
      })
    : undefined;
  return { title, context, priority, dependsOn, files, validate, timeoutSeconds };
}
