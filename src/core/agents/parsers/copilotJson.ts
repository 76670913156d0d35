// `copilot -p … --output-format json`: one session event per line. The stream is not documented
// field by field; these are the CLI's session events as its SDK names them —
//   {"type":"user.message","data":{"content":"<the prompt>"}}                  (not scanned)
//   {"type":"assistant.message_delta","data":{"messageId":"…","deltaContent":"…"}}  (the complete message follows)
//   {"type":"assistant.message","data":{"messageId":"…","content":"…"}}          (with "agentId" from a subagent)
//   {"type":"assistant.usage","data":{"model":"…","inputTokens":…,"outputTokens":…,"cacheReadTokens":…,"cacheWriteTokens":…}}
//   {"type":"tool.execution_complete","data":{…}}                               (not scanned)
//   {"type":"session.error","data":{"errorType":"…","message":"Sorry, you've hit a rate limit … Please try again in 2 hours."}}
//   {"type":"result","exitCode":0,"usage":{"premiumRequests":1,…}}
// and, last, the file of --usage-output-file that the preset prints on one line (no "type"):
//   {"totalPremiumRequestCost":0,"modelMetrics":{"<model>":{"usage":{"inputTokens":…,"outputTokens":…,
//    "cacheReadTokens":…,"cacheWriteTokens":…}}},…}
// Its inputTokens include the cached part. It is the session's total, so it replaces what
// assistant.usage events added up.
// Copilot bills premium requests, not dollars: no cost is recorded.
// https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-programmatic-reference
import { addTokens, isObject, type Json, JsonLinesParser, num, str } from './parser';

export class CopilotJsonParser extends JsonLinesParser {
  protected event(e: Json): string {
    const data = isObject(e.data) ? e.data : {};
    switch (e.type) {
      case 'assistant.message':
        if (e.agentId || data.parentToolCallId) return '';
        return typeof data.content === 'string' && data.content ? data.content + '\n' : '';
      case 'assistant.usage':
        this.report.tokens = addTokens(this.report.tokens, {
          input: num(data.inputTokens),
          output: num(data.outputTokens),
          cacheRead: num(data.cacheReadTokens),
          cacheWrite: num(data.cacheWriteTokens),
        });
        return '';
      case 'session.error':
        this.noteError(str(data.message) ?? str(data.errorType) ?? 'error', num(data.statusCode));
        return '';
      case 'result': {
        const usage = isObject(e.usage) ? e.usage : {};
        const premium = num(usage.premiumRequests);
        if (premium !== undefined) this.report.premiumRequests = premium;
        return '';
      }
      default:
        if (e.type === undefined && isObject(e.modelMetrics)) this.usageFile(e.modelMetrics);
        return '';
    }
  }

  private usageFile(models: Json): void {
    let tokens: ReturnType<typeof addTokens> | undefined;
    for (const m of Object.values(models)) {
      const u = isObject(m) && isObject(m.usage) ? m.usage : undefined;
      if (!u) continue;
      tokens = addTokens(tokens, {
        input: num(u.inputTokens),
        output: num(u.outputTokens),
        cacheRead: num(u.cacheReadTokens),
        cacheWrite: num(u.cacheWriteTokens),
      });
    }
    if (tokens) this.report.tokens = tokens;
  }
}
