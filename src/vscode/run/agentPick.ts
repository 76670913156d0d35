// When no agent is set anywhere, Run asks: the installed presets (found on PATH, with their
// `--version` and the version each was proven with, as `launchpad agents` lists them), or a
// command line typed in. The answer is used for this run and, if the person says so, written to
// the workspace's settings so the next Run does not ask.
import * as vscode from 'vscode';

import { SETTINGS } from '../contributions';
import { cliJson } from './cli';

/** A preset as `launchpad agents --json` lists it. */
interface ListedAgent {
  name: string;
  title: string;
  installed: boolean;
  path: string | null;
  version: string | null;
  version_error: string | null;
  /** The version its preset was proven with against the real tool. */
  proven_version: string | null;
  newer_than_proven: boolean;
}

export interface AgentChoice {
  /** A preset name or a command line, as an agent setting holds it. */
  agent: string;
  /** The setting it was written to, when remembered. */
  remembered?: string;
}

type AgentItem = vscode.QuickPickItem & { preset?: string };

/** Asks which agent runs; undefined when the person pressed Esc at any step. */
export async function pickAgent(root: string, env: NodeJS.ProcessEnv = process.env): Promise<AgentChoice | undefined> {
  // Probed before the pick opens, so that it never shows an empty list that Enter would close.
  const { agents } = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: 'Launchpad: looking for installed agents' },
    () => cliJson<{ agents: ListedAgent[] }>(['agents', '--dir', root], { cwd: root, env }),
  );
  const items = agentItems(agents.filter((p) => p.installed));
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

function agentItems(installed: ListedAgent[]): AgentItem[] {
  const presets = installed.map((p) => ({
    label: p.name,
    description: p.title,
    detail: [
      p.version ?? `${p.path} (${p.version_error ?? 'no version'})`,
      p.proven_version ? `proven with ${p.proven_version}` : 'no version proven',
      ...(p.newer_than_proven ? ['$(warning) newer than the proven version: its flags or output may have changed'] : []),
    ].join(' · '),
    preset: p.name,
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
