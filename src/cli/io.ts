// What a command may touch of the outside world; tests pass their own.
import type { Logger } from '../core/logger';

export interface Io {
  cwd: string;
  env: NodeJS.ProcessEnv;
  out(text: string): void;
  err(text: string): void;
  /** Standard input and output are a terminal: a command may ask a question. */
  interactive: boolean;
  /** Standard output is a terminal: colour, and a live view redrawn in place. */
  stdoutTTY: boolean;
  /** The terminal's width, when standard output is one. */
  columns(): number | undefined;
  ask?(question: string): Promise<string>;
}

export function processIo(): Io {
  return {
    cwd: process.cwd(),
    env: process.env,
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    interactive: !!process.stdin.isTTY && !!process.stdout.isTTY,
    stdoutTTY: !!process.stdout.isTTY,
    columns: () => (process.stdout.isTTY ? process.stdout.columns : undefined),
    ask: askOnTerminal,
  };
}

/** Asked when a person answers a question with Ctrl-C or Ctrl-D: nothing was done. */
export class QuestionCancelled extends Error {
  constructor() {
    super('cancelled');
    this.name = 'QuestionCancelled';
  }
}

/** One question on the terminal; Ctrl-C or the end of input rejects with QuestionCancelled. */
async function askOnTerminal(question: string): Promise<string> {
  const { createInterface } = await import('node:readline');
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
  try {
    return await new Promise<string>((resolve, reject) => {
      rl.on('SIGINT', () => reject(new QuestionCancelled()));
      rl.on('close', () => reject(new QuestionCancelled()));
      rl.question(question, resolve);
    });
  } finally {
    rl.close();
  }
}

/** The Logger of the core, on stderr. */
export function stderrLogger(io: Io, verbose = false): Logger {
  return {
    debug: (m) => verbose && io.err(`debug: ${m}\n`),
    info: (m) => verbose && io.err(`${m}\n`),
    warn: (m) => io.err(`warning: ${m}\n`),
    error: (m) => io.err(`error: ${m instanceof Error ? m.message : m}\n`),
  };
}
