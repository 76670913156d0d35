// Choosing the agent: a bare preset name anywhere an agent is accepted, anything else a command
// line as given; a preset's extra arguments from --agent-args or session_config.agent_args;
// mistakes named with their setting.
import assert from 'node:assert/strict';

import { detectLimit, parseDuration } from '../../../src/core/agents/limits';
import { findPreset, presetCommand } from '../../../src/core/agents/presets';
import { resolveAgent } from '../../../src/core/agents/resolve';
import { shellQuote, splitShellWords } from '../../../src/core/agents/shellWords';
import { resolveAgentSetting } from '../../../src/core/controller/runConfig';
import { parseTaskFile } from '../../../src/core/taskFile/parse';
import { taskFileSchema } from '../../../src/core/taskFile/schema';

const file = (sessionConfig: Record<string, unknown> = {}) => taskFileSchema.parse({ tasks: [], session_config: sessionConfig });

describe('agent resolution', () => {
  it('a preset name from any source is the preset; anything else is the command line itself', () => {
    const claude = presetCommand(findPreset('claude')!);
    assert.equal(claude, 'claude -p --output-format stream-json --verbose --dangerously-skip-permissions');
    assert.equal(resolveAgentSetting({ cliAgent: 'claude' }, file())!.command, claude);
    assert.equal(resolveAgentSetting({ env: { LAUNCHPAD_AGENT: ' codex ' } }, file())!.preset!.name, 'codex');
    assert.equal(resolveAgentSetting({ editorAgent: 'gemini' }, file())!.source, 'launchpad.agent.command');
    assert.equal(resolveAgentSetting({ env: {} }, file({ agent: 'opencode' }))!.source, 'session_config.agent');
    assert.equal(resolveAgentSetting({ env: {} }, file({ agent_command: 'copilot' }))!.preset!.name, 'copilot');
    const raw = resolveAgentSetting({ cliAgent: 'claude -p "$(cat "$LAUNCHPAD_PROMPT_FILE")"' }, file())!;
    assert.equal(raw.command, 'claude -p "$(cat "$LAUNCHPAD_PROMPT_FILE")"');
    assert.equal(raw.preset, undefined);
    assert.equal(resolveAgentSetting({ env: {} }, file()), undefined);
  });

  it('the first source found wins: --agent, LAUNCHPAD_AGENT, the editor, the task file', () => {
    const f = file({ agent: 'aider' });
    assert.equal(
      resolveAgentSetting({ cliAgent: 'codex', env: { LAUNCHPAD_AGENT: 'gemini' }, editorAgent: 'claude' }, f)!.preset!.name,
      'codex',
    );
    assert.equal(resolveAgentSetting({ env: { LAUNCHPAD_AGENT: 'gemini' }, editorAgent: 'claude' }, f)!.preset!.name, 'gemini');
    assert.equal(resolveAgentSetting({ env: {}, editorAgent: 'claude' }, f)!.preset!.name, 'claude');
    assert.equal(resolveAgentSetting({ env: { LAUNCHPAD_AGENT: '  ' } }, f)!.preset!.name, 'aider', 'blank is not set');
  });

  it('extra arguments: session_config.agent_args per preset, quoted; --agent-args replaces them; before the prompt', () => {
    const f = file({ agent: 'codex', agent_args: { codex: ['--model', 'o3 mini'], claude: ['--model', 'sonnet'] } });
    assert.equal(
      resolveAgentSetting({ env: {} }, f)!.command,
      "codex exec --json --dangerously-bypass-approvals-and-sandbox --model 'o3 mini' -",
    );
    assert.equal(
      resolveAgentSetting({ env: {}, cliAgentArgs: '--model "gpt-5 codex" -c x=1' }, f)!.command,
      "codex exec --json --dangerously-bypass-approvals-and-sandbox --model 'gpt-5 codex' -c x=1 -",
    );
    assert.equal(
      resolveAgentSetting({ env: {}, cliAgentArgs: '' }, f)!.command,
      'codex exec --json --dangerously-bypass-approvals-and-sandbox -',
    );
    assert.equal(
      resolveAgentSetting({ cliAgent: 'cursor-agent', cliAgentArgs: '--model gpt-5' }, f)!.command,
      'cursor-agent -p --force --trust --output-format stream-json --model gpt-5 "$(cat "$LAUNCHPAD_PROMPT_FILE")" </dev/null',
    );
    // agent_args of another preset do not apply to a command line.
    assert.equal(resolveAgentSetting({ cliAgent: './my-agent.sh' }, f)!.command, './my-agent.sh');
  });

  it('mistakes name their setting', () => {
    assert.throws(
      () => resolveAgentSetting({ cliAgent: './my-agent.sh', cliAgentArgs: '--model x' }, file()),
      /--agent-args: extra arguments go to an agent preset.*--agent is a command line/,
    );
    assert.throws(
      () => resolveAgentSetting({ cliAgent: 'claude' }, file({ agent_args: { claud: [] } })),
      /harness-tasks.json: session_config.agent_args: "claud" is not an agent preset \(claude, codex/,
    );
    assert.throws(
      () => resolveAgentSetting({ env: {} }, file({ agent: 'claude', agent_command: 'codex' })),
      /session_config.agent and session_config.agent_command are both set/,
    );
    assert.throws(
      () => resolveAgentSetting({ cliAgent: 'claude', cliAgentArgs: '--model "sonnet' }, file()),
      /--agent-args: unterminated " quote/,
    );
    const parsed = parseTaskFile(JSON.stringify({ tasks: [], session_config: { agent_args: { claude: '--model sonnet' } } }));
    assert.ok(!parsed.ok);
    assert.match(parsed.error.message, /session_config\.agent_args\.claude/);
  });

  it('resolveAgent without any candidate is undefined (the run reports "no agent command")', () => {
    assert.equal(resolveAgent([['--agent', undefined]], { cli: '--x' }), undefined);
  });
});

describe('shell words', () => {
  it('splits like /bin/sh (quotes and backslashes, no expansion) and quotes back', () => {
    assert.deepEqual(splitShellWords(`  --model "a b" 'c "d"' e\\ f "x\\"y" $HOME  `, 'x'), [
      '--model',
      'a b',
      'c "d"',
      'e f',
      'x"y',
      '$HOME',
    ]);
    assert.deepEqual(splitShellWords('', 'x'), []);
    assert.deepEqual(splitShellWords(`''`, 'x'), ['']);
    for (const w of ['plain', 'a b', "it's", '$(rm -rf /)', '', 'x;y']) {
      assert.deepEqual(splitShellWords(shellQuote(w), 'x'), [w], w);
    }
    assert.throws(() => splitShellWords("'open", '--agent-args'), /--agent-args: unterminated ' quote/);
  });
});

describe('limit messages', () => {
  const now = new Date('2026-08-20T12:00:00.000Z');

  it('tells a usage limit from a rate limit from an overload, and nothing from other errors', () => {
    assert.equal(detectLimit('Quota exceeded. Check your plan and billing details.', now)!.kind, 'usage-limit');
    assert.equal(
      detectLimit("Sorry, you've exceeded your 5 hour session limits. Please retry after 2733 seconds.", now)!.resetsAt,
      '2026-08-20T12:45:33.000Z',
    );
    assert.equal(detectLimit('exceeded retry limit, last status: 429 Too Many Requests', now)!.kind, 'rate-limit');
    assert.equal(detectLimit('Bad gateway', now, 429)!.kind, 'rate-limit');
    assert.deepEqual(
      detectLimit(
        'Rate limit reached for gpt-4o on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.',
        now,
        429,
      ),
      {
        kind: 'rate-limit',
        message: 'Rate limit reached for gpt-4o on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.',
        resetsAt: '2026-08-20T12:00:20.000Z',
        resetText: 'in 20s',
      },
    );
    assert.equal(detectLimit("We're currently experiencing high demand, which may cause temporary errors.", now)!.kind, 'overloaded');
    assert.equal(detectLimit('permission denied: src/x.ts', now), undefined);
    assert.equal(detectLimit('Try again later.', now), undefined);
  });

  it('reset phrases: durations become timestamps, wall-clock times stay words', () => {
    assert.equal(parseDuration('2h7m31s'), (2 * 3600 + 7 * 60 + 31) * 1000);
    assert.equal(parseDuration('3.2s'), 3200);
    assert.equal(parseDuration('15 hours 23 minutes'), (15 * 60 + 23) * 60_000);
    assert.equal(parseDuration('soon'), undefined);
    assert.deepEqual(detectLimit('Claude usage limit reached. Your limit will reset at 9am (America/Chicago).', now), {
      kind: 'usage-limit',
      message: 'Claude usage limit reached. Your limit will reset at 9am (America/Chicago).',
      resetText: '9am (America/Chicago)',
    });
    assert.equal(
      detectLimit("You've hit your limit · resets Apr 23 at 4pm (America/Recife)", now)!.resetText,
      'Apr 23 at 4pm (America/Recife)',
    );
    assert.equal(
      detectLimit("You've hit your usage limit. Try again at Aug 18th, 2026 12:30 PM.", now)!.resetText,
      'Aug 18th, 2026 12:30 PM',
    );
    assert.equal(detectLimit("You've hit your usage limit. Try again later.", now)!.resetText, undefined);
  });
});
