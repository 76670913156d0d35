// Reading an agent's transcript as it streams: the verdict (the last RESULT or QUESTION line) and
// the CHECKPOINT lines. Pure and incremental: it sees chunks, not whole lines. With a preset's
// output parser, the lines are the tool's events (JSON) and only the agent's own messages are
// scanned; the parser also collects what the tool reported (cost, tokens, a usage limit).
import type { OutputParser, ParsedOutput } from '../agents/parsers/parser';
import type { AgentReport } from '../agents/report';
import { MAX_QUESTION_CHARS } from '../taskFile/schema';
import type { CheckpointStep } from '../tasks/transitions';
import { reasonLine } from './reasonLine';

export type AgentVerdict = { kind: 'success' } | { kind: 'fail'; reason: string } | { kind: 'question'; text: string } | { kind: 'none' };

const RESULT_RE = /^RESULT:(SUCCESS|FAIL)\b[:\s]*(.*)$/;
/** `QUESTION: which port?`: the agent stops to ask a person (an empty question is no question). */
const QUESTION_RE = /^QUESTION:\s*(\S.*)$/;
const CHECKPOINT_RE = /^CHECKPOINT step=(\d+)\/(\d+) "(.*)"$/;

export function parseCheckpoint(line: string): CheckpointStep | undefined {
  const m = CHECKPOINT_RE.exec(line.trim());
  if (!m) return undefined;
  return { step: Number(m[1]), total: Number(m[2]), description: m[3]! };
}

/** Text in chunks → whole lines (the last one may end without a newline). */
class Lines {
  private partial = '';

  constructor(private readonly onLine: (line: string) => void) {}

  push(text: string): void {
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop()!;
    for (const line of lines) this.onLine(line.replace(/\r$/, ''));
  }

  flush(): void {
    const rest = this.partial;
    this.partial = '';
    if (rest) this.onLine(rest.replace(/\r$/, ''));
  }
}

export class AgentOutputScanner {
  private last: AgentVerdict = { kind: 'none' };
  private parsed: ParsedOutput | undefined;
  /** Lines of the agent's messages (all output without a parser). */
  private readonly text = new Lines((line) => this.scan(line));
  /** Raw output lines, through the parser. */
  private readonly raw: Lines | undefined;

  constructor(
    private readonly onCheckpoint: (c: CheckpointStep) => void = () => undefined,
    private readonly parser?: OutputParser,
  ) {
    if (parser) this.raw = new Lines((line) => this.text.push(parser.line(line)));
  }

  push(text: string): void {
    (this.raw ?? this.text).push(text);
  }

  /** The verdict once the stream has ended. */
  finish(): AgentVerdict {
    if (this.raw && this.parser) {
      this.raw.flush();
      this.parsed = this.parser.finish();
      // The tool gave its final message only at the end: it holds the verdict.
      if (this.parsed.finalText) this.text.push(this.parsed.finalText);
    }
    this.text.flush();
    if (this.last.kind === 'none' && this.parsed) {
      // No verdict, but the tool said why it stopped (a usage limit, an API error).
      const why = this.parsed.error ?? this.parsed.limit?.message;
      if (why) return { kind: 'fail', reason: `${this.parsed.preset}: ${why}` };
    }
    return this.last;
  }

  /** What the tool reported about its run, once finished (undefined without a parser). */
  report(): AgentReport | undefined {
    if (!this.parsed) return undefined;
    const { finalText: _finalText, ...report } = this.parsed;
    return report;
  }

  private scan(raw: string): void {
    const line = raw.trim();
    const result = RESULT_RE.exec(line);
    if (result) {
      this.last = result[1] === 'SUCCESS' ? { kind: 'success' } : { kind: 'fail', reason: result[2]!.trim() || 'agent reported failure' };
      return;
    }
    // The last of the RESULT and QUESTION lines is the verdict.
    const question = QUESTION_RE.exec(line);
    if (question) {
      this.last = { kind: 'question', text: question[1]!.trim().slice(0, MAX_QUESTION_CHARS) };
      return;
    }
    const checkpoint = parseCheckpoint(line);
    if (checkpoint) this.onCheckpoint(checkpoint);
  }
}

/** A whole transcript at once: its verdict, checkpoints and report (for tests and tools). */
export function scanAgentOutput(
  output: string,
  parser?: OutputParser,
): { verdict: AgentVerdict; checkpoints: CheckpointStep[]; report: AgentReport | undefined } {
  const checkpoints: CheckpointStep[] = [];
  const scanner = new AgentOutputScanner((c) => checkpoints.push(c), parser);
  scanner.push(output);
  const verdict = scanner.finish();
  return { verdict, checkpoints, report: scanner.report() };
}

/**
 * Why an agent that gave no verdict failed: how it exited, with the tool's own words when it
 * printed any ("Gemini CLI is not running in a trusted directory. …"). `output` is the end of its
 * output; a preset's JSON events are not words of this kind (its parser reads the errors in
 * them), so only the plain lines count.
 */
export function noVerdictReason(exit: { code: number | null; signal?: string | null }, output: string): string {
  const how = exit.code === 0 ? 'exited 0' : `exited with ${exit.code ?? exit.signal}`;
  const plain = output
    .split('\n')
    .filter((l) => !isJsonObject(l.trim()))
    .join('\n');
  const words = reasonLine(plain);
  return `agent ${how} without a RESULT:SUCCESS or RESULT:FAIL line${words ? `: ${words}` : ''}`;
}

function isJsonObject(line: string): boolean {
  if (!line.startsWith('{')) return false;
  try {
    return typeof JSON.parse(line) === 'object';
  } catch {
    return false;
  }
}

/** One line that says why some output failed, for an error_log entry (see reasonLine.ts). */
export function lastMeaningfulLine(output: string): string | undefined {
  return reasonLine(output);
}
