// The extension's settings, read and validated in one place; consumers get a typed snapshot
// and an event when any of them changes.
import * as z from 'zod/mini';
import * as vscode from 'vscode';
import type { RunSettings } from '../core/controller/runConfig';
import { SETTINGS } from './contributions';

const settingsSchema = z.object({
  agentCommand: z.optional(z.string()),
  worktreeLocation: z.optional(z.string()),
  maxParallelAgents: z.optional(z.int().check(z.gte(1), z.lte(32))),
});
export type LaunchpadSettings = z.infer<typeof settingsSchema>;

export function readSettings(): { settings: LaunchpadSettings; problems: string[] } {
  const cfg = vscode.workspace.getConfiguration();
  const blankToUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : (v ?? undefined));
  const raw = {
    agentCommand: blankToUndefined(cfg.get(SETTINGS.agentCommand)),
    worktreeLocation: blankToUndefined(cfg.get(SETTINGS.worktreeLocation)),
    maxParallelAgents: blankToUndefined(cfg.get(SETTINGS.maxParallelAgents)),
  };
  const parsed = settingsSchema.safeParse(raw);
  if (parsed.success) return { settings: parsed.data, problems: [] };
  // Keep the valid settings, name the invalid ones.
  const problems = parsed.error.issues.map((i) => `${settingName(String(i.path[0]))}: ${i.message}`);
  const bad = new Set(parsed.error.issues.map((i) => String(i.path[0])));
  const settings = Object.fromEntries(Object.entries(raw).filter(([k]) => !bad.has(k))) as LaunchpadSettings;
  return { settings, problems };
}

function settingName(key: string): string {
  return SETTINGS[key as keyof typeof SETTINGS] ?? key;
}

export function onDidChangeSettings(listener: () => void): vscode.Disposable {
  return vscode.workspace.onDidChangeConfiguration((e) => {
    if (Object.values(SETTINGS).some((s) => e.affectsConfiguration(s))) listener();
  });
}

/** The editor's part of a run's settings; the core resolves them against the task file (SPEC §4). */
export function toRunSettings(settings: LaunchpadSettings, env: NodeJS.ProcessEnv = process.env): RunSettings {
  return {
    editorAgent: settings.agentCommand,
    maxParallel: settings.maxParallelAgents,
    worktreeDir: settings.worktreeLocation,
    env,
  };
}
