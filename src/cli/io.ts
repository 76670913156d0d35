// What a command may touch of the outside world; tests pass their own.
import type { Logger } from '../core/logger';

export interface Io {
  cwd: string;
  env: NodeJS.ProcessEnv;
  out(text: string): void;
  err(text: string): void;
  /** Standard input is a terminal: a command may ask a question. */
  interactive: boolean;
  ask?(question: string): Promise<string>;
}

export function processIo(): Io {
  return {
    cwd: process.cwd(),
    env: process.env,
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    interactive: !!process.stdin.isTTY && !!process.stdout.isTTY,
    ask: async (question) => {
      const { createInterface } = await import('node:readline/promises');
      const rl = createInterface({ input: process.stdin, output: process.stdout });
      try {
        return await rl.question(question);
      } finally {
        rl.close();
      }
    },
  };
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
