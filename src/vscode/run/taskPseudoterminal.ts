// The display side of one task's terminal: text written before VS Code opens the terminal is
// kept (bounded) and shown on open; `\n` becomes `\r\n`; the end is reported once with an exit
// code. A person closing the terminal (or "Terminate Task") is reported through `onUserClose`.
// `whenOpened` lets a writer begin only once the terminal shows (a transcript from its first byte).
import * as vscode from 'vscode';

/** Kept while the terminal is not open yet (the task system opens it a moment after dispatch). */
const MAX_PENDING_CHARS = 256 * 1024;
/**
 * VS Code reports a terminal that exits within its first half second as "failed to launch";
 * a quick task's end waits until it has been open this long, so the message says what happened.
 */
const MIN_OPEN_MS = 700;

export class TaskPseudoterminal implements vscode.Pseudoterminal {
  private readonly writeEmitter = new vscode.EventEmitter<string>();
  private readonly closeEmitter = new vscode.EventEmitter<number>();
  readonly onDidWrite = this.writeEmitter.event;
  readonly onDidClose = this.closeEmitter.event;
  private openedAt: number | undefined;
  private pending: string[] = [];
  private pendingChars = 0;
  private exitCode: number | undefined;
  private closedByUser = false;

  private markEnded!: () => void;
  /** Resolves when the task is over (`end`) or the person closed the terminal. */
  readonly whenEnded = new Promise<void>((resolve) => (this.markEnded = resolve));
  private markOpened!: () => void;
  /** Resolves when VS Code opens the terminal. */
  readonly whenOpened = new Promise<void>((resolve) => (this.markOpened = resolve));

  constructor(private readonly onUserClose: () => void) {}

  /** The person closed the terminal or terminated the task before it ended. */
  get userClosed(): boolean {
    return this.closedByUser;
  }

  get ended(): boolean {
    return this.exitCode !== undefined;
  }

  open(): void {
    this.openedAt = Date.now();
    const text = this.pending.join('');
    this.pending = [];
    this.pendingChars = 0;
    if (text) this.writeEmitter.fire(text);
    if (this.exitCode !== undefined) this.fireClose(this.exitCode);
    this.markOpened();
  }

  close(): void {
    if (this.exitCode === undefined) {
      this.closedByUser = true;
      this.onUserClose();
    }
    this.markEnded();
    this.dispose();
  }

  write(text: string): void {
    if (this.closedByUser || this.exitCode !== undefined || !text) return;
    const out = toTerminal(text);
    if (this.openedAt !== undefined) {
      this.writeEmitter.fire(out);
      return;
    }
    this.pending.push(out);
    this.pendingChars += out.length;
    while (this.pendingChars > MAX_PENDING_CHARS && this.pending.length > 1) this.pendingChars -= this.pending.shift()!.length;
  }

  /** The task is over: the terminal stays with its output, the VS Code task ends with `code`. */
  end(code: number): void {
    if (this.exitCode !== undefined) return;
    this.exitCode = code;
    this.markEnded();
    if (this.openedAt !== undefined && !this.closedByUser) this.fireClose(code);
  }

  private fireClose(code: number): void {
    const wait = MIN_OPEN_MS - (Date.now() - (this.openedAt ?? 0));
    if (wait <= 0) this.closeEmitter.fire(code);
    else setTimeout(() => !this.closedByUser && this.closeEmitter.fire(code), wait);
  }

  dispose(): void {
    this.writeEmitter.dispose();
    this.closeEmitter.dispose();
  }
}

/** Terminal line endings: every lone `\n` becomes `\r\n`. */
export function toTerminal(text: string): string {
  return text.replace(/\r?\n/g, '\r\n');
}
