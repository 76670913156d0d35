// The lines of one filtered view of the progress log (no vscode here). The first read streams
// the file through the core's readLogLines in 4 MiB chunks, keeping only matching lines; after
// that a LogFollower reads only the bytes appended since. A view shows at most `maxLines` (the
// newest): a filter matching most of a 1,000,000-line log stays an editor-sized document, and
// its first line, a note, says how many earlier lines are left to `launchpad log`.
// Lines are numbered in the order they matched (0, 1, …), so a caller that knows which lines
// it shows can turn an append into edits (drop from the head, add at the end, a new note).
import { type LogFilter, LogFollower, readLogLines } from '../../core/log/logReader';

export const MAX_VIEW_LINES = 50_000;

/** What a view shows: a note line (or none), then matching lines `first` … `end - 1`. */
export interface ViewState {
  note: string | undefined;
  first: number;
  end: number;
}

export class FilteredLog {
  /** Matching lines, oldest first; `lines[0]` is line number `dropped`. Trimmed at 2 × maxLines. */
  private lines: string[] = [];
  private dropped = 0;
  private readonly follower: LogFollower;

  constructor(
    readonly file: string,
    filter: LogFilter,
    /** For the notes: what the filter is, and the command printing every matching line. */
    private readonly describe: { filter: string; command: string },
    private readonly maxLines = MAX_VIEW_LINES,
  ) {
    const { offset } = readLogLines(file, filter, (lines) => this.add(lines));
    this.follower = new LogFollower(file, filter, offset);
  }

  /**
   * Reads what was appended since the last read: 'appended' when lines were added, 'restarted'
   * when the file shrank (replaced, not appended; the view starts over), else undefined.
   */
  poll(): 'appended' | 'restarted' | undefined {
    const before = this.follower.position;
    const lines = this.follower.poll();
    const restarted = this.follower.position < before;
    if (restarted) {
      this.lines = [];
      this.dropped = 0;
    }
    this.add(lines);
    return restarted ? 'restarted' : lines.length > 0 ? 'appended' : undefined;
  }

  /** Lines that matched since the view opened, shown or not. */
  get matched(): number {
    return this.dropped + this.lines.length;
  }

  state(): ViewState {
    const end = this.matched;
    const first = Math.max(this.dropped, end - this.maxLines);
    let note: string | undefined;
    if (end === 0) note = `# No line of ${this.file} matches ${this.describe.filter} yet. Matching lines appear here as they are appended.`;
    else if (first > 0)
      note = `# ${first.toLocaleString('en')} earlier matching lines are not shown here: \`${this.describe.command}\` prints them all.`;
    return { note, first, end };
  }

  /** Matching lines `from` … `to - 1` (still kept: from ≥ the oldest kept line). */
  slice(from: number, to: number): string[] {
    return this.lines.slice(from - this.dropped, to - this.dropped);
  }

  /** Whether lines from `from` on are still kept (an edit can start there). */
  keeps(from: number): boolean {
    return from >= this.dropped;
  }

  text(state = this.state()): string {
    const body = this.slice(state.first, state.end);
    return (state.note !== undefined ? `${state.note}\n` : '') + (body.length ? `${body.join('\n')}\n` : '');
  }

  private add(lines: string[]): void {
    for (const line of lines) this.lines.push(line);
    if (this.lines.length >= 2 * this.maxLines) {
      const cut = this.lines.length - this.maxLines;
      this.lines.splice(0, cut);
      this.dropped += cut;
    }
  }
}
