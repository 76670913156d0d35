// The agent presets: for each coding-agent CLI, the non-interactive invocation that edits files,
// runs commands and commits without asking, with structured output where the tool has it, and
// the parser that reads that output. A preset's command is an ordinary agent command line
// (run by /bin/sh -c in the task's worktree, with the prompt on stdin and LAUNCHPAD_* set), so
// "$LAUNCHPAD_PROMPT_FILE" inside it is expanded by that shell.
//
// None of these tools asks before acting here, and none runs in its own sandbox: the worktree
// is the only isolation. Run Launchpad where that is acceptable (a container or a VM for
// untrusted work).
import { AiderTextParser } from './parsers/aiderText';
import { ClaudeStreamParser } from './parsers/claudeStream';
import { CodexJsonParser } from './parsers/codexJson';
import { CopilotJsonParser } from './parsers/copilotJson';
import { GeminiStreamParser } from './parsers/geminiStream';
import { OpencodeJsonParser } from './parsers/opencodeJson';
import type { OutputParser, ParserContext } from './parsers/parser';
import { QwenStreamParser } from './parsers/qwenStream';
import { shellQuote } from './shellWords';

export interface AgentPreset {
  /** What a person types: `run --agent claude`. */
  name: string;
  title: string;
  /** The program looked up on PATH. */
  executable: string;
  /** Variables the command line sets for the program (`NAME=value` before it). */
  vars?: Record<string, string>;
  /** Fixed flags after the program; extra arguments come after them. */
  flags: string[];
  /** Shell text after the extra arguments that hands the prompt over ('' when it reads stdin). */
  promptArgs: string;
  /** How the prompt reaches it, for people. */
  prompt: string;
  /** Its output format, for people. */
  output: string;
  /** What Launchpad reads from that output, for people. */
  parses: string;
  /** The documentation each flag was checked against. */
  docs: string[];
  /**
   * The environment variables the tool reads for its credentials and settings (a trailing `*`
   * matches a prefix): what an agent of this tool gets on a queue worker beyond the basics.
   */
  env: string[];
  /**
   * The npm package and version the agent-CLI suite (test/agent-clis) runs against a scripted
   * model server; absent for a tool that does not install from npm.
   */
  proven?: { npm: string; version: string };
  createParser(ctx: ParserContext): OutputParser;
}

export const AGENT_PRESETS: readonly AgentPreset[] = [
  {
    // -p: print mode (one prompt, then exit), the prompt read from stdin. stream-json: one JSON
    // event per line as it works (print mode refuses it without --verbose). Skipping permission
    // prompts is what lets it edit, run the validation and commit unattended (it refuses to
    // start as root outside a sandbox).
    name: 'claude',
    title: 'Claude Code',
    executable: 'claude',
    flags: ['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions'],
    promptArgs: '',
    prompt: 'stdin',
    output: 'stream-json (JSON lines)',
    parses: 'message text, cost (total_cost_usd), tokens, usage limits (rate_limit_event, error results) with reset time',
    docs: ['https://code.claude.com/docs/en/headless', 'https://code.claude.com/docs/en/cli-reference'],
    env: ['ANTHROPIC_*', 'CLAUDE_CODE_*', 'CLAUDE_CONFIG_DIR', 'IS_SANDBOX'],
    proven: { npm: '@anthropic-ai/claude-code', version: '2.1.197' },
    createParser: (ctx) => new ClaudeStreamParser('claude', ctx),
  },
  {
    // exec: non-interactive; --json: JSON lines on stdout; "-": the prompt from stdin. The
    // bypass flag (not --sandbox workspace-write) because that sandbox keeps a linked
    // worktree's git directory, which lies outside the worktree, read-only: no commit.
    name: 'codex',
    title: 'OpenAI Codex CLI',
    executable: 'codex',
    flags: ['exec', '--json', '--dangerously-bypass-approvals-and-sandbox'],
    promptArgs: '-',
    prompt: 'stdin ("-")',
    output: '--json (JSON lines)',
    parses: 'message text, tokens, usage limits ("try again at …")',
    docs: ['https://developers.openai.com/codex/noninteractive', 'https://developers.openai.com/codex/cli/reference'],
    env: ['OPENAI_*', 'CODEX_*'],
    proven: { npm: '@openai/codex', version: '0.171.0' },
    createParser: (ctx) => new CodexJsonParser('codex', ctx),
  },
  {
    // Headless because stdin is not a terminal; the prompt is stdin (-p would be appended to it).
    // yolo approval mode: every tool runs without asking. GEMINI_CLI_TRUST_WORKSPACE: headless,
    // it exits 55 in any folder not in its trusted list, and each task's worktree is a new folder
    // Launchpad made from a repository the person already chose to run agents on. Not
    // --skip-trust: that flag takes effect after the settings are read, so the repository's own
    // .gemini/settings.json would be ignored.
    name: 'gemini',
    title: 'Gemini CLI',
    executable: 'gemini',
    vars: { GEMINI_CLI_TRUST_WORKSPACE: 'true' },
    flags: ['--output-format', 'stream-json', '--approval-mode', 'yolo'],
    promptArgs: '',
    prompt: 'stdin',
    output: 'stream-json (JSON lines)',
    parses: 'message text, tokens, quota errors with their reset ("retry in …", "retry after …", "reset after …")',
    docs: ['https://geminicli.com/docs/cli/headless/', 'https://geminicli.com/docs/cli/cli-reference/'],
    env: [
      'GEMINI_*',
      'GOOGLE_API_KEY',
      'GOOGLE_CLOUD_PROJECT',
      'GOOGLE_CLOUD_LOCATION',
      'GOOGLE_GENAI_USE_VERTEXAI',
      'GOOGLE_APPLICATION_CREDENTIALS',
    ],
    proven: { npm: '@google/gemini-cli', version: '0.61.0' },
    createParser: (ctx) => new GeminiStreamParser('gemini', ctx),
  },
  {
    // --message-file: one message, then exit; it commits each edit itself (auto-commits are on
    // by default). --yes-always answers every question yes — except running shell commands,
    // which it then declines — so the flags after it keep it from saying yes to an upgrade, to
    // analytics or to opening release notes.
    name: 'aider',
    title: 'Aider',
    executable: 'aider',
    flags: ['--yes-always', '--no-pretty', '--no-check-update', '--no-show-release-notes', '--no-analytics'],
    promptArgs: '--message-file "$LAUNCHPAD_PROMPT_FILE"',
    prompt: '--message-file "$LAUNCHPAD_PROMPT_FILE"',
    output: 'plain text (no JSON mode)',
    parses: 'its text, cost (the "Cost: … session" line), rate-limit messages',
    docs: ['https://aider.chat/docs/scripting.html', 'https://aider.chat/docs/config/options.html'],
    env: ['AIDER_*', 'OPENAI_*', 'ANTHROPIC_*', 'GEMINI_API_KEY', 'OPENROUTER_API_KEY', 'DEEPSEEK_API_KEY'],
    createParser: (ctx) => new AiderTextParser('aider', ctx),
  },
  {
    // run: one message, then exit; piped stdin is the message. --dangerously-skip-permissions
    // approves every permission not explicitly denied (current releases also call it --auto).
    name: 'opencode',
    title: 'OpenCode',
    executable: 'opencode',
    flags: ['run', '--format', 'json', '--dangerously-skip-permissions'],
    promptArgs: '',
    prompt: 'stdin',
    output: '--format json (JSON lines)',
    parses: 'message text, cost and tokens (summed over steps), API errors (429)',
    docs: ['https://opencode.ai/docs/cli/#run', 'https://opencode.ai/docs/permissions/'],
    env: ['OPENCODE_*', 'ANTHROPIC_*', 'OPENAI_*', 'GEMINI_API_KEY', 'OPENROUTER_API_KEY'],
    proven: { npm: 'opencode-ai', version: '1.18.33' },
    createParser: (ctx) => new OpencodeJsonParser('opencode', ctx),
  },
  {
    // Qwen Code. Headless because stdin is not a terminal; the prompt is stdin (-p would be
    // appended to it). yolo approval mode: every tool runs without asking. stream-json: Claude
    // Code's event shape, one JSON object per line.
    name: 'qwen',
    title: 'Qwen Code',
    executable: 'qwen',
    flags: ['--output-format', 'stream-json', '--approval-mode', 'yolo'],
    promptArgs: '',
    prompt: 'stdin',
    output: 'stream-json (JSON lines)',
    parses: 'message text, tokens, API errors and rate limits ("try again in …")',
    docs: [
      'https://qwenlm.github.io/qwen-code-docs/en/users/features/headless',
      'https://qwenlm.github.io/qwen-code-docs/en/users/configuration/settings',
    ],
    env: ['OPENAI_*', 'QWEN_*', 'DASHSCOPE_*'],
    proven: { npm: '@qwen-code/qwen-code', version: '0.24.4' },
    createParser: (ctx) => new QwenStreamParser('qwen', ctx),
  },
  {
    // -p: print mode; --force: apply edits and run commands (without it changes are only
    // proposed); --trust: no workspace-trust question in a new worktree. The prompt is an
    // argument (one argument holds at most 128 KiB on Linux); stdin is closed so it is not
    // read as a second prompt.
    name: 'cursor-agent',
    title: "Cursor's agent CLI",
    executable: 'cursor-agent',
    flags: ['-p', '--force', '--trust', '--output-format', 'stream-json'],
    promptArgs: '"$(cat "$LAUNCHPAD_PROMPT_FILE")" </dev/null',
    prompt: 'argument (from $LAUNCHPAD_PROMPT_FILE)',
    output: 'stream-json (JSON lines)',
    parses: 'message text, errors and usage limits',
    docs: ['https://cursor.com/docs/cli/reference/parameters', 'https://cursor.com/docs/cli/reference/output-format'],
    env: ['CURSOR_API_KEY', 'CURSOR_AUTH_TOKEN', 'CURSOR_CONFIG_DIR'],
    createParser: (ctx) => new ClaudeStreamParser('cursor-agent', ctx),
  },
  {
    // -p: one prompt, then exit (an argument, from the prompt file; stdin closed). Tools and
    // paths allowed without asking (the worktree's git directory and the validation's files may
    // lie outside it); --no-ask-user: it never stops to ask. Its JSON lines carry no token
    // counts (with a provider of one's own, BYOK, none at all): the usage file it writes at the
    // end is printed after them on one line, and the tool's exit status kept.
    name: 'copilot',
    title: 'GitHub Copilot CLI',
    executable: 'copilot',
    flags: ['--allow-all-tools', '--allow-all-paths', '--no-ask-user', '--output-format', 'json'],
    promptArgs:
      '-p "$(cat "$LAUNCHPAD_PROMPT_FILE")" --usage-output-file "$LAUNCHPAD_PROMPT_FILE.usage.json" </dev/null; ' +
      's=$?; tr -d \'\\n\' <"$LAUNCHPAD_PROMPT_FILE.usage.json" 2>/dev/null && echo; exit $s',
    prompt: '-p argument (from $LAUNCHPAD_PROMPT_FILE)',
    output: '--output-format json (JSON lines)',
    parses: 'message text, tokens (its usage file), premium requests, rate limits ("try again in …")',
    docs: [
      'https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-programmatic-reference',
      'https://docs.github.com/en/copilot/how-tos/copilot-cli/automate-copilot-cli/run-cli-programmatically',
    ],
    // COPILOT_GITHUB_TOKEN. It reads GH_TOKEN and GITHUB_TOKEN too, but on a worker those often
    // hold the remote's push token: a worker adds them only when told to (--pass-env).
    env: ['COPILOT_*'],
    proven: { npm: '@github/copilot', version: '1.0.102' },
    createParser: (ctx) => new CopilotJsonParser('copilot', ctx),
  },
];

export const PRESET_NAMES = AGENT_PRESETS.map((p) => p.name);

export function findPreset(name: string): AgentPreset | undefined {
  return AGENT_PRESETS.find((p) => p.name === name.trim());
}

/** The variables an agent's tool reads: its preset's, or every preset's for a command that is not one. */
export function toolVariables(preset: string | undefined): string[] {
  const found = preset ? findPreset(preset) : undefined;
  return found ? found.env : [...new Set(AGENT_PRESETS.flatMap((p) => p.env))];
}

/** The command line a preset runs, with extra arguments (each quoted) before the prompt. */
export function presetCommand(preset: AgentPreset, extraArgs: readonly string[] = []): string {
  const vars = Object.entries(preset.vars ?? {}).map(([name, value]) => `${name}=${shellQuote(value)} `);
  const words = vars.join('') + [preset.executable, ...preset.flags, ...extraArgs].map(shellQuote).join(' ');
  return preset.promptArgs ? `${words} ${preset.promptArgs}` : words;
}
