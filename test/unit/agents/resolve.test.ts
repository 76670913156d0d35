// Choosing the agent: a bare preset name anywhere an agent is accepted, anything else a command
// line as given; a preset's extra arguments from --agent-args or session_config.agent_args;
// mistakes named with their setting.
import assert from 'node:assert/strict';

import { detectLimit, parseDuration, wallClockTime } from '../../../src/core/agents/limits';
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
    assert.equal(detectLimit('permission denied: src/x.ts', now), undefined);
  });

  it('an overload is the provider saying so (the word, HTTP 503 or 529); "high demand" with a 500 or no status is no limit', () => {
    const highDemand = "We're currently experiencing high demand, which may cause temporary errors.";
    assert.equal(detectLimit(highDemand, now), undefined);
    assert.equal(detectLimit(highDemand, now, 500), undefined);
    assert.equal(detectLimit(highDemand, now, 503)!.kind, 'overloaded');
    assert.equal(detectLimit('upstream error', now, 529)!.kind, 'overloaded');
    assert.equal(
      detectLimit('API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', now)!.kind,
      'overloaded',
    );
    assert.equal(detectLimit("The API provider's servers are down or overloaded.", now)!.kind, 'overloaded');
    assert.equal(detectLimit('503 Service Unavailable', now)!.kind, 'overloaded');
    assert.equal(detectLimit('Internal server error', now, 500), undefined);
    assert.equal(detectLimit('permission denied: src/x.ts', now), undefined);
    assert.equal(detectLimit('Try again later.', now), undefined);
  });

  it('reset phrases: durations and wall-clock times become timestamps, the words kept', () => {
    assert.equal(parseDuration('2h7m31s'), (2 * 3600 + 7 * 60 + 31) * 1000);
    assert.equal(parseDuration('3.2s'), 3200);
    assert.equal(parseDuration('15 hours 23 minutes'), (15 * 60 + 23) * 60_000);
    assert.equal(parseDuration('soon'), undefined);
    // 12:00Z is 07:00 in Chicago (CDT, UTC-5): 9am there is 14:00Z the same day.
    assert.deepEqual(detectLimit('Claude usage limit reached. Your limit will reset at 9am (America/Chicago).', now), {
      kind: 'usage-limit',
      message: 'Claude usage limit reached. Your limit will reset at 9am (America/Chicago).',
      resetsAt: '2026-08-20T14:00:00.000Z',
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

  it('wall-clock resets: the next such time after now, in the zone given, the one the text names, or the date it names', () => {
    const utc = (text: string, zone = 'UTC') =>
      detectLimit(`You've hit your usage limit. Try again at ${text}.`, now, undefined, zone)?.resetsAt;
    assert.equal(utc('5:55 PM'), '2026-08-20T17:55:00.000Z');
    assert.equal(utc('17:55'), '2026-08-20T17:55:00.000Z');
    assert.equal(utc('3pm'), '2026-08-20T15:00:00.000Z');
    assert.equal(utc('12:30 AM'), '2026-08-21T00:30:00.000Z', 'past today: tomorrow');
    assert.equal(utc('11:59 AM'), '2026-08-21T11:59:00.000Z', 'a minute ago today: tomorrow');
    assert.equal(utc('12:00 PM'), '2026-08-20T12:01:00.000Z', 'printed to the minute: within that minute, its end');
    assert.equal(utc('12pm'), '2026-08-20T12:01:00.000Z');
    assert.equal(utc('5:55 PM', 'Asia/Tokyo'), '2026-08-21T08:55:00.000Z', 'Tokyo is already at 21:00: its next 5:55 PM is tomorrow');
    assert.equal(utc('5:55 PM', 'America/New_York'), '2026-08-20T21:55:00.000Z');
    assert.equal(utc('3pm (Europe/Berlin)', 'America/New_York'), '2026-08-20T13:00:00.000Z', 'the named zone wins');
    assert.equal(utc('Nov 28th, 2026 5:55 PM', 'Europe/Berlin'), '2026-11-28T16:55:00.000Z', 'a date past the change to winter time');
    assert.equal(utc('Aug 18th, 2026 12:30 PM'), '2026-08-18T12:30:00.000Z', 'a date given is that date, even past');
    assert.equal(utc('Apr 23 at 4pm (America/Recife)'), '2027-04-23T19:00:00.000Z', 'a date without a year: its next one');
    assert.equal(utc('3pm (Mars/Olympus)'), undefined, 'a zone Intl does not know: the words only');
    assert.equal(utc('3 days'), undefined);
    assert.equal(utc('13pm'), undefined);
    const local = detectLimit('Try again at 5:55 PM.', now, 429)!;
    assert.equal(local.resetText, '5:55 PM');
    assert.equal(local.resetsAt, wallClockTime('5:55 PM', now)!.toISOString(), 'without a zone: the local one');
    // Spring forward in Berlin (2026-03-29, 02:00 → 03:00): 3:30 AM that day is 01:30Z.
    assert.equal(wallClockTime('3:30 AM', new Date('2026-03-29T00:00:00Z'), 'Europe/Berlin')!.toISOString(), '2026-03-29T01:30:00.000Z');
  });
});
