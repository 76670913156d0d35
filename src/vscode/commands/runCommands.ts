// Launchpad: Run Tasks, Stop Run, Show Status. Run starts without questions when it can; otherwise it says
// exactly why not (file and field of a bad task file, who holds the lock); with no agent set
// anywhere it asks for one (run/agentPick.ts).
import * as vscode from 'vscode';

import { agentIsSet } from '../../core/agents/agentSetting';
import { liveLockHolder, LockHeldError } from '../../core/lock';
import { readSettings, toRunSettings } from '../config';
import { COMMANDS } from '../contributions';
import { offer } from '../notify';
import { pickAgent } from '../run/agentPick';
import type { ActiveRun } from '../run/runManager';
import { requireTrust } from '../trust';
import { taskIdOf } from './args';
import type { CommandDeps, Handlers } from './deps';
import { reportEditError } from './errors';
import { showStatus } from './statusDocument';

export function runCommands(
  deps: CommandDeps,
): Handlers<typeof COMMANDS.run | typeof COMMANDS.stop | typeof COMMANDS.stopTask | typeof COMMANDS.status> {
  return {
    [COMMANDS.run]: () => run(deps),
    [COMMANDS.stop]: () => stop(deps),
    [COMMANDS.stopTask]: (arg) => stopTask(deps, taskIdOf(arg)),
    [COMMANDS.status]: () => showStatus(deps.model),
  };
}

/** Starts a run; returns it, or undefined (after saying why) when none started. */
async function run({ model, runs }: CommandDeps): Promise<ActiveRun | undefined> {
  if (!requireTrust('Run Tasks')) return;
  // Only this window's own run refuses a second: a run followed from elsewhere either holds the
  // lock (said below) or is a concurrent worker, which this run joins.
  const own = runs.own;
  if (own) {
    void vscode.window.showInformationMessage(
      `Launchpad: a run started in this window is going (pid ${own.pid ?? '?'}); "Launchpad: Stop Run" stops it.`,
    );
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
  if (!agentIsSet(runSettings, s.file)) {
    // No agent anywhere: ask (Esc starts nothing).
    let choice;
    try {
      choice = await pickAgent(paths.root, runSettings.env);
    } catch (err) {
      reportEditError('look for installed agents', err);
      return;
    }
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

async function stop({ model, runs }: CommandDeps): Promise<void> {
  if (!requireTrust('Stop Run')) return;
  const actions = await runs.stop();
  if (actions.includes('asked')) {
    void vscode.window.showInformationMessage(
      'Launchpad: stopping. Running agents are being ended; their tasks stay in progress for the next run to recover. Stop again to end it at once.',
    );
  } else if (actions.includes('ended') || actions.includes('killed')) {
    void vscode.window.showInformationMessage('Launchpad: the run was ended at once; the next run recovers its tasks.');
  } else {
    const holder = model.snapshot?.activeSession;
    const message = holder
      ? `Launchpad: ${holder.command} (pid=${holder.pid} on ${holder.host}, since ${holder.acquired_at}) holds the lock; stop it where it runs.`
      : 'Launchpad: no run to stop.';
    void vscode.window.showInformationMessage(message);
  }
}

/**
 * Stop Task: the run driving the task's attempt ends its agent, as `launchpad stop ID` asks; the
 * attempt fails as stopped by a person (retried while it has attempts left). Returns the answer.
 */
async function stopTask({ model, runs }: CommandDeps, arg: string | undefined): Promise<string | undefined> {
  if (!requireTrust('Stop Task')) return undefined;
  const running = (model.snapshot?.tasks ?? []).filter((t) => t.status === 'in_progress' && t.task.agent_id);
  const id =
    arg ??
    (
      await vscode.window.showQuickPick(
        running.map((t) => ({ label: t.id, description: t.title })),
        { title: 'Launchpad: Stop Task', placeHolder: 'Whose agent to end (its attempt fails as stopped by a person)' },
      )
    )?.label;
  if (!id) return undefined;
  const entry = (await model.refresh()).byId.get(id);
  const agentId = entry?.status === 'in_progress' ? entry.task.agent_id : undefined;
  if (!entry || !agentId) {
    void vscode.window.showInformationMessage(`Launchpad: ${id} is ${entry?.status ?? 'not in harness-tasks.json'}: no agent of it runs.`);
    return undefined;
  }
  const answer = await runs.stopTask(id, agentId);
  const said = {
    stopped: `${id}: its agent is being ended; the attempt fails as stopped by a person.`,
    'agent-ended': `${id}: its agent had ended already; the attempt goes on (validation, merge).`,
    'not-taken': `${id}: no run on this machine drives its attempt; nothing was stopped.`,
  }[answer];
  void vscode.window.showInformationMessage(`Launchpad: ${said}`);
  return answer;
}
