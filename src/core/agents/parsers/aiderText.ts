// Aider prints plain text (with --no-pretty): the model's reply, its edits and commits, then
//   Tokens: 12k sent, 1.2k received. Cost: $0.05 message, $0.12 session.
// (the cost part only when the model's price is known; with prompt caching the Cost part is on
// a line of its own). The session figure is the run's cost so far. On a rate limit it prints
//   litellm.RateLimitError: …
//   The API provider has rate limited you. Try again later or check your quotas.
// and retries for about a minute. Token counts are printed rounded ("1.2k"): not recorded.
// https://aider.chat/docs/scripting.html
import { detectLimit } from '../limits';
import type { OutputParser, ParsedOutput, ParserContext } from './parser';

const COST = /Cost: \$(\d+(?:\.\d+)?) message, \$(\d+(?:\.\d+)?) session\./;
/** Aider's own error lines; the model's reply may talk about rate limits too, so nothing looser. */
const LIMIT_LINE =
  /^(?:litellm\.\w*(?:RateLimit|ServiceUnavailable|InternalServer)\w*Error:|The API provider has rate limited you|The API provider's servers are down or overloaded)/;

export class AiderTextParser implements OutputParser {
  private report: ParsedOutput;

  constructor(
    preset: string,
    private readonly ctx: ParserContext,
  ) {
    this.report = { preset };
  }

  line(line: string): string {
    const cost = COST.exec(line);
    if (cost) this.report.costUsd = Number(cost[2]);
    const trimmed = line.trim();
    if (LIMIT_LINE.test(trimmed)) {
      const limit = detectLimit(trimmed, this.ctx.now(), undefined, this.ctx.timeZone);
      if (limit) this.report.limit = limit;
    }
    return line + '\n';
  }

  finish(): ParsedOutput {
    return { ...this.report };
  }
}
