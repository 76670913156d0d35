// What a command may touch of the outside world; tests pass their own.
import type { Logger } from '../core/logger';

export interface Io {
  cwd: string;
  env: NodeJS.ProcessEnv;
  out(text: string): void;
  err(text: string): void;
  /** Standard input is a terminal: a command may ask a question. */
  interactive: boolean;
  /** Aborted once standard output cannot be written any more (its reader went away). */
  outputClosed?: AbortSignal;
  ask?(question: string): Promise<string>;
}

/**
 * The real standard streams. Output that cannot be written (a closed pipe: `launchpad run | head`,
 * a full disk behind a redirection) is dropped from then on: an output error never ends a
 * command, least of all a run with agents, a lock and a session to end properly. `outputClosed`
 * tells a command that only prints (log --follow) to stop.
 */
export function processIo(): Io {
  const closed = new AbortController();
  const out = guardedStream(process.stdout, () => closed.abort());
  const err = guardedStream(process.stderr);
  return {
    cwd: process.cwd(),
    env: process.env,
    out,
    err,
    outputClosed: closed.signal,
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

/** A writer to `stream` that drops everything once the stream has failed. */
function guardedStream(stream: NodeJS.WriteStream, onClosed?: () => void): (text: string) => void {
  let broken = false;
  stream.on('error', () => {
    if (broken) return;
    broken = true;
    onClosed?.();
  });
  return (text) => {
    if (broken || stream.destroyed) return;
    try {
      stream.write(text);
    } catch {
      // A synchronous failure (a stream already ended): the same as a closed pipe.
      broken = true;
      onClosed?.();
    }
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
