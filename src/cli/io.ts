// What a command may touch of the outside world; tests pass their own.
import type { Logger } from '../core/logger';

export interface Io {
  cwd: string;
  env: NodeJS.ProcessEnv;
  out(text: string): void;
  err(text: string): void;
  /** Standard input and output are a terminal: a command may ask a question. */
  interactive: boolean;
  /** Aborted once standard output cannot be written any more (its reader went away). */
  outputClosed?: AbortSignal;
  /** Standard output is a terminal: colour, and a live view redrawn in place. */
  stdoutTTY: boolean;
  /** The terminal's width, when standard output is one. */
  columns(): number | undefined;
  ask?(question: string): Promise<string>;
  /** All of standard input ('' when it is a terminal), for the hook entry points. */
  readStdin?(): Promise<string>;
}

/** Hook input is a small JSON object: more than this is not one. */
const MAX_STDIN_BYTES = 1024 * 1024;
/** An agent writes the hook input at once and closes stdin; never wait longer than this for it. */
const STDIN_WAIT_MS = 10_000;

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
    stdoutTTY: !!process.stdout.isTTY,
    columns: () => (process.stdout.isTTY ? process.stdout.columns : undefined),
    readStdin: () => readAll(process.stdin),
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

function readAll(stream: NodeJS.ReadStream): Promise<string> {
  if (stream.isTTY) return Promise.resolve('');
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = () => {
      clearTimeout(timer);
      stream.removeAllListeners('data');
      // After a time limit the writer may still hold the pipe open: let go of it.
      stream.destroy();
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const timer = setTimeout(finish, STDIN_WAIT_MS);
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_STDIN_BYTES) chunks.push(chunk);
    });
    stream.once('end', finish);
    stream.once('error', finish);
  });
}
