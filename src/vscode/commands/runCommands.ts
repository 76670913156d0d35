// Launchpad: Run, Stop, Status. Run starts without questions when it can; otherwise it says
// exactly why not (file and field of a bad task file, who holds the lock); with no agent set
// anywhere it asks for one (run/agentPick.ts).
import * as vscode from 'vscode';

import { resolveRunConfig } from '../../core/controller/runConfig';
import { liveLockHolder, LockHeldError } from '../../core/lock';
import { readSettings, toRunSettings } from '../config';
import { COMMANDS } from '../contributions';
import { offer } from '../notify';
import { pickAgent } from '../run/agentPick';
import type { ActiveRun } from '../run/runManager';
import { requireTrust } from '../trust';
import type { CommandDeps, Handlers } from './deps';
import { showStatus } from './statusDocument';

export function runCommands(deps: CommandDeps): Handlers<typeof COMMANDS.run | typeof COMMANDS.stop | typeof COMMANDS.status> {
  return {
    [COMMANDS.run]: () => run(deps),
    [COMMANDS.stop]: () => stop(deps),
    [COMMANDS.status]: () => showStatus(deps.model),
  };
}

/** Starts a run; returns it, or undefined (after saying why) when none started. */
async function run({ model, runs }: CommandDeps): Promise<ActiveRun | undefined> {
  if (!requireTrust('Run')) return;
  if (runs.active) {
    void vscode.window.showInformationMessage('Launchpad: a run is already going in this window.');
    return;
  }
  const paths = model.stateRoot();
  if (!paths) {
    void vscode.window.showErrorMessage('Launchpad: open a folder first; Launchpad runs agents on a git repository.');
    return;
  }
  const s = await model.refresh();
  if (!s.exists) {
    offer('error', `Launchpad: there is no harness-tasks.json in ${paths.root}.`, {
      Initialize: () => vscode.commands.executeCommand(COMMANDS.init),
    });
    return;
  }
  if (s.error || !s.file) {
    offer('error', `Launchpad: ${s.error?.message ?? 'harness-tasks.json could not be read'}`, {
      'Open harness-tasks.json': () => vscode.window.showTextDocument(vscode.Uri.file(paths.tasks)),
    });
    return;
  }
  const holder = liveLockHolder(paths.sessionLock);
  if (holder) {
    void vscode.window.showErrorMessage(`Launchpad: ${new LockHeldError(paths.sessionLock, holder).message}`);
    return;
  }
  const { settings, problems } = await readSettings();
  if (problems.length) offer('warning', `Launchpad: ignoring invalid settings: ${problems.join('; ')}`);
  const runSettings = toRunSettings(settings);
  if (!resolveRunConfig(runSettings, s.file, paths, paths.root).agentCommand) {
    // No agent anywhere: ask (Esc starts nothing).
    const choice = await pickAgent(runSettings.env);
    if (!choice) {
      offer('info', 'Launchpad: no agent chosen; nothing started.', {
        'Open Settings': () => vscode.commands.executeCommand('workbench.action.openSettings', 'launchpad.agent'),
      });
      return;
    }
    runSettings.editorAgent = choice.agent;
    runSettings.editorAgentSource = choice.remembered ?? 'the agent chosen for this run';
  }
  // The outcome, or why the core refused after all, is announced by run/runProgress.ts.
  try {
    return await runs.start(paths, runSettings);
  } catch (err) {
    offer('info', `Launchpad: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}

function stop({ model, runs }: CommandDeps): void {
  if (runs.stop()) {
    void vscode.window.showInformationMessage(
      'Launchpad: stopping. Running agents are being ended; their tasks stay in progress for the next run to recover.',
    );
    return;
  }
  const holder = model.snapshot?.activeSession;
  const message = holder
    ? `Launchpad: no run in this window. ${holder.command} (pid=${holder.pid} on ${holder.host}, since ${holder.acquired_at}) holds the lock; stop it where it runs.`
    : 'Launchpad: no run to stop.';
  void vscode.window.showInformationMessage(message);
}
