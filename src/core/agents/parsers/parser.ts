// The shape every output parser has, and the part the JSON-lines ones share. A parser sees the
// agent's output one line at a time and returns the text of the agent's own messages, which is
// where the RESULT and CHECKPOINT lines are looked for: a file the agent read or a command's
// output that happens to contain "RESULT:SUCCESS" is not a verdict.
import { detectLimit } from '../limits';
import type { AgentReport, TokenCounts, UsageLimit } from '../report';

export interface ParserContext {
  /** The clock for "try again in 2 hours" (tests pass a fixed one). */
  now: () => Date;
  /** The zone a wall-clock reset ("try again at 5:55 PM") is read in: an IANA name; the local zone when absent. */
  timeZone?: string;
}

export interface ParsedOutput extends AgentReport {
  /**
   * The final message as the tool reported it at the end, when no message text came while it
   * ran (the scanner reads the verdict from it then).
   */
  finalText?: string;
}

export interface OutputParser {
  /** One line of output (without its newline) → message text to scan, with its own newlines. */
  line(line: string): string;
  /** The output has ended. */
  finish(): ParsedOutput;
}

export type ParserFactory = (ctx: ParserContext) => OutputParser;

export type Json = Record<string, unknown>;

export function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** Sums token counts field by field; a field no event reported stays absent. */
export function addTokens(into: TokenCounts | undefined, add: TokenCounts): TokenCounts {
  const out: TokenCounts = { ...into };
  for (const key of ['input', 'output', 'cacheRead', 'cacheWrite', 'reasoning'] as const) {
    const v = add[key];
    if (v !== undefined) out[key] = (out[key] ?? 0) + v;
  }
  return out;
}

/** Dollar sums of several reported figures, without binary-fraction noise (0.1 + 0.2). */
export function addUsd(a: number | undefined, b: number): number {
  return Number(((a ?? 0) + b).toFixed(10));
}

/**
 * Tools that print one JSON object per line. A line that is not JSON (a warning on stderr, a
 * crash message) is passed on as text and checked for a limit message.
 */
export abstract class JsonLinesParser implements OutputParser {
  protected report: ParsedOutput;
  private sawMessageText = false;

  constructor(
    preset: string,
    protected readonly ctx: ParserContext,
  ) {
    this.report = { preset };
  }

  line(line: string): string {
    const trimmed = line.trim();
    if (!trimmed) return '';
    let event: unknown;
    if (trimmed.startsWith('{')) {
      try {
        event = JSON.parse(trimmed);
      } catch {
        event = undefined;
      }
    }
    if (!isObject(event)) {
      this.noteLimit(trimmed);
      return line + '\n';
    }
    const text = this.event(event);
    if (text) this.sawMessageText = true;
    return text;
  }

  finish(): ParsedOutput {
    const out = { ...this.report };
    if (this.sawMessageText) delete out.finalText;
    return out;
  }

  /** One parsed event → the message text it carries ('' for none). */
  protected abstract event(e: Json): string;

  /** Records a limit if `text` (an error the tool reported) speaks of one. */
  protected noteLimit(text: string, status?: number): UsageLimit | undefined {
    const limit = detectLimit(text, this.ctx.now(), status, this.ctx.timeZone);
    if (!limit) return undefined;
    // The first signal of a limit with a reset time sets it: a tool that gives a timestamp gives
    // it first (Claude's rate_limit_event), then words for people ("resets 3pm"), read less exactly.
    const earlier = this.report.limit;
    if (earlier?.resetsAt && earlier.kind === limit.kind) limit.resetsAt = earlier.resetsAt;
    this.report.limit = limit;
    return limit;
  }

  /** The run's error as the tool reported it; a limit in it is recorded too. */
  protected noteError(text: string, status?: number): void {
    const message = text.trim();
    if (!message) return;
    this.report.error = message.split('\n')[0]!.slice(0, 500) + (status ? ` (HTTP ${status})` : '');
    this.noteLimit(message, status);
  }
}

/** Text blocks of a message's `content` array (Claude's and Cursor's shape). */
export function textBlocks(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.filter((b): b is Json => isObject(b) && b.type === 'text' && typeof b.text === 'string').map((b) => b.text as string);
}
