// Initialize, Refresh, the extension log, and the Tasks view's own controls (mode, paging).
import * as vscode from 'vscode';

import { GITIGNORE_ENTRIES } from '../../core/init';
import { COMMANDS } from '../contributions';
import { cliJson } from '../run/cli';
import { requireTrust } from '../trust';
import type { CommandDeps, Handlers } from './deps';
import { reportEditError } from './errors';

type SetupCommand =
  | typeof COMMANDS.init
  | typeof COMMANDS.refresh
  | typeof COMMANDS.showOutput
  | typeof COMMANDS.viewByState
  | typeof COMMANDS.viewByDependency
  | typeof COMMANDS.showMore;

export function setupCommands(deps: CommandDeps): Handlers<SetupCommand> {
  return {
    [COMMANDS.init]: (arg) => init(deps, arg),
    [COMMANDS.refresh]: () => deps.model.refresh(),
    [COMMANDS.showOutput]: () => deps.channel.show(),
    [COMMANDS.viewByState]: () => deps.views.setMode('state'),
    [COMMANDS.viewByDependency]: () => deps.views.setMode('dependency'),
    [COMMANDS.showMore]: (listKey) => typeof listKey === 'string' && deps.views.tasks.showMore(listKey),
  };
}

/**
 * Creates the state files with `launchpad init` (idempotent, never clobbers). Adding them to
 * .gitignore changes a tracked file, so it is asked (a quick pick), as `launchpad init` asks on a
 * terminal; `{gitignore}` as the argument answers without asking.
 */
async function init({ model, logger }: CommandDeps, arg: unknown): Promise<void> {
  if (!requireTrust('Initialize Task File')) return;
  const paths = model.stateRoot();
  if (!paths) {
    void vscode.window.showErrorMessage('Launchpad: open a folder first.');
    return;
  }
  let gitignore: boolean;
  if (arg && typeof arg === 'object' && 'gitignore' in arg && typeof arg.gitignore === 'boolean') {
    gitignore = arg.gitignore;
  } else {
    // A quick pick, not a modal dialog (confirm.ts says why); Esc initializes nothing.
    const choice = await vscode.window.showQuickPick(
      [
        {
          label: 'Initialize and Add to .gitignore',
          detail: `Adds ${GITIGNORE_ENTRIES.join(', ')} to .gitignore, which keeps them out of commits.`,
          gitignore: true,
        },
        { label: 'Initialize', detail: '.gitignore is left as it is.', gitignore: false },
      ],
      {
        title: `Initialize Launchpad in ${paths.root}?`,
        placeHolder: 'Creates harness-tasks.json, harness-progress.txt and .harness-active (existing files are kept)',
      },
    );
    if (!choice) return;
    gitignore = choice.gitignore;
  }
  try {
    const result = await cliJson<{ created: string[]; ignored: string[] }>(
      ['init', '--dir', paths.root, gitignore ? '--gitignore' : '--no-gitignore'],
      { cwd: paths.root },
    );
    await model.refresh();
    const parts = [
      result.created.length ? `created ${result.created.join(', ')}` : 'everything was already there',
      result.ignored.length ? `added ${result.ignored.length} entries to .gitignore` : '',
    ].filter(Boolean);
    void vscode.window.showInformationMessage(`Launchpad: ${parts.join('; ')}.`);
  } catch (err) {
    reportEditError('initialize', err, logger);
  }
}
