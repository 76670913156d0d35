// A progress log line for a terminal: the line as written, its parts coloured by what they say
// (a merge green, an error red, a retry's dispatch labelled with its attempt). Without colour
// the line is the file's line, plus the label.
import { type LogEntry, type LogType, parseLogLine } from '../../core/log/logLine';
import type { Colours, Paint } from './colour';

function typePaint(type: LogType, c: Colours): Paint {
  switch (type) {
    case 'Completed':
    case 'MERGE':
      return c.green;
    case 'ERROR':
    case 'ROLLBACK':
      return c.red;
    case 'WARN':
    case 'DISCARD':
    case 'RECOVERY':
      return c.yellow;
    case 'BATCH':
    case 'DISPATCH':
      return c.cyan;
    case 'STATS':
      return c.bold;
    default:
      return (t) => t;
  }
}

/** `attempt`: the attempt a DISPATCH starts, labelled when it is a retry. */
export function paintLogLine(
  line: string,
  c: Colours,
  opts: { entry?: LogEntry | undefined; attempt?: { n: number; of: number } | undefined } = {},
): string {
  const label = opts.attempt && opts.attempt.n > 1 ? `  ${c.magenta(`(attempt ${opts.attempt.n}/${opts.attempt.of})`)}` : '';
  if (!c.enabled) return line + label;
  const entry = opts.entry ?? parseLogLine(line);
  const m = /^(\[[^\]]+\] \[SESSION-\d+\]) (\S+)(.*)$/.exec(line);
  if (!entry || !m) return line + label;
  const paint = typePaint(entry.type, c);
  let rest = m[3]!;
  if (entry.type === 'ERROR') rest = c.red(rest);
  else
    rest = rest
      .replace(/\b(result=)(success|PASS)\b/, (_, k: string, v: string) => k + c.green(v))
      .replace(/\b(result=)(error|FAIL|TIMEOUT)\b/, (_, k: string, v: string) => k + c.red(v));
  return `${c.dim(m[1]!)} ${paint(m[2]!)}${rest}${label}`;
}
