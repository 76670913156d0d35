// `qwen --output-format stream-json` (Qwen Code): Claude Code's event shape, one JSON object per
// line (system init, assistant and user messages, a closing result), read by the Claude parser,
// with two differences seen in its real output (0.24.4) —
//   the result's usage is OpenAI's: input_tokens already holds the cached part
//     {"type":"result",…,"usage":{"input_tokens":3624,"output_tokens":129,"cache_read_input_tokens":603}}
//   a failure's words are in `error.message`, with the HTTP status in them, and no `result`
//     {"type":"result","subtype":"error_during_execution","is_error":true,
//      "error":{"message":"[API Error: 429 Rate limit reached for … Please try again in 20s.]\n…"}}
// https://qwenlm.github.io/qwen-code-docs/en/users/features/headless
import { ClaudeStreamParser } from './claudeStream';
import { isObject, type Json, num, str } from './parser';

export class QwenStreamParser extends ClaudeStreamParser {
  protected override event(e: Json): string {
    const text = super.event(e);
    if (e.type === 'result') this.qwenResult(e);
    return text;
  }

  private qwenResult(e: Json): void {
    if (isObject(e.usage)) {
      const u = e.usage;
      const tokens = { input: num(u.input_tokens), output: num(u.output_tokens), cacheRead: num(u.cache_read_input_tokens) };
      const reported = Object.entries(tokens).filter(([, v]) => v !== undefined);
      if (reported.length) this.report.tokens = Object.fromEntries(reported);
      else delete this.report.tokens;
    }
    const message = e.is_error === true && isObject(e.error) ? str(e.error.message) : undefined;
    if (message) {
      const status = /^\[API Error: (\d{3})\b/.exec(message);
      this.noteError(message, status ? Number(status[1]) : undefined);
    }
  }
}
