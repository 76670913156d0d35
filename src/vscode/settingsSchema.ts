// The extension's settings, declared once: key, type, default, scope, description, constraints.
// package.json's `contributes.configuration` and `restrictedConfigurations` are generated from
// here by the build (scripts/gen-settings.mjs; a unit test fails when they differ), the zod
// validation is built from here (settingsValidation.ts), and SETTINGS names the keys.
// No imports, so node loads it for the build and the extension loads it at activation for free.

type Scope = 'application' | 'machine' | 'machine-overridable' | 'window' | 'resource' | 'language-overridable';

interface SettingBase {
  /** The id in settings.json. */
  key: string;
  /** Shown in the Settings editor (markdown). */
  markdownDescription: string;
  /** Where it may be set; absent: VS Code's default (`window`). */
  scope?: Scope;
  /** A workspace's value is ignored until the workspace is trusted (it could run something). */
  restricted?: boolean;
}

interface StringSetting extends SettingBase {
  type: 'string';
  /** Blank means unset: the run falls back to the next source. */
  default: string;
  /** The only values allowed (the Settings editor shows a drop-down), each with its description. */
  enum?: readonly string[];
  enumDescriptions?: readonly string[];
}

interface IntegerSetting extends SettingBase {
  type: 'integer';
  /** null means unset (the schema then allows null); a number is the value. */
  default: number | null;
  minimum: number;
  maximum: number;
}

export type SettingDeclaration = StringSetting | IntegerSetting;

export const SETTINGS_TITLE = 'Launchpad';

/**
 * The agent presets by name, with their titles, for `launchpad.agent.preset`'s drop-down. The
 * presets themselves live in the core (src/core/agents/presets.ts), which this file may not
 * import; a unit test fails when the two lists differ.
 */
export const PRESET_CHOICES = [
  ['claude', 'Claude Code'],
  ['codex', 'OpenAI Codex CLI'],
  ['gemini', 'Gemini CLI'],
  ['aider', 'Aider'],
  ['opencode', 'OpenCode'],
  ['qwen', 'Qwen Code'],
  ['cursor-agent', "Cursor's agent CLI"],
  ['copilot', 'GitHub Copilot CLI'],
] as const;

/** Every setting, by the name the code reads it under. */
export const SETTING_DECLARATIONS = {
  agentCommand: {
    key: 'launchpad.agent.command',
    type: 'string',
    default: '',
    markdownDescription:
      "Shell command line that runs one agent on one task, in the task's worktree. It gets the prompt on standard input and in `$LAUNCHPAD_PROMPT_FILE`, with `LAUNCHPAD_TASK_ID`, `LAUNCHPAD_TASK_TITLE`, `LAUNCHPAD_WORKTREE`, `LAUNCHPAD_BRANCH` and `LAUNCHPAD_ATTEMPT` set, and must print `RESULT:SUCCESS` or `RESULT:FAIL <reason>`. A bare preset name (`claude`, `codex`, …) is that preset. Overrides `#launchpad.agent.preset#`. Empty: `$LAUNCHPAD_AGENT`, then `session_config.agent_command` in harness-tasks.json.",
    scope: 'machine-overridable',
    restricted: true,
  },
  agentPreset: {
    key: 'launchpad.agent.preset',
    type: 'string',
    default: '',
    enum: ['', ...PRESET_CHOICES.map(([name]) => name)],
    enumDescriptions: ['None: Run asks which installed agent to use.', ...PRESET_CHOICES.map(([name, title]) => `${title} (\`${name}\`)`)],
    markdownDescription:
      'The agent preset that runs each task, with its non-interactive flags and output parser (`launchpad agents` shows what each runs). `#launchpad.agent.command#` overrides it when set.',
    scope: 'machine-overridable',
    restricted: true,
  },
  worktreeLocation: {
    key: 'launchpad.worktree.location',
    type: 'string',
    default: '',
    markdownDescription:
      'Folder for the task worktrees (absolute, or relative to the folder holding harness-tasks.json). Empty: `<repository>.launchpad-worktrees` beside the repository.',
    scope: 'machine-overridable',
    restricted: true,
  },
  maxParallelAgents: {
    key: 'launchpad.maxParallelAgents',
    type: 'integer',
    default: null,
    minimum: 1,
    maximum: 32,
    markdownDescription: 'Agents running at once. Empty: `session_config.max_parallel_agents` from harness-tasks.json (3 when absent).',
  },
} as const satisfies Record<string, SettingDeclaration>;

type Declarations = typeof SETTING_DECLARATIONS;
export type SettingName = keyof Declarations;

/** The settings as the extension uses them: a blank or invalid setting is absent. */
export type LaunchpadSettings = {
  [K in SettingName]?: (Declarations[K]['type'] extends 'string' ? string : number) | undefined;
};

/** Each setting's key by name: `SETTINGS.agentCommand` is `launchpad.agent.command`. */
export const SETTINGS = Object.fromEntries(Object.entries(SETTING_DECLARATIONS).map(([name, s]) => [name, s.key])) as {
  readonly [K in SettingName]: Declarations[K]['key'];
};

/** One setting as package.json's `contributes.configuration.properties` declares it. */
function contributedProperty(s: SettingDeclaration): Record<string, unknown> {
  const property: Record<string, unknown> = { type: s.default === null ? [s.type, 'null'] : s.type, default: s.default };
  if (s.type === 'integer') Object.assign(property, { minimum: s.minimum, maximum: s.maximum });
  if (s.type === 'string' && s.enum) Object.assign(property, { enum: s.enum, enumDescriptions: s.enumDescriptions });
  property.markdownDescription = s.markdownDescription;
  if (s.scope) property.scope = s.scope;
  return property;
}

/** What package.json must hold for the settings (written there by scripts/gen-settings.mjs). */
export function settingsContribution(): {
  /** `contributes.configuration` */
  configuration: { title: string; properties: Record<string, Record<string, unknown>> };
  /** `capabilities.untrustedWorkspaces.restrictedConfigurations` */
  restrictedConfigurations: string[];
} {
  const all: SettingDeclaration[] = Object.values(SETTING_DECLARATIONS);
  return {
    configuration: { title: SETTINGS_TITLE, properties: Object.fromEntries(all.map((s) => [s.key, contributedProperty(s)])) },
    restrictedConfigurations: all.filter((s) => s.restricted).map((s) => s.key),
  };
}
