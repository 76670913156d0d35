import { addTaskLogged } from '../../core/tasks/harnessEdits';
import { splitList, numberOption, type Command } from '../command';
import { EXIT } from '../exit';
import { existingHarness } from '../harness';

export const addCommand: Command = {
  name: 'add',
  usage:
    'launchpad add TITLE [--context T] [--priority P0|P1|P2] [--depends-on a,b] [--files a,b] [--validate CMD] [--timeout S] [--max-attempts N]',
  summary: 'Append a pending task with the next task-NNN id and print the id.',
  details:
    'A task needs --validate before a run will start it: the validation command is the only proof a task is done.\n' +
    'Safe while a run is going: the controller picks the new task up for its next batch.',
  options: {
    context: { type: 'string', value: 'T', help: 'what to implement, constraints, approach (goes into the agent prompt)' },
    priority: { type: 'string', value: 'P', help: 'P0, P1 (default) or P2' },
    'depends-on': { type: 'string', value: 'IDS', help: 'comma-separated ids this task waits for' },
    files: { type: 'string', value: 'PATHS', help: 'comma-separated files/directories the task works in (files_hint); none = runs alone' },
    validate: { type: 'string', value: 'CMD', help: 'shell command that exits 0 when the task is done' },
    timeout: { type: 'string', value: 'S', help: 'validation timeout in seconds (default 600)' },
    'max-attempts': { type: 'string', value: 'N', help: 'attempts before the task counts as failed for good (default 3)' },
  },
  positionals: { min: 1, max: 1 },
  async run(ctx) {
    const { values } = ctx;
    const store = existingHarness(ctx, 'add');
    const input = {
      title: ctx.positionals[0]!,
      context: values.context as string | undefined,
      priority: values.priority as string | undefined,
      dependsOn: splitList(values['depends-on']),
      files: splitList(values.files),
      validate: values.validate as string | undefined,
      timeoutSeconds: numberOption('timeout', values.timeout, { min: 0, above: true }),
      maxAttempts: numberOption('max-attempts', values['max-attempts'], { integer: true, min: 1 }),
    };
    const task = await addTaskLogged(store, input);
    ctx.io.out(`${task.id}\n`);
    if (!task.validation?.command) ctx.io.err(`note: ${task.id} has no validation command; a run will not start it until it has one\n`);
    return EXIT.OK;
  },
};
