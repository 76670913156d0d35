// Appending to harness-progress.txt: never truncated, never rewritten. Each call is one
// O_APPEND write, so lines from the controller and a concurrent `add` never interleave.
import { appendFileSync } from 'node:fs';
import { formatLogLine, logTimestamp, type LogEntry, type LogEvent } from './logLine';

export type { LogEvent } from './logLine';

export class ProgressLog {
  constructor(
    readonly file: string,
    /** Called with each line written; the CLI prints them live, the extension refreshes. */
    private readonly onLine?: (line: string, entry: LogEntry) => void,
  ) {}

  append(session: number, ...events: LogEvent[]): void {
    const timestamp = logTimestamp();
    const entries = events.map((e): LogEntry => ({ timestamp, session, ...e }));
    const lines = entries.map(formatLogLine);
    appendFileSync(this.file, lines.join('\n') + '\n');
    if (this.onLine) entries.forEach((entry, i) => this.onLine!(lines[i]!, entry));
  }
}
