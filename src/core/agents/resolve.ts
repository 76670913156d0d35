// From an agent setting to the command line that runs: a bare preset name ("claude") is that
// preset's command with its extra arguments; anything else is a shell command line, as given.
import { InputError } from '../inputError';
import { type AgentPreset, findPreset, PRESET_NAMES, presetCommand } from './presets';
import { splitShellWords } from './shellWords';

export interface ResolvedAgent {
  command: string;
  /** Where the setting came from (`--agent`, `LAUNCHPAD_AGENT`, …), for messages. */
  source: string;
  preset?: AgentPreset;
  extraArgs: string[];
}

export interface AgentArgs {
  /** `--agent-args "…"`: shell words, for whichever preset is chosen. */
  cli?: string | undefined;
  /** session_config.agent_args: preset name → its extra arguments. */
  file?: Record<string, string[]> | null | undefined;
}

/**
 * The first non-blank candidate, resolved. Extra arguments from the CLI replace those from the
 * task file. Throws InputError (naming the setting) for arguments that cannot apply.
 */
export function resolveAgent(
  candidates: Array<[source: string, value: string | undefined]>,
  args: AgentArgs = {},
): ResolvedAgent | undefined {
  checkAgentArgsKeys(args.file);
  const found = candidates.find(([, value]) => value !== undefined && value.trim() !== '');
  const cliArgs = args.cli === undefined ? undefined : splitShellWords(args.cli, '--agent-args');
  if (!found) return undefined;
  const [source, value] = found as [string, string];
  const preset = findPreset(value);
  if (!preset) {
    if (cliArgs?.length) {
      throw new InputError(
        `--agent-args: extra arguments go to an agent preset (${PRESET_NAMES.join(', ')}), but the agent from ${source} is a command line; put them in that command line`,
      );
    }
    return { command: value, source, extraArgs: [] };
  }
  const extraArgs = cliArgs ?? args.file?.[preset.name] ?? [];
  return { command: presetCommand(preset, extraArgs), source, preset, extraArgs };
}

function checkAgentArgsKeys(file: AgentArgs['file']): void {
  for (const name of Object.keys(file ?? {})) {
    if (!findPreset(name) || name !== name.trim()) {
      throw new InputError(`harness-tasks.json: session_config.agent_args: "${name}" is not an agent preset (${PRESET_NAMES.join(', ')})`);
    }
  }
}
