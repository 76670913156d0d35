// The extension's settings, read and validated in one place (declared in settingsSchema.ts,
// checked with zod in settingsValidation.ts, loaded with the core on first use); consumers get a
// typed snapshot and an event when any changes.
import * as vscode from 'vscode';

import type { RunSettings } from '../core/controller/runConfig';
import { SETTINGS } from './contributions';
import { loadCore } from './coreLoader';
import type { LaunchpadSettings } from './settingsSchema';

export type { LaunchpadSettings } from './settingsSchema';

export async function readSettings(): Promise<{ settings: LaunchpadSettings; problems: string[] }> {
  const cfg = vscode.workspace.getConfiguration();
  const blankToUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : (v ?? undefined));
  const raw = Object.fromEntries(Object.entries(SETTINGS).map(([name, key]) => [name, blankToUndefined(cfg.get(key))]));
  // Keep the valid settings, name the invalid ones.
  const { settings, invalid } = (await loadCore()).parseSettings(raw);
  return { settings, problems: invalid.map((i) => `${settingName(i.key)}: ${i.message}`) };
}

function settingName(key: string): string {
  return SETTINGS[key as keyof typeof SETTINGS] ?? key;
}

export function onDidChangeSettings(listener: () => void): vscode.Disposable {
  return vscode.workspace.onDidChangeConfiguration((e) => {
    if (Object.values(SETTINGS).some((s) => e.affectsConfiguration(s))) listener();
  });
}

/** The editor's part of a run's settings; the core resolves them against the flags, the environment and the task file. */
export function toRunSettings(settings: LaunchpadSettings, env: NodeJS.ProcessEnv = process.env): RunSettings {
  return {
    // The command line overrides the preset.
    editorAgent: settings.agentCommand ?? settings.agentPreset,
    editorAgentSource: settings.agentCommand !== undefined ? SETTINGS.agentCommand : SETTINGS.agentPreset,
    maxParallel: settings.maxParallelAgents,
    worktreeDir: settings.worktreeLocation,
    env,
  };
}
