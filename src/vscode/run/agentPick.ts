// When no agent is set anywhere, Run asks: the installed presets (found on PATH, with their
// `--version`), or a command line typed in. The answer is used for this run and, if the person
// says so, written to the workspace's settings so the next Run does not ask.
import * as vscode from 'vscode';

import { AGENT_PRESETS } from '../../core/agents/presets';
import { type PresetProbe, probePreset } from '../../core/agents/probe';
import { SETTINGS } from '../contributions';

export interface AgentChoice {
  /** A preset name or a command line, as an agent setting holds it. */
  agent: string;
  /** The setting it was written to, when remembered. */
  remembered?: string;
}

type AgentItem = vscode.QuickPickItem & { preset?: string };

/** Asks which agent runs; undefined when the person pressed Esc at any step. */
export async function pickAgent(env: NodeJS.ProcessEnv = process.env): Promise<AgentChoice | undefined> {
  // Probed before the pick opens, so that it never shows an empty list that Enter would close.
  const probes = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: 'Launchpad: looking for installed agents' },
    () => Promise.all(AGENT_PRESETS.map((p) => probePreset(p, env))),
  );
  const items = agentItems(probes.filter((p) => p.path !== undefined));
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Launchpad: which agent runs the tasks?',
    placeHolder: 'No agent is set. The installed agent presets, or a command line',
    ignoreFocusOut: true,
  });
  if (!picked) return undefined;
  const agent = picked.preset ?? (await askCommandLine());
  if (agent === undefined) return undefined;
  const key = picked.preset ? SETTINGS.agentPreset : SETTINGS.agentCommand;
  const once = { label: 'Use it for this run' };
  const remember = { label: 'Use it and remember it for this workspace', description: `sets ${key}` };
  const how = await vscode.window.showQuickPick([once, remember], { title: `Launchpad: agent ${agent}`, ignoreFocusOut: true });
  if (!how) return undefined;
  if (how === once) return { agent };
  await vscode.workspace.getConfiguration().update(key, agent, vscode.ConfigurationTarget.Workspace);
  return { agent, remembered: key };
}

function agentItems(installed: PresetProbe[]): AgentItem[] {
  const presets = installed.map((p) => ({
    label: p.preset.name,
    description: p.preset.title,
    detail: p.version ?? `${p.path} (${p.versionError ?? 'no version'})`,
    preset: p.preset.name,
  }));
  const none: AgentItem[] = presets.length
    ? []
    : [{ label: 'No agent preset is installed on PATH', kind: vscode.QuickPickItemKind.Separator }];
  return [...presets, ...none, { label: 'Enter a command line…', description: 'any shell command line that runs one agent on one task' }];
}

async function askCommandLine(): Promise<string | undefined> {
  const line = await vscode.window.showInputBox({
    title: 'Launchpad: agent command line',
    prompt: "Runs in the task's worktree with the prompt on standard input; it must print RESULT:SUCCESS or RESULT:FAIL <reason>.",
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() ? undefined : 'Enter a command line, or press Esc to cancel the run.'),
  });
  return line?.trim() || undefined;
}
