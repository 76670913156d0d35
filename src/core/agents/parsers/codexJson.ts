// `codex exec --json`: one event per line (codex-rs/exec/src/exec_events.rs) —
//   {"type":"thread.started","thread_id":"…"}   {"type":"turn.started"}
//   {"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"…"}}
//   {"type":"item.completed","item":{"type":"command_execution","aggregated_output":"…",…}}   (not scanned)
//   {"type":"turn.completed","usage":{"input_tokens":…,"cached_input_tokens":…,"cache_write_input_tokens":0,
//     "output_tokens":…,"reasoning_output_tokens":…}}   (input counts the cached part; output the reasoning)
//   {"type":"turn.failed","error":{"message":"You've hit your usage limit. … try again at 3:28 PM."}}
//   {"type":"error","message":"…"}
// Codex reports tokens but no cost. https://developers.openai.com/codex/noninteractive
import { addTokens, isObject, type Json, JsonLinesParser, num, str } from './parser';

export class CodexJsonParser extends JsonLinesParser {
  protected event(e: Json): string {
    switch (e.type) {
      case 'item.completed': {
        const item = e.item;
        if (isObject(item) && item.type === 'agent_message' && typeof item.text === 'string') return item.text + '\n';
        return '';
      }
      case 'turn.completed':
        if (isObject(e.usage)) {
          this.report.tokens = addTokens(this.report.tokens, {
            input: num(e.usage.input_tokens),
            cacheRead: num(e.usage.cached_input_tokens),
            output: num(e.usage.output_tokens),
            reasoning: num(e.usage.reasoning_output_tokens),
          });
        }
        return '';
      case 'turn.failed':
        this.noteError((isObject(e.error) && str(e.error.message)) || 'turn failed');
        return '';
      case 'error':
        this.noteError(str(e.message) ?? 'error');
        return '';
      default:
        return '';
    }
  }
}
