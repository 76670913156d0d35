// The run's event stream: one JSON object a line, appended by the controller to a file of its
// session under .launchpad/events/, so a client that did not start the run (VS Code after a
// reload, another window, a script) can follow it and catch up from the session's start. The
// files and the log stay the truth; the stream says what happened in the order it happened.
// `launchpad run --events` prints the same lines on stdout. docs/events.md is the reference.
import { closeSync, mkdirSync, openSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, relative, sep } from 'node:path';

import type { RunOutcome, TaskEvent } from '../controller/types';
import type { LogEntry } from '../log/logLine';
import type { Logger } from '../logger';
import { processIdentity } from '../processIdentity';
import type { AttemptPaths, StatePaths } from '../statePaths';

/** The format's version, in every record. A reader skips records of a version it does not know. */
export const EVENTS_VERSION = 1;

/** Session files kept in .launchpad/events/ (older ones are removed when a session starts). */
export const EVENT_FILES_KEPT = 20;

/** A session file: session-<N>.jsonl, or session-<N>.<k>.jsonl when that number has one already. */
export const EVENT_FILE = /^session-(\d+)(?:\.(\d+))?\.jsonl$/;

export type RunEvent =
  | {
      type: 'session';
      session: number;
      pid: number;
      /** The process's identity (start time and boot id): with the pid, tells a live run from a reused pid. */
      identity: string | null;
      host: string;
      root: string;
      base_branch: string;
      mode: 'worktrees' | 'in-place' | 'concurrent';
      /** Concurrent mode: this run's worker id. */
      worker: string | null;
    }
  | { type: 'log'; line: string; log_type: string; task: string | null }
  | {
      type: 'attempt';
      task: string;
      attempt: number;
      agent: string | null;
      /** Relative to the state root, with '/' separators. */
      dir: string;
      transcript: string;
    }
  | {
      type: 'task';
      task: string;
      event: TaskEvent['kind'];
      next?: string | null;
      step?: number;
      total?: number;
      description?: string;
      question?: string;
    }
  | { type: 'stop'; scope: 'run'; now: boolean }
  | { type: 'stop'; scope: 'task'; task: string; agent: string; taken: boolean }
  | { type: 'end'; outcome: EndOutcome | null; error: string | null };

export interface EndOutcome {
  exit_code: number;
  reason: string;
  message: string;
  session: number;
  stats: RunOutcome['stats'];
  notes: string[];
}

export type RunEventRecord = RunEvent & { v: number; seq: number; at: string };

/**
 * Writes a run's records: to the listener (--events) from the start, and to the session's file
 * once the session has a number. A record that cannot be written is not the run's failure: the
 * file is given up (one warning) and the run goes on.
 */
export class RunEventWriter {
  private seq = 0;
  private fd: number | undefined;
  private file: string | undefined;

  constructor(
    private readonly onRecord?: (line: string) => void,
    private readonly logger?: Logger,
  ) {}

  /** The session's file, if it is being written. */
  get path(): string | undefined {
    return this.file;
  }

  /** Opens the session's file (its first record says whose it is) and removes the oldest others. */
  startSession(
    paths: StatePaths,
    session: Omit<Extract<RunEvent, { type: 'session' }>, 'type' | 'pid' | 'identity' | 'host' | 'root'>,
  ): void {
    try {
      mkdirSync(paths.events, { recursive: true });
      for (let k = 1; this.fd === undefined; k++) {
        const name = `session-${session.session}${k > 1 ? `.${k}` : ''}.jsonl`;
        try {
          this.fd = openSync(join(paths.events, name), 'wx');
          this.file = join(paths.events, name);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        }
      }
      pruneEventFiles(paths.events, this.file!);
    } catch (err) {
      this.logger?.warn(`could not write the run's events under ${paths.events}: ${(err as Error).message}`);
    }
    this.write({
      type: 'session',
      pid: process.pid,
      identity: processIdentity(process.pid) ?? null,
      host: hostname(),
      root: paths.root,
      ...session,
    });
  }

  write(event: RunEvent): void {
    const line = JSON.stringify({ v: EVENTS_VERSION, seq: this.seq++, at: new Date().toISOString(), ...event }) + '\n';
    this.onRecord?.(line);
    if (this.fd === undefined) return;
    try {
      writeSync(this.fd, line);
    } catch (err) {
      this.logger?.warn(`could not write the run's events to ${this.file}: ${(err as Error).message}; going on without them`);
      this.close();
    }
  }

  log(line: string, entry: LogEntry): void {
    this.write({ type: 'log', line, log_type: entry.type, task: entry.taskId ?? null });
  }

  attempt(paths: StatePaths, taskId: string, files: AttemptPaths, agentId: string | undefined): void {
    const rel = (p: string) => relative(paths.root, p).split(sep).join('/');
    this.write({
      type: 'attempt',
      task: taskId,
      attempt: files.number,
      agent: agentId ?? null,
      dir: rel(files.dir),
      transcript: rel(files.transcript),
    });
  }

  task(e: TaskEvent): void {
    const { taskId, kind, next, checkpoint, question } = e;
    this.write({
      type: 'task',
      task: taskId,
      event: kind,
      ...(next !== undefined ? { next } : {}),
      ...(checkpoint ?? {}),
      ...(question !== undefined ? { question } : {}),
    });
  }

  end(result: { outcome: RunOutcome } | { error: unknown }): void {
    if ('outcome' in result) {
      const o = result.outcome;
      this.write({
        type: 'end',
        outcome: { exit_code: o.exitCode, reason: o.reason, message: o.message, session: o.session, stats: o.stats, notes: o.notes ?? [] },
        error: null,
      });
    } else {
      this.write({ type: 'end', outcome: null, error: result.error instanceof Error ? result.error.message : String(result.error) });
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    try {
      closeSync(this.fd);
    } catch {
      // Closed already.
    }
    this.fd = undefined;
  }
}

/** Keeps the newest EVENT_FILES_KEPT session files (by when they were last written) and `current`. */
function pruneEventFiles(dir: string, current: string): void {
  const files = readdirSync(dir)
    .filter((n) => EVENT_FILE.test(n))
    .map((n) => ({ path: join(dir, n), mtime: statSync(join(dir, n), { throwIfNoEntry: false })?.mtimeMs ?? 0 }))
    .filter((f) => f.path !== current)
    .sort((a, b) => b.mtime - a.mtime);
  // A session still running writes its file often: it stays among the newest.
  for (const old of files.slice(EVENT_FILES_KEPT - 1)) rmSync(old.path, { force: true });
}
