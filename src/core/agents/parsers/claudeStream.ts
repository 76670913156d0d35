// `--output-format stream-json` of Claude Code (`claude -p … --verbose`) and of Cursor's agent
// (`cursor-agent -p`), which share the shape: one JSON object per line —
//   {"type":"system","subtype":"init",…}
//   {"type":"assistant","message":{"content":[{"type":"text","text":"…"},{"type":"tool_use",…}]},"parent_tool_use_id":null,…}
//   {"type":"user","message":{"content":[{"type":"tool_result",…}]}}         (tool output: not scanned)
//   {"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1760000000,"rateLimitType":"five_hour"}}
//   {"type":"result","subtype":"success","is_error":false,"result":"…","total_cost_usd":0.04,
//    "usage":{"input_tokens":…,"output_tokens":…,"cache_read_input_tokens":…,"cache_creation_input_tokens":…},
//    "api_error_status":null,…}
// Claude Code: https://code.claude.com/docs/en/headless; the field names are those of its Agent
// SDK's message parser (anthropics/claude-agent-sdk-python). Cursor:
// https://cursor.com/docs/cli/reference/output-format (no cost or token fields there).
import { isoFromEpochSeconds } from '../limits';
import { isObject, type Json, JsonLinesParser, num, str, textBlocks } from './parser';

export class ClaudeStreamParser extends JsonLinesParser {
  protected event(e: Json): string {
    switch (e.type) {
      case 'assistant':
        return this.assistant(e);
      case 'rate_limit_event':
        this.rateLimitEvent(e.rate_limit_info);
        return '';
      case 'result':
        this.result(e);
        return '';
      default:
        return '';
    }
  }

  private assistant(e: Json): string {
    // A subagent's messages carry the id of the tool call that started it: not the verdict.
    if (e.parent_tool_use_id) return '';
    const texts = isObject(e.message) ? textBlocks(e.message.content) : [];
    // An API failure comes as an assistant message with `error` set ("rate_limit", …).
    if (typeof e.error === 'string') this.noteLimit(`${e.error}: ${texts.join(' ')}`);
    return texts.length ? texts.join('\n') + '\n' : '';
  }

  private rateLimitEvent(info: unknown): void {
    if (!isObject(info) || info.status !== 'rejected') return;
    const window = str(info.rateLimitType)?.replace(/_/g, '-');
    const resetsAt = isoFromEpochSeconds(info.resetsAt);
    this.report.limit = {
      kind: 'usage-limit',
      message: `${window ? `${window} ` : ''}usage limit reached`,
      ...(resetsAt ? { resetsAt } : {}),
    };
  }

  private result(e: Json): void {
    const cost = num(e.total_cost_usd);
    if (cost !== undefined) this.report.costUsd = cost;
    if (isObject(e.usage)) {
      const u = e.usage;
      const cacheRead = num(u.cache_read_input_tokens);
      const cacheWrite = num(u.cache_creation_input_tokens);
      // input_tokens counts only the uncached part; Launchpad's input is every prompt token.
      const uncached = num(u.input_tokens);
      const tokens = {
        input: uncached === undefined ? undefined : uncached + (cacheRead ?? 0) + (cacheWrite ?? 0),
        output: num(u.output_tokens),
        cacheRead,
        cacheWrite,
      };
      if (Object.values(tokens).some((v) => v !== undefined)) {
        this.report.tokens = Object.fromEntries(Object.entries(tokens).filter(([, v]) => v !== undefined));
      }
    }
    const result = str(e.result);
    if (result) this.report.finalText = result.endsWith('\n') ? result : result + '\n';
    if (e.is_error === true) {
      const errors = Array.isArray(e.errors) ? e.errors.filter((x): x is string => typeof x === 'string') : [];
      const status = num(e.api_error_status);
      const message = result || errors.join('; ') || str(e.subtype) || 'error';
      this.noteError(message, status);
    }
  }
}
