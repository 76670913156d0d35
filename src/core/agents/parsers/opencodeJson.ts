// `opencode run --format json`: one event per line (packages/opencode/src/cli/cmd/run.ts) —
//   {"type":"step_start","sessionID":"…","part":{…}}
//   {"type":"text","part":{"type":"text","text":"…","time":{"start":…,"end":…}}}
//   {"type":"tool_use","part":{"type":"tool","state":{"status":"completed","output":"…"}}}   (not scanned)
//   {"type":"step_finish","part":{"type":"step-finish","cost":0.0123,
//    "tokens":{"input":…,"output":…,"reasoning":…,"cache":{"read":…,"write":…}}}}
//   {"type":"error","error":{"name":"APIError","data":{"message":"…","statusCode":429}}}
// Cost and tokens are per step; the run's are their sums. A step's `input` leaves out the cached
// part and its `output` the reasoning (opencode 1.18 subtracts them from the provider's figures),
// so both are added back: input is every prompt token, output every generated one.
// https://opencode.ai/docs/cli/#run
import { addTokens, addUsd, isObject, type Json, JsonLinesParser, num, str } from './parser';

export class OpencodeJsonParser extends JsonLinesParser {
  protected event(e: Json): string {
    const part = isObject(e.part) ? e.part : undefined;
    switch (e.type) {
      case 'text':
        return part && typeof part.text === 'string' ? part.text + '\n' : '';
      case 'step_finish': {
        if (!part) return '';
        const cost = num(part.cost);
        if (cost !== undefined) this.report.costUsd = addUsd(this.report.costUsd, cost);
        if (isObject(part.tokens)) {
          const t = part.tokens;
          const cache = isObject(t.cache) ? t.cache : {};
          const [input, output, reasoning] = [num(t.input), num(t.output), num(t.reasoning)];
          const [cacheRead, cacheWrite] = [num(cache.read), num(cache.write)];
          this.report.tokens = addTokens(this.report.tokens, {
            input: input === undefined ? undefined : input + (cacheRead ?? 0) + (cacheWrite ?? 0),
            output: output === undefined ? undefined : output + (reasoning ?? 0),
            reasoning,
            cacheRead,
            cacheWrite,
          });
        }
        return '';
      }
      case 'error': {
        const err = isObject(e.error) ? e.error : {};
        const data = isObject(err.data) ? err.data : {};
        this.noteError(str(data.message) ?? str(err.name) ?? 'error', num(data.statusCode));
        return '';
      }
      default:
        return '';
    }
  }
}
