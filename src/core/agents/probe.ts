// Which presets are installed: the program looked up on PATH as /bin/sh would, and its
// `--version` answer, each probe under a short time limit (a tool that hangs or asks a question
// is reported, not waited for), beside the version the agent-CLI suite last proved.
import { accessSync, constants, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';

import { runProcess } from '../process/runProcess';
import type { AgentPreset } from './presets';

export const VERSION_PROBE_TIMEOUT_MS = 5000;

export interface PresetProbe {
  preset: AgentPreset;
  /** Where the program is; undefined when it is not on PATH. */
  path?: string;
  /** The first line `--version` printed. */
  version?: string;
  /** Why there is no version (a time limit, an error exit). */
  versionError?: string;
}

/** The first executable file named `name` in PATH's directories. */
export function findOnPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

export async function probePreset(preset: AgentPreset, env: NodeJS.ProcessEnv, timeoutMs = VERSION_PROBE_TIMEOUT_MS): Promise<PresetProbe> {
  const path = findOnPath(preset.executable, env);
  if (!path) return { preset };
  const r = await runProcess({ command: { file: path, args: ['--version'] }, cwd: tmpdir(), env, timeoutMs, captureBytes: 4096 });
  const firstLine = (text: string) =>
    text
      .split('\n')
      .map((l) => l.trim())
      .find(Boolean);
  const line = firstLine(r.stdout) ?? firstLine(r.stderr);
  if (r.timedOut) return { preset, path, versionError: `no answer to --version within ${timeoutMs / 1000} s` };
  if (r.spawnError) return { preset, path, versionError: `could not start: ${r.spawnError}` };
  if (r.code !== 0) return { preset, path, versionError: `--version exited with ${r.code ?? r.signal}${line ? `: ${line}` : ''}` };
  return line ? { preset, path, version: line.slice(0, 200) } : { preset, path, versionError: '--version printed nothing' };
}

/** The dotted version in a `--version` line: "2.1.140 (Claude Code)" → "2.1.140", "codex-cli 0.152.0" → "0.152.0". */
export function dottedVersion(line: string): string | undefined {
  return /\d+(?:\.\d+)+/.exec(line)?.[0];
}

/** Dotted versions compared part by part as numbers (a missing part is 0): negative, 0 or positive. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d) return d;
  }
  return 0;
}

/**
 * The installed tool is newer than the version its preset was proven with: its flags or output
 * may have changed since. False when either version is unknown.
 */
export function newerThanProven(probe: PresetProbe): boolean {
  const installed = probe.version && dottedVersion(probe.version);
  const proven = probe.preset.proven?.version;
  return !!installed && !!proven && compareVersions(installed, proven) > 0;
}
