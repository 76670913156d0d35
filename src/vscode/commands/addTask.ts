// Launchpad: Add Task — a short quick-input flow (title, validation command, files, depends-on,
// priority); Esc at any step adds nothing. The answers go to `launchpad add` as its flags (under
// the state lock, with its INIT line in the log). Called with a NewTask-like object (another
// extension, a keybinding) it adds that without asking.
import * as vscode from 'vscode';

import type { NewTask } from '../../core/tasks/taskOps';
import { COMMANDS } from '../contributions';
import type { StateSnapshot } from '../model/stateModel';
import { offer } from '../notify';
import { cliOutput } from '../run/cli';
import { requireTrust } from '../trust';
import type { CommandDeps, Handlers } from './deps';
import { reportEditError } from './errors';

const STEPS = 5;

export function addTaskCommands(deps: CommandDeps): Handlers<typeof COMMANDS.addTask> {
  return { [COMMANDS.addTask]: (arg) => addTask(deps, arg) };
}

async function addTask({ model, views, logger }: CommandDeps, arg: unknown): Promise<string | undefined> {
  if (!requireTrust('Add Task')) return undefined;
  const paths = model.stateRoot();
  const s = await model.refresh();
  if (!paths || !s.exists) {
    offer('error', 'Launchpad: there is no harness-tasks.json here yet.', {
      Initialize: () => vscode.commands.executeCommand(COMMANDS.init),
    });
    return undefined;
  }
  if (s.error) {
    void vscode.window.showErrorMessage(`Launchpad: ${s.error.message}`);
    return undefined;
  }
  const input = isNewTask(arg) ? arg : await askForTask(s);
  if (!input) return undefined;
  try {
    const id = (await cliOutput(['add', '--dir', paths.root, ...addFlags(input)], { cwd: paths.root })).trim();
    await model.refresh();
    const note = input.validate?.trim() ? '' : ' It has no validation command: a run will not start it until it has one.';
    void vscode.window.showInformationMessage(`Launchpad: added ${id}.${note}`);
    void views.revealTask(id);
    return id;
  } catch (err) {
    reportEditError('add task', err, logger);
    return undefined;
  }
}

/** The task as `launchpad add` takes it: a flag per field given (`--flag=value`: a value may start with "-"), the title last. */
function addFlags(t: NewTask): string[] {
  const flags: Array<[string, string | number | undefined]> = [
    ['--context', t.context],
    ['--priority', t.priority],
    ['--depends-on', t.dependsOn?.join(',') || undefined],
    ['--files', t.files?.join(',') || undefined],
    ['--validate', t.validate],
    ['--timeout', t.timeoutSeconds],
    ['--max-attempts', t.maxAttempts],
  ];
  return [...flags.flatMap(([flag, value]) => (value === undefined ? [] : [`${flag}=${value}`])), '--', t.title];
}

function isNewTask(arg: unknown): arg is NewTask {
  return !!arg && typeof arg === 'object' && 'title' in arg && typeof arg.title === 'string';
}

/** The quick-input steps; undefined as soon as one is cancelled. */
async function askForTask(s: StateSnapshot): Promise<NewTask | undefined> {
  const title = await vscode.window.showInputBox({
    title: `Add Task (1/${STEPS})`,
    prompt: 'What should the agent do? (the task title)',
    placeHolder: 'e.g. Add slugify() to src/text',
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() ? undefined : 'A title is required'),
  });
  if (title === undefined) return undefined;

  const validate = await vscode.window.showInputBox({
    title: `Add Task (2/${STEPS})`,
    prompt: 'Validation command: a shell command that exits 0 when the task is done (run in its worktree)',
    placeHolder: 'e.g. npm test -- src/text; empty: a run will not start the task until it has one',
    ignoreFocusOut: true,
  });
  if (validate === undefined) return undefined;

  const files = await vscode.window.showInputBox({
    title: `Add Task (3/${STEPS})`,
    prompt: 'Files or folders it works in, comma-separated (empty: it runs alone)',
    placeHolder: 'e.g. src/text/, test/text/',
    ignoreFocusOut: true,
  });
  if (files === undefined) return undefined;

  let dependsOn: string[] = [];
  if (s.tasks.length) {
    const picked = await vscode.window.showQuickPick(
      s.tasks.map((t) => ({ label: t.id, description: t.title, detail: t.status })),
      {
        title: `Add Task (4/${STEPS})`,
        placeHolder: 'Tasks it depends on (none selected: none)',
        canPickMany: true,
        ignoreFocusOut: true,
        matchOnDescription: true,
      },
    );
    if (picked === undefined) return undefined;
    dependsOn = picked.map((p) => p.label);
  }

  const priority = await vscode.window.showQuickPick(
    [
      { label: 'P1', description: 'normal (default)' },
      { label: 'P0', description: 'first' },
      { label: 'P2', description: 'last' },
    ],
    { title: `Add Task (5/${STEPS})`, placeHolder: 'Priority', ignoreFocusOut: true },
  );
  if (priority === undefined) return undefined;

  return {
    title: title.trim(),
    validate: validate.trim() || undefined,
    files: splitList(files),
    dependsOn,
    priority: priority.label,
  };
}

function splitList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
