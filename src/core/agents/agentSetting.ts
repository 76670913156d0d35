// Where a run's agent is set, in order of precedence: --agent, $LAUNCHPAD_AGENT, the editor's
// setting, session_config.agent (or its older name agent_command). Each is a preset name or a
// command line; resolve.ts turns the first found into what runs. Kept apart from the presets so
// that the editor can ask "is an agent set anywhere?" without loading them.
import type { TaskFile } from '../taskFile/schema';

/** What a front end knows of the agent (RunSettings' fields of the same names). */
export interface AgentSettings {
  cliAgent?: string | undefined;
  editorAgent?: string | undefined;
  editorAgentSource?: string | undefined;
  env?: NodeJS.ProcessEnv | undefined;
}

/** Each place an agent can be set, with its name for messages, first found first. */
export function agentCandidates(settings: AgentSettings, file: TaskFile): Array<[source: string, value: string | undefined]> {
  const env = settings.env ?? process.env;
  const cfg = file.session_config;
  return [
    ['--agent', settings.cliAgent],
    ['LAUNCHPAD_AGENT', env.LAUNCHPAD_AGENT],
    [settings.editorAgentSource ?? 'launchpad.agent.command', settings.editorAgent],
    nonBlank(cfg.agent)
      ? ['session_config.agent', cfg.agent ?? undefined]
      : ['session_config.agent_command', cfg.agent_command ?? undefined],
  ];
}

/** Whether any of them is set. */
export function agentIsSet(settings: AgentSettings, file: TaskFile): boolean {
  return agentCandidates(settings, file).some(([, value]) => nonBlank(value));
}

export function nonBlank(value: string | null | undefined): boolean {
  return typeof value === 'string' && value.trim() !== '';
}
