// What `run -v` shows of each task's processes: whole lines, prefixed by the task id. Output
// arrives in chunks that split lines anywhere, so each process kind of each task keeps its
// partial line; a carriage return (CRLF, or a progress bar redrawn in place) keeps what the
// line ended as; blank lines are dropped; cursor-moving escapes never reach our terminal.

export class TaskOutputLines {
  private readonly partial = new Map<string, string>();

  constructor(
    private readonly emit: (taskId: string, lines: string[]) => void,
    /** Keep the output's colour codes (our own output is coloured). */
    private readonly keepColour: boolean,
  ) {}

  push(taskId: string, kind: string, text: string): void {
    const key = `${taskId}\u0000${kind}`;
    const parts = ((this.partial.get(key) ?? '') + text).split('\n');
    this.partial.set(key, parts.pop()!);
    const lines = parts.map((l) => this.clean(l)).filter((l) => l.trim() !== '');
    if (lines.length) this.emit(taskId, lines);
  }

  /** The partial lines left at the end of the run. */
  flush(): void {
    for (const [key, rest] of this.partial) {
      const line = this.clean(rest);
      if (line.trim()) this.emit(key.split('\u0000')[0]!, [line]);
    }
    this.partial.clear();
  }

  private clean(line: string): string {
    const shown =
      line
        .split('\r')
        .filter((s) => s !== '')
        .at(-1) ?? '';
    return shown.replace(/\x1b\[[0-9;?]*([A-Za-z])/g, (code, final: string) => (final === 'm' && this.keepColour ? code : ''));
  }
}
