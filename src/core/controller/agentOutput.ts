// Reading an agent's transcript as it streams: the verdict (the last RESULT line) and the
// CHECKPOINT lines (SPEC §4). Pure and incremental: it sees chunks, not whole lines.
import type { CheckpointStep } from '../tasks/transitions';

export type AgentVerdict = { kind: 'success' } | { kind: 'fail'; reason: string } | { kind: 'none' };

const RESULT_RE = /^RESULT:(SUCCESS|FAIL)\b[:\s]*(.*)$/;
const CHECKPOINT_RE = /^CHECKPOINT step=(\d+)\/(\d+) "(.*)"$/;

export function parseCheckpoint(line: string): CheckpointStep | undefined {
  const m = CHECKPOINT_RE.exec(line.trim());
  if (!m) return undefined;
  return { step: Number(m[1]), total: Number(m[2]), description: m[3]! };
}

export class AgentOutputScanner {
  private partial = '';
  private last: AgentVerdict = { kind: 'none' };

  constructor(private readonly onCheckpoint: (c: CheckpointStep) => void = () => undefined) {}

  push(text: string): void {
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop()!;
    for (const line of lines) this.line(line);
  }

  /** The verdict once the stream has ended. */
  finish(): AgentVerdict {
    if (this.partial) this.line(this.partial);
    this.partial = '';
    return this.last;
  }

  private line(raw: string): void {
    const line = raw.replace(/\r$/, '').trim();
    const result = RESULT_RE.exec(line);
    if (result) {
      this.last = result[1] === 'SUCCESS' ? { kind: 'success' } : { kind: 'fail', reason: result[2]!.trim() || 'agent reported failure' };
      return;
    }
    const checkpoint = parseCheckpoint(line);
    if (checkpoint) this.onCheckpoint(checkpoint);
  }
}

const ERROR_LINE = /\b[A-Z]?\w*(Error|Exception)\b[^:]*:\s*\S/;
const TELLING = /\b(error|errors|fail|failed|failure|failing|assert\w*|expected|exception|not found|cannot|denied|missing)\b/i;
const NOISE = /^(at\s|Node\.js v\d|\^+$|[{}[\]],?$)/;

/**
 * One line that says why some output failed, for an error_log entry: the last `SomeError: …`
 * line, else the last line that names a failure (stack frames and runtime footers skipped),
 * else the last non-empty line.
 */
export function lastMeaningfulLine(output: string): string | undefined {
  const lines = output
    .split('\n')
    .map((l) => l.replace(/\r$/, '').trim())
    .filter((l) => l && !NOISE.test(l));
  const line = lines.findLast((l) => ERROR_LINE.test(l)) ?? lines.findLast((l) => TELLING.test(l)) ?? lines.at(-1);
  return line?.slice(0, 300);
}
