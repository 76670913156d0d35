// Appending to harness-progress.txt: never truncated, never rewritten. Each call is one
// O_APPEND write, so lines from the controller and a concurrent `add` never interleave.
// Messages carry titles and agents' output: their control characters are escaped.
import { appendFileSync } from 'node:fs';

import { escapeControlChars } from '../controlChars';
import { formatLogLine, type LogEntry, type LogEvent, logTimestamp } from './logLine';

export type { LogEvent } from './logLine';

export class ProgressLog {
  constructor(
    readonly file: string,
    /** Called with each line written; the CLI prints them live, the extension refreshes. */
    private readonly onLine?: (line: string, entry: LogEntry) => void,
  ) {}

  append(session: number, ...events: LogEvent[]): void {
    const timestamp = logTimestamp();
    const entries = events.map((e): LogEntry => ({ timestamp, session, ...e, message: escapeControlChars(e.message) }));
    const lines = entries.map(formatLogLine);
    try {
      appendFileSync(this.file, lines.join('\n') + '\n');
    } finally {
      // Shown even when the file could not take it (a full disk): a person still sees what happened.
      if (this.onLine) entries.forEach((entry, i) => this.onLine!(lines[i]!, entry));
    }
  }
}
