// The coding agents whose hook systems can run Launchpad's two hooks, in one table: where each
// keeps its project hooks, what it calls the two events, the handler it expects, and the JSON it
// reads back. Each entry follows the agent's own reference:
//   Claude Code  https://code.claude.com/docs/en/hooks (SessionStart: hookSpecificOutput.additionalContext;
//                Stop: {"decision":"block","reason"}; stop_hook_active on a stop that follows a block)
//   Codex        https://developers.openai.com/codex/hooks (the same contract as Claude Code)
//   Gemini CLI   https://geminicli.com/docs/hooks/reference (SessionStart: additionalContext;
//                AfterAgent: {"decision":"deny","reason"} retries the turn with the reason as prompt)
//   Cursor       https://cursor.com/docs/agent/hooks (sessionStart: additional_context;
//                stop: {"followup_message"} is sent as the next user message)
// GitHub Copilot and OpenCode are left out on purpose; docs/agents.md ("Agent hooks") says why.

export const HOOK_AGENTS = ['claude', 'codex', 'gemini', 'cursor'] as const;
export type HookAgent = (typeof HOOK_AGENTS)[number];

/** Launchpad's two hooks: a fresh context gets the state; a stop is refused while work remains. */
export const HOOK_EVENTS = ['session-start', 'stop'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export interface AgentHookSpec {
  label: string;
  /** The project's hook settings, relative to the state root. */
  settingsFile: string;
  /** The agent's names for the two events. */
  events: Record<HookEvent, string>;
  /**
   * `grouped`: hooks[event] is a list of matcher groups `{matcher?, hooks: [handler]}`;
   * `flat`: hooks[event] is a list of handlers.
   */
  layout: 'grouped' | 'flat';
  /** Top-level keys the file needs besides `hooks` (set only when absent). */
  required?: Record<string, unknown>;
  handler(command: string, event: HookEvent): Record<string, unknown>;
  /** stdout for context a fresh session should read. */
  contextOutput(text: string): string;
  /** stdout that keeps the agent working, with `reason` as its instruction. */
  continueOutput(reason: string): string;
}

const sessionStartContext = (text: string) =>
  JSON.stringify({ hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: text } });

/** Hooks must be quick; a stuck one is ended by the agent after this long. */
const TIMEOUT_S = 30;

export const AGENT_HOOKS: Record<HookAgent, AgentHookSpec> = {
  claude: {
    label: 'Claude Code',
    settingsFile: '.claude/settings.json',
    events: { 'session-start': 'SessionStart', stop: 'Stop' },
    layout: 'grouped',
    handler: (command) => ({ type: 'command', command, timeout: TIMEOUT_S }),
    contextOutput: sessionStartContext,
    continueOutput: (reason) => JSON.stringify({ decision: 'block', reason }),
  },
  codex: {
    label: 'Codex',
    settingsFile: '.codex/hooks.json',
    events: { 'session-start': 'SessionStart', stop: 'Stop' },
    layout: 'grouped',
    handler: (command) => ({ type: 'command', command, timeout: TIMEOUT_S }),
    contextOutput: sessionStartContext,
    continueOutput: (reason) => JSON.stringify({ decision: 'block', reason }),
  },
  gemini: {
    label: 'Gemini CLI',
    settingsFile: '.gemini/settings.json',
    events: { 'session-start': 'SessionStart', stop: 'AfterAgent' },
    layout: 'grouped',
    // Gemini CLI counts hook timeouts in milliseconds and names its hooks.
    handler: (command, event) => ({ name: `launchpad-${event}`, type: 'command', command, timeout: TIMEOUT_S * 1000 }),
    contextOutput: sessionStartContext,
    continueOutput: (reason) => JSON.stringify({ decision: 'deny', reason }),
  },
  cursor: {
    label: 'Cursor',
    settingsFile: '.cursor/hooks.json',
    events: { 'session-start': 'sessionStart', stop: 'stop' },
    layout: 'flat',
    required: { version: 1 },
    handler: (command) => ({ command }),
    contextOutput: (text) => JSON.stringify({ additional_context: text }),
    continueOutput: (reason) => JSON.stringify({ followup_message: reason }),
  },
};

export function isHookAgent(value: string): value is HookAgent {
  return (HOOK_AGENTS as readonly string[]).includes(value);
}

/** The command line a hook runs: `launchpad hook stop --agent claude`. */
export function hookCommand(prefix: string, event: HookEvent, agent: HookAgent): string {
  return `${prefix} hook ${event} --agent ${agent}`;
}

/** Whether a handler's command is one of Launchpad's hooks for `agent`, whatever runs launchpad. */
export function isOurCommand(command: unknown, agent: HookAgent): boolean {
  return typeof command === 'string' && new RegExp(`(^|\\s)hook (${HOOK_EVENTS.join('|')}) --agent ${agent}\\s*$`).test(command);
}
