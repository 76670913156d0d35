import { AGENT_PRESETS, presetCommand } from '../../core/agents/presets';
import { newerThanProven, type PresetProbe, probePreset, VERSION_PROBE_TIMEOUT_MS } from '../../core/agents/probe';
import { findStateRoot, StatePaths } from '../../core/statePaths';
import { StateStore } from '../../core/taskFile/store';
import type { Command, CommandContext } from '../command';
import { EXIT } from '../exit';

export const agentsCommand: Command = {
  name: 'agents',
  usage: 'launchpad agents [--json]',
  summary: 'List the agent presets, which are installed (on PATH, with their --version), and the exact command each runs.',
  details: [
    'Use one with "launchpad run --agent NAME". The commands include the extra arguments of session_config.agent_args',
    `when a harness-tasks.json is found. Each --version probe has ${VERSION_PROBE_TIMEOUT_MS / 1000} s. Beside an installed`,
    "tool's version is the one its preset was proven with against the real tool; a newer one is warned about.",
  ].join('\n'),
  options: {
    json: { type: 'boolean', help: 'print the list as JSON' },
  },
  async run(ctx) {
    const agentArgs = taskFileAgentArgs(ctx);
    const probes = await Promise.all(AGENT_PRESETS.map((p) => probePreset(p, ctx.io.env)));
    const rows = probes.map((probe) => ({ probe, command: presetCommand(probe.preset, agentArgs?.[probe.preset.name] ?? []) }));
    if (ctx.values.json) {
      ctx.io.out(JSON.stringify({ agents: rows.map(({ probe, command }) => presetJson(probe, command)) }, null, 2) + '\n');
      return EXIT.OK;
    }
    const width = Math.max(...AGENT_PRESETS.map((p) => p.name.length)) + 2;
    const lines = ['Agent presets (launchpad run --agent NAME):', ''];
    for (const { probe, command } of rows) {
      lines.push(`${probe.preset.name.padEnd(width)}${probe.preset.title}: ${installation(probe)}`);
      if (newerThanProven(probe)) lines.push(`${' '.repeat(width)}warning: ${newerWords(probe)}`);
      lines.push(`${' '.repeat(width)}${command}`);
    }
    lines.push('', 'Any other --agent value is a command line run as it is.', '');
    ctx.io.out(lines.join('\n'));
    return EXIT.OK;
  },
};

function installation(probe: PresetProbe): string {
  if (!probe.path) return 'not found on PATH';
  const proven = probe.preset.proven ? `proven with ${probe.preset.proven.version}` : 'no version proven';
  return `${probe.version ?? `installed (${probe.versionError})`} at ${probe.path}; ${proven}`;
}

function newerWords(probe: PresetProbe): string {
  return `newer than ${probe.preset.proven!.version}, the version this preset was proven with: its flags or output may have changed`;
}

function presetJson(probe: PresetProbe, command: string): Record<string, unknown> {
  const p = probe.preset;
  return {
    name: p.name,
    title: p.title,
    executable: p.executable,
    installed: probe.path !== undefined,
    path: probe.path ?? null,
    version: probe.version ?? null,
    version_error: probe.versionError ?? null,
    proven_version: p.proven?.version ?? null,
    newer_than_proven: newerThanProven(probe),
    command,
    prompt: p.prompt,
    output: p.output,
    parses: p.parses,
    docs: p.docs,
  };
}

/** session_config.agent_args of the task file here, if there is one that loads. */
function taskFileAgentArgs(ctx: CommandContext): Record<string, string[]> | undefined {
  const root = findStateRoot(ctx.io.cwd, ctx.dir, ctx.io.env);
  if (!root) return undefined;
  const store = new StateStore(new StatePaths(root));
  if (!store.exists()) return undefined;
  try {
    return store.load().file.session_config.agent_args ?? undefined;
  } catch (err) {
    ctx.io.err(`note: ${(err as Error).message.split('\n')[0]}; the commands are shown without its agent_args\n`);
    return undefined;
  }
}
