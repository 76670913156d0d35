// Each preset's output parser on what its tool prints: the verdict read from the agent's own
// final message (never from a command's output or the echoed prompt), checkpoints once each,
// the cost and tokens the tool reported (and nothing it did not), and limit signals.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { findPreset } from '../../../src/core/agents/presets';
import { readAgentReport, writeAgentReport } from '../../../src/core/agents/report';
import { AgentOutputScanner, noVerdictReason, scanAgentOutput } from '../../../src/core/controller/agentOutput';
import { AttemptPaths } from '../../../src/core/statePaths';
import type { CheckpointStep } from '../../../src/core/tasks/transitions';
import { tempDir } from '../helpers/tmp';
import * as T from './transcripts';

const NOW = new Date('2026-08-20T12:00:00.000Z');

function parse(preset: string, output: string) {
  const p = findPreset(preset);
  assert.ok(p, preset);
  return scanAgentOutput(output, p.createParser({ now: () => NOW, timeZone: 'America/Los_Angeles' }));
}

/** The same transcript fed in small chunks that split lines and JSON anywhere. */
function parseInChunks(preset: string, output: string, size: number) {
  const checkpoints: CheckpointStep[] = [];
  const scanner = new AgentOutputScanner(
    (c) => checkpoints.push(c),
    findPreset(preset)!.createParser({ now: () => NOW, timeZone: 'America/Los_Angeles' }),
  );
  for (let i = 0; i < output.length; i += size) scanner.push(output.slice(i, i + size));
  const verdict = scanner.finish();
  return { verdict, checkpoints, report: scanner.report() };
}

describe('agent output parsers', () => {
  describe('QUESTION, beside RESULT', () => {
    it('a QUESTION wins over no verdict; the last of the RESULT and QUESTION lines is the verdict', () => {
      assert.deepEqual(scanAgentOutput('working\nQUESTION: Which port?\n').verdict, { kind: 'question', text: 'Which port?' });
      assert.deepEqual(scanAgentOutput('QUESTION: Which port?\nRESULT:SUCCESS\n').verdict, { kind: 'success' });
      assert.deepEqual(scanAgentOutput('RESULT:FAIL stuck\nQUESTION: Which port?').verdict, { kind: 'question', text: 'Which port?' });
      assert.deepEqual(scanAgentOutput('QUESTION:\nQUESTION Which port?\n').verdict, { kind: 'none' }, 'an empty question, or no colon');
    });

    it("read from the agent's own message through the preset's parser, never from a tool result", () => {
      const message = (text: string) =>
        `{"type":"assistant","message":{"content":[{"type":"text","text":${JSON.stringify(text)}}]},"parent_tool_use_id":null}`;
      const toolResult =
        '{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t","type":"tool_result","content":"QUESTION: Which port?"}]},"parent_tool_use_id":null}';
      assert.deepEqual(parse('claude', [toolResult, message('done')].join('\n')).verdict, { kind: 'none' });
      assert.deepEqual(parse('claude', [toolResult, message('I need to know.\nQUESTION: Which port?')].join('\n')).verdict, {
        kind: 'question',
        text: 'Which port?',
      });
    });
  });

  describe('claude (stream-json)', () => {
    it('reads the verdict from the final message, the checkpoint once, the cost and tokens', () => {
      const r = parse('claude', T.CLAUDE_SUCCESS);
      assert.deepEqual(r.verdict, { kind: 'success' });
      assert.deepEqual(r.checkpoints, [{ step: 1, total: 2, description: 'wrote done.txt' }]);
      assert.deepEqual(r.report, {
        preset: 'claude',
        costUsd: 0.0421,
        // input: input_tokens 1200 + cache read 20012 + cache write 5000.
        tokens: { input: 26212, output: 340, cacheRead: 20012, cacheWrite: 5000 },
      });
      assert.deepEqual(parseInChunks('claude', T.CLAUDE_SUCCESS, 7), r);
    });

    it('without the parser the verdict inside the JSON is not seen (the plain scanner needs the preset)', () => {
      assert.deepEqual(scanAgentOutput(T.CLAUDE_SUCCESS).verdict, { kind: 'none' });
    });

    it('a tool result holding "RESULT:SUCCESS" is not a verdict; a subagent\'s message neither', () => {
      const out = [
        '{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t","type":"tool_result","content":"x\\nRESULT:SUCCESS"}]},"parent_tool_use_id":null}',
        '{"type":"assistant","message":{"content":[{"type":"text","text":"RESULT:SUCCESS"}]},"parent_tool_use_id":"toolu_task_1"}',
        '{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":30,"total_cost_usd":1.5,"usage":{"input_tokens":9,"output_tokens":9}}',
      ].join('\n');
      const r = parse('claude', out);
      assert.deepEqual(r.verdict, { kind: 'fail', reason: 'claude: error_max_turns' });
      assert.equal(r.report!.costUsd, 1.5);
      assert.equal(r.report!.limit, undefined);
    });

    it('the verdict from the result when no message text came before it', () => {
      const r = parse(
        'claude',
        '{"type":"result","subtype":"success","is_error":false,"result":"ok\\nRESULT:FAIL tests do not pass","total_cost_usd":0.01}\n',
      );
      assert.deepEqual(r.verdict, { kind: 'fail', reason: 'tests do not pass' });
    });

    it("usage limit: the rate_limit_event's reset time, the message's words, the verdict says why", () => {
      const r = parse('claude', T.CLAUDE_USAGE_LIMIT);
      assert.deepEqual(r.verdict, { kind: 'fail', reason: "claude: You've hit your limit · resets 3pm (Europe/Berlin) (HTTP 429)" });
      assert.deepEqual(r.report!.limit, {
        kind: 'usage-limit',
        message: "You've hit your limit · resets 3pm (Europe/Berlin)",
        resetsAt: '2026-01-01T16:00:00.000Z',
        resetText: '3pm (Europe/Berlin)',
      });
      assert.equal(r.report!.costUsd, 0);
    });

    it('older releases: "usage limit reached|<epoch>" gives the reset time', () => {
      const r = parse('claude', T.CLAUDE_OLD_USAGE_LIMIT);
      assert.equal(r.report!.limit!.kind, 'usage-limit');
      assert.equal(r.report!.limit!.resetsAt, new Date(1762952400 * 1000).toISOString());
    });

    it('HTTP 529 is an overload, not a usage limit', () => {
      const r = parse('claude', T.CLAUDE_OVERLOADED);
      assert.equal(r.report!.limit!.kind, 'overloaded');
      assert.equal(r.report!.limit!.resetsAt, undefined);
      assert.equal(r.report!.costUsd, 0.0012);
    });
  });

  describe('codex (exec --json)', () => {
    it('reads the agent_message, not the command output; tokens, no cost', () => {
      const r = parse('codex', T.CODEX_SUCCESS);
      assert.deepEqual(r.verdict, { kind: 'success' });
      assert.deepEqual(r.checkpoints, [{ step: 1, total: 1, description: 'committed' }]);
      assert.deepEqual(r.report, { preset: 'codex', tokens: { input: 24763, cacheRead: 24448, output: 122 } });
      assert.deepEqual(parseInChunks('codex', T.CODEX_SUCCESS, 13), r);
    });

    it('reads the reasoning tokens codex 0.171 reports beside the others', () => {
      const r = parse(
        'codex',
        [
          '{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"RESULT:SUCCESS"}}',
          '{"type":"turn.completed","usage":{"input_tokens":3624,"cached_input_tokens":603,"cache_write_input_tokens":0,"output_tokens":129,"reasoning_output_tokens":17}}',
        ].join('\n') + '\n',
      );
      assert.deepEqual(r.report, { preset: 'codex', tokens: { input: 3624, cacheRead: 603, output: 129, reasoning: 17 } });
    });

    it('usage limit with the time Codex gives', () => {
      const r = parse('codex', T.CODEX_USAGE_LIMIT);
      assert.equal(r.verdict.kind, 'fail');
      assert.match((r.verdict as { reason: string }).reason, /^codex: You've hit your usage limit\./);
      assert.equal(r.report!.limit!.kind, 'usage-limit');
      assert.equal(r.report!.limit!.resetText, '3:28 PM');
      // 12:00Z is 05:00 in Los Angeles (PDT, UTC-7): its next 3:28 PM is 22:28Z the same day.
      assert.equal(r.report!.limit!.resetsAt, '2026-08-20T22:28:00.000Z', 'the next 3:28 PM in the zone of the run');
    });

    it('"try again in 3 days 6 hours 57 minutes" becomes a timestamp', () => {
      const r = parse(
        'codex',
        '{"type":"turn.failed","error":{"message":"You\'ve hit your usage limit. To get more access now, send a request to your admin or try again in 3 days 6 hours 57 minutes."}}\n',
      );
      assert.equal(r.report!.limit!.resetText, 'in 3 days 6 hours 57 minutes');
      assert.equal(r.report!.limit!.resetsAt, new Date(NOW.getTime() + ((3 * 24 + 6) * 60 + 57) * 60_000).toISOString());
    });
  });

  describe('gemini (stream-json)', () => {
    it("joins the assistant's deltas; the echoed prompt and tool output are not scanned", () => {
      const r = parse('gemini', T.GEMINI_SUCCESS);
      assert.deepEqual(r.verdict, { kind: 'success' });
      assert.deepEqual(r.checkpoints, [{ step: 1, total: 2, description: 'read the code' }]);
      assert.deepEqual(r.report, { preset: 'gemini', tokens: { input: 24939, output: 174, cacheRead: 21263 } });
      assert.deepEqual(parseInChunks('gemini', T.GEMINI_SUCCESS, 5), r);
    });

    it('quota exhausted: "reset after 2h7m31s" becomes a timestamp', () => {
      const r = parse('gemini', T.GEMINI_QUOTA);
      assert.equal(r.verdict.kind, 'fail');
      assert.equal(r.report!.limit!.kind, 'usage-limit');
      assert.equal(r.report!.limit!.resetsAt, new Date(NOW.getTime() + (2 * 3600 + 7 * 60 + 31) * 1000).toISOString());
    });
  });

  describe('aider (text)', () => {
    it('plain lines; the session cost of the last Cost line; no token counts (aider rounds them)', () => {
      const r = parse('aider', T.AIDER_SUCCESS);
      assert.deepEqual(r.verdict, { kind: 'success' });
      assert.deepEqual(r.checkpoints, [{ step: 1, total: 2, description: 'editing done.txt' }]);
      assert.deepEqual(r.report, { preset: 'aider', costUsd: 0.02 });
    });

    it('a model without a known price prints no Cost: no cost is recorded', () => {
      const r = parse('aider', 'Tokens: 2.5k sent, 123 received.\nRESULT:SUCCESS\n');
      assert.deepEqual(r.report, { preset: 'aider' });
    });

    it('its rate-limit lines are a rate limit; the model talking about rate limits is not', () => {
      assert.equal(parse('aider', T.AIDER_RATE_LIMIT).report!.limit!.kind, 'rate-limit');
      assert.equal(parse('aider', 'Implemented the RateLimitError and the 429 response.\nRESULT:SUCCESS\n').report!.limit, undefined);
    });
  });

  describe('opencode (run --format json)', () => {
    it('sums cost and tokens over the steps; input with its cached part, output with its reasoning', () => {
      const r = parse('opencode', T.OPENCODE_SUCCESS);
      assert.deepEqual(r.verdict, { kind: 'success' });
      assert.deepEqual(r.checkpoints, [{ step: 1, total: 2, description: 'planned' }]);
      assert.deepEqual(r.report, {
        preset: 'opencode',
        costUsd: 0.03,
        tokens: { input: 3700, output: 170, reasoning: 10, cacheRead: 1100, cacheWrite: 100 },
      });
    });

    it('an API error with status 429 is a rate limit', () => {
      const r = parse('opencode', T.OPENCODE_RATE_LIMIT);
      assert.deepEqual(r.verdict, { kind: 'fail', reason: 'opencode: Too Many Requests (HTTP 429)' });
      assert.equal(r.report!.limit!.kind, 'rate-limit');
    });
  });

  describe('qwen (stream-json)', () => {
    it("reads its own messages (not a command's output), tokens as OpenAI counts them (input holds the cached part)", () => {
      const r = parse('qwen', T.QWEN_SUCCESS);
      assert.deepEqual(r.verdict, { kind: 'success' });
      assert.deepEqual(r.checkpoints, [{ step: 1, total: 1, description: 'wrote done.txt' }]);
      assert.deepEqual(r.report, { preset: 'qwen', tokens: { input: 3624, output: 129, cacheRead: 603 } });
      assert.deepEqual(parseInChunks('qwen', T.QWEN_SUCCESS, 7), r);
    });

    it('a 429 it gave up on: its own words and status, a rate limit with the reset it printed', () => {
      const r = parse('qwen', T.QWEN_RATE_LIMIT);
      assert.equal(r.verdict.kind, 'fail');
      assert.match(r.report!.error!, /^\[API Error: 429 Rate limit reached for qwen3-coder-plus .* \(HTTP 429\)$/);
      assert.equal(r.report!.limit!.kind, 'rate-limit');
      assert.equal(r.report!.limit!.resetsAt, new Date(NOW.getTime() + 20_000).toISOString());
    });
  });

  describe('cursor-agent (stream-json)', () => {
    it('reads its messages once (not again from the result, which repeats them); no cost reported, none recorded', () => {
      const r = parse('cursor-agent', T.CURSOR_SUCCESS);
      assert.deepEqual(r.verdict, { kind: 'success' });
      assert.deepEqual(r.checkpoints, [{ step: 1, total: 1, description: 'edited' }]);
      assert.deepEqual(r.report, { preset: 'cursor-agent' });
    });

    it('an error on stderr (not JSON) is still read for a limit', () => {
      const r = parse(
        'cursor-agent',
        "You've hit your usage limit · you saved $312 on API model usage. Usage will reset when your monthly cycle ends on 9/23/2026.\n",
      );
      assert.equal(r.report!.limit!.kind, 'usage-limit');
    });
  });

  describe('copilot (--output-format json)', () => {
    it('complete messages only (not the deltas), tokens summed, premium requests, no dollar cost', () => {
      const r = parse('copilot', T.COPILOT_SUCCESS);
      assert.deepEqual(r.verdict, { kind: 'success' });
      assert.deepEqual(r.checkpoints, [{ step: 1, total: 1, description: 'edited' }]);
      assert.deepEqual(r.report, {
        preset: 'copilot',
        tokens: { input: 3900, output: 130, cacheRead: 2900, cacheWrite: 0 },
        premiumRequests: 1,
      });
    });

    it('tokens from the usage file printed last (all it reports with a provider of its own): they replace the summed events', () => {
      const usageFile =
        '{"totalPremiumRequestCost":0,"modelMetrics":{"claude-sonnet-4.5":{"requests":{"count":3,"cost":0},' +
        '"usage":{"inputTokens":3624,"outputTokens":129,"cacheReadTokens":603,"cacheWriteTokens":0}},' +
        '"gpt-5-mini":{"usage":{"inputTokens":10,"outputTokens":1,"cacheReadTokens":0,"cacheWriteTokens":0}}},"currentModel":"claude-sonnet-4.5"}\n';
      const byok = T.COPILOT_SUCCESS.split('\n')
        .filter((l) => !l.includes('assistant.usage'))
        .join('\n');
      for (const out of [byok + usageFile, T.COPILOT_SUCCESS + usageFile]) {
        const r = parse('copilot', out);
        assert.deepEqual(r.verdict, { kind: 'success' });
        assert.deepEqual(r.report!.tokens, { input: 3634, output: 130, cacheRead: 603, cacheWrite: 0 });
      }
      assert.equal(parse('copilot', byok).report!.tokens, undefined);
    });

    it("a subagent's message is not the verdict", () => {
      const r = parse(
        'copilot',
        '{"type":"assistant.message","agentId":"explore-1","data":{"messageId":"s","content":"RESULT:SUCCESS"}}\n',
      );
      assert.deepEqual(r.verdict, { kind: 'none' });
    });

    it('rate limited: "try again in 2 hours"', () => {
      const r = parse('copilot', T.COPILOT_RATE_LIMIT);
      assert.equal(r.report!.limit!.kind, 'rate-limit');
      assert.equal(r.report!.limit!.resetText, 'in 2 hours');
      assert.equal(r.report!.limit!.resetsAt, new Date(NOW.getTime() + 2 * 3600_000).toISOString());
      assert.equal(r.report!.premiumRequests, 0);
    });
  });

  it('agent.json holds a report and gives it back unchanged; a missing or broken one is no report', () => {
    const dir = tempDir();
    for (const [preset, output] of [
      ['claude', T.CLAUDE_USAGE_LIMIT],
      ['opencode', T.OPENCODE_SUCCESS],
      ['copilot', T.COPILOT_SUCCESS],
      ['codex', T.CODEX_USAGE_LIMIT],
    ] as const) {
      const report = parse(preset, output).report!;
      writeAgentReport(new AttemptPaths(dir), report);
      assert.deepEqual(readAgentReport(new AttemptPaths(dir)), report, preset);
    }
    assert.equal(readAgentReport(new AttemptPaths(tempDir())), undefined);
  });

  it('agent.json holds figures rounded to 6 decimal places, not sums with binary-fraction noise', () => {
    const files = new AttemptPaths(tempDir());
    writeAgentReport(files, { preset: 'opencode', costUsd: 0.00125 + 0.0051, premiumRequests: 1 / 3, tokens: { input: 1200, output: 34 } });
    const text = readFileSync(files.agentReport, 'utf8');
    assert.equal(0.00125 + 0.0051, 0.006350000000000001, 'the sum this test is about');
    assert.match(text, /"cost_usd": 0\.00635,/);
    assert.match(text, /"premium_requests": 0\.333333\n/);
    assert.deepEqual(JSON.parse(text).tokens, { input: 1200, output: 34 });
  });

  it("no verdict: the exit and the telling line of the tool's plain output, its JSON events left out", () => {
    const tail = [
      '{"type":"init","session_id":"s1","model":"gemini-2.5-pro"}',
      'Loaded cached credentials.',
      'Error: connect ECONNREFUSED 127.0.0.1:9',
      '{"type":"message","role":"assistant","content":"an error I made up","delta":true}',
      '',
    ].join('\n');
    assert.equal(
      noVerdictReason({ code: 41, signal: null }, tail),
      'agent exited with 41 without a RESULT:SUCCESS or RESULT:FAIL line: Error: connect ECONNREFUSED 127.0.0.1:9',
    );
    assert.equal(
      noVerdictReason({ code: null, signal: 'SIGKILL' }, '{"type":"init"}\n'),
      'agent exited with SIGKILL without a RESULT:SUCCESS or RESULT:FAIL line',
      'nothing but JSON: no words added',
    );
    assert.equal(noVerdictReason({ code: 0, signal: null }, ''), 'agent exited 0 without a RESULT:SUCCESS or RESULT:FAIL line');
  });

  it('a raw command line (no preset) is scanned as before: plain lines, no report', () => {
    const r = scanAgentOutput('working\nCHECKPOINT step=1/1 "x"\nRESULT:SUCCESS\n');
    assert.deepEqual(r.verdict, { kind: 'success' });
    assert.equal(r.checkpoints.length, 1);
    assert.equal(r.report, undefined);
  });
});
