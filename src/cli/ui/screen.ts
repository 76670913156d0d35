// Lines that scroll, with a block kept under them and redrawn in place (ANSI): a log above, a
// live table below. Redraws are throttled; each line of the block is cut to the terminal's
// width so its height is known (lines above it may wrap). Without a terminal there is no
// block: lines are printed as they come.

export interface ScreenOptions {
  write(text: string): void;
  /** Standard output is a terminal: keep and redraw the block. */
  live: boolean;
  /** The terminal's width now. */
  columns(): number | undefined;
  /** At most one redraw in this many milliseconds (lines are never delayed). */
  throttleMs?: number;
}

const ERASE_LINE_AND_BELOW = '\x1b[J';

export class Screen {
  private block: () => string[] = () => [];
  /** Lines of the block on the screen now. */
  private shown = 0;
  private pending: NodeJS.Timeout | undefined;
  private lastDraw = 0;
  private closed = false;

  constructor(private readonly opts: ScreenOptions) {}

  /** What the block shows; called on every redraw. */
  setBlock(render: () => string[]): void {
    this.block = render;
    this.redraw();
  }

  /** Lines printed above the block (the block follows them down). */
  print(lines: string[]): void {
    if (!lines.length) return;
    if (!this.opts.live || this.closed) {
      this.opts.write(lines.map((l) => l + '\n').join(''));
      return;
    }
    // Printed lines may wrap: only the block's height must be known.
    this.opts.write(this.erase() + lines.map((l) => l + '\n').join('') + this.draw());
  }

  /**
   * Something written to the terminal some other way (stderr): the block is taken away first
   * and drawn again under it, so the two do not overwrite each other.
   */
  interject(write: () => void): void {
    if (!this.opts.live || this.closed) return write();
    this.opts.write(this.erase());
    write();
    this.opts.write(this.draw());
  }

  /** Redraws the block soon (at most once per throttle period). */
  redraw(): void {
    if (!this.opts.live || this.closed || this.pending) return;
    const wait = Math.max(0, this.lastDraw + (this.opts.throttleMs ?? 100) - Date.now());
    this.pending = setTimeout(() => {
      this.pending = undefined;
      if (!this.closed) this.opts.write(this.erase() + this.draw());
    }, wait);
  }

  /** Removes the block for good; later lines are printed plainly. */
  close(): void {
    if (this.pending) clearTimeout(this.pending);
    this.pending = undefined;
    if (this.opts.live && !this.closed && this.shown) this.opts.write(this.erase());
    this.closed = true;
  }

  private erase(): string {
    const up = this.shown ? `\x1b[${this.shown}A\r` : '\r';
    this.shown = 0;
    return up + ERASE_LINE_AND_BELOW;
  }

  private draw(): string {
    this.lastDraw = Date.now();
    const lines = this.block().map((l) => this.fit(l));
    this.shown = lines.length;
    return lines.map((l) => l + '\n').join('');
  }

  /** Cut to one screen line (colour codes take no width); a cut line ends its colour. */
  private fit(line: string): string {
    const width = (this.opts.columns() ?? 80) - 1;
    let visible = 0;
    let out = '';
    let coloured = false;
    for (let i = 0; i < line.length;) {
      const code = /^\x1b\[[0-9;?]*[A-Za-z]/.exec(line.slice(i, i + 16));
      if (code) {
        out += code[0];
        coloured = true;
        i += code[0].length;
        continue;
      }
      if (visible >= width) return coloured ? out + '\x1b[0m' : out;
      const ch = String.fromCodePoint(line.codePointAt(i)!);
      out += ch;
      visible++;
      i += ch.length;
    }
    return out;
  }
}
