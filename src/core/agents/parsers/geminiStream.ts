// `gemini --output-format stream-json`: one event per line (packages/core/src/output/types.ts) —
//   {"type":"init","session_id":"…","model":"…"}
//   {"type":"message","role":"user","content":"<the prompt>"}                 (not scanned)
//   {"type":"message","role":"assistant","content":"chunk","delta":true}      (text arrives in pieces)
//   {"type":"tool_use",…} {"type":"tool_result","output":"…"}                 (not scanned)
//   {"type":"error","severity":"warning","message":"…"}
//   {"type":"result","status":"success"|"error","error":{"type":"…","message":"…"},
//    "stats":{"total_tokens":…,"input_tokens":…,"output_tokens":…,"cached":…}}
// Gemini CLI reports tokens but no cost. Its stats sum every model call of the run, its own side
// calls (routing, next-speaker and loop checks) included: input_tokens is the prompt tokens
// (promptTokenCount, the cached part included), cached the cached part, output_tokens the
// candidates' tokens only (stream-json leaves thoughtsTokenCount out, so thinking is not counted).
// A quota error's reset is in its words: "Please retry in 5.5s." / "Suggested retry after 60s.".
// https://geminicli.com/docs/cli/headless/
import { isObject, type Json, JsonLinesParser, num, str } from './parser';

export class GeminiStreamParser extends JsonLinesParser {
  /** The assistant's text so far did not end a line: the next event ends it. */
  private openLine = false;

  protected event(e: Json): string {
    if (e.type === 'message') {
      if (e.role !== 'assistant' || typeof e.content !== 'string') return '';
      const text = e.delta === true ? e.content : e.content + '\n';
      if (text) this.openLine = !text.endsWith('\n');
      return text;
    }
    // Anything else ends the assistant's current message.
    const close = this.openLine ? '\n' : '';
    this.openLine = false;
    if (e.type === 'result') this.result(e);
    else if (e.type === 'error' && typeof e.message === 'string') {
      if (e.severity === 'error') this.noteError(e.message);
      else this.noteLimit(e.message);
    }
    return close;
  }

  private result(e: Json): void {
    if (isObject(e.stats)) {
      const s = e.stats;
      const tokens = { input: num(s.input_tokens), output: num(s.output_tokens), cacheRead: num(s.cached) };
      if (Object.values(tokens).some((v) => v !== undefined)) {
        this.report.tokens = Object.fromEntries(Object.entries(tokens).filter(([, v]) => v !== undefined));
      }
    }
    if (e.status === 'error') {
      const err = isObject(e.error) ? e.error : {};
      this.noteError(str(err.message) ?? str(err.type) ?? 'error');
    }
  }
}
