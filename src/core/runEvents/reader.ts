// Reading the runs' event streams (writer.ts writes them; docs/events.md has the format): which
// sessions are live on this machine, and each session's records from its first, read on as the
// file grows. Light on purpose: the VS Code extension loads it at activation.
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

import { isSameProcessAlive } from '../processIdentity';
import type { StatePaths } from '../statePaths';
import { EVENT_FILE, EVENTS_VERSION, type RunEvent, type RunEventRecord } from './writer';

export type { RunEvent, RunEventRecord } from './writer';

export type SessionRecord = Extract<RunEventRecord, { type: 'session' }>;

/** One line of a session file as a record; undefined for a line that is not one, or of another version. */
export function parseRecord(line: string): RunEventRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!value || typeof value !== 'object') return undefined;
  const r = value as Partial<RunEventRecord>;
  return r.v === EVENTS_VERSION && typeof r.type === 'string' && typeof r.seq === 'number' ? (r as RunEventRecord) : undefined;
}

/**
 * A session file read from its first byte on: each `read()` returns the records appended since
 * the last one. A line still being written (no newline yet) waits for the next read.
 */
export class EventFileReader {
  private offset = 0;
  private partial: Buffer = Buffer.alloc(0);

  constructor(readonly file: string) {}

  read(): RunEventRecord[] {
    let fd: number;
    try {
      fd = openSync(this.file, 'r');
    } catch {
      return [];
    }
    const chunks: Buffer[] = [];
    try {
      const buf = Buffer.alloc(64 * 1024);
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, this.offset);
        if (n <= 0) break;
        chunks.push(Buffer.from(buf.subarray(0, n)));
        this.offset += n;
      }
    } finally {
      closeSync(fd);
    }
    if (!chunks.length) return [];
    // Lines end in '\n', a byte no UTF-8 sequence holds: split the bytes, then decode whole lines
    // (a character cut between two reads is whole again).
    const bytes = Buffer.concat([this.partial, ...chunks]);
    const end = bytes.lastIndexOf(0x0a) + 1;
    this.partial = Buffer.from(bytes.subarray(end));
    return bytes
      .subarray(0, end)
      .toString('utf8')
      .split('\n')
      .flatMap((l) => (l ? (parseRecord(l) ?? []) : []));
  }
}

export interface SessionFile {
  file: string;
  session: SessionRecord;
  /** The session's process runs on this machine and has not written its end. */
  live: boolean;
}

/** The session files in .launchpad/events/, newest session first, each with whether its run is live. */
export function sessionFiles(paths: StatePaths): SessionFile[] {
  let names: string[];
  try {
    names = readdirSync(paths.events).filter((n) => EVENT_FILE.test(n));
  } catch {
    return [];
  }
  const found: SessionFile[] = [];
  for (const name of names) {
    const file = join(paths.events, name);
    const first = sessionRecordOf(file);
    if (!first) continue;
    found.push({ file, session: first, live: isLive(first) && !hasEnded(file) });
  }
  return found.sort((a, b) => b.session.session - a.session.session || b.session.seq - a.session.seq);
}

/** The live sessions of this state root on this machine (the session lock's holder, concurrent workers). */
export function liveSessions(paths: StatePaths): SessionFile[] {
  return sessionFiles(paths).filter((f) => f.live);
}

/** Each file's first record, by path and inode: a client looks at the folder every few seconds. */
const heads = new Map<string, { ino: number; session: SessionRecord }>();

function sessionRecordOf(file: string): SessionRecord | undefined {
  const ino = statSync(file, { throwIfNoEntry: false })?.ino;
  if (ino === undefined) return undefined;
  const known = heads.get(file);
  if (known?.ino === ino) return known.session;
  const first = parseRecord(readHead(file).split('\n')[0] ?? '');
  if (first?.type !== 'session') return undefined;
  if (heads.size > 200) heads.clear();
  heads.set(file, { ino, session: first });
  return first;
}

function isLive(s: SessionRecord): boolean {
  return s.host === hostname() && isSameProcessAlive(s.pid, s.identity ?? undefined);
}

/** The end record is a session's last: only the file's tail is read for it. */
function hasEnded(file: string): boolean {
  const tail = readTail(file, 8192).trimEnd();
  const last = tail.slice(tail.lastIndexOf('\n') + 1);
  return parseRecord(last)?.type === 'end';
}

function readHead(file: string, bytes = 8192): string {
  return readRange(file, 0, bytes);
}

function readTail(file: string, bytes: number): string {
  const size = statSync(file, { throwIfNoEntry: false })?.size ?? 0;
  return readRange(file, Math.max(0, size - bytes), bytes);
}

function readRange(file: string, position: number, bytes: number): string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return '';
  }
  try {
    const buf = Buffer.alloc(bytes);
    const n = readSync(fd, buf, 0, bytes, position);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** The records of one type, narrowed. */
export function recordsOf<T extends RunEvent['type']>(records: RunEventRecord[], type: T): Array<Extract<RunEventRecord, { type: T }>> {
  return records.filter((r): r is Extract<RunEventRecord, { type: T }> => r.type === type);
}

export type AttemptRecord = Extract<RunEventRecord, { type: 'attempt' }>;
export type EndRecord = Extract<RunEventRecord, { type: 'end' }>;

/** A task event that ends its attempt. */
const ATTEMPT_ENDS = new Set(['completed', 'failed', 'interrupted']);

/**
 * What a session's records say so far: the attempts running (an attempt record with no end of
 * its task after it), whether a stop of the run was asked for, and its end once written.
 */
export class SessionProgress {
  readonly running = new Map<string, AttemptRecord>();
  /** How each attempt that ended in this session ended, by task (the last one). */
  readonly ended = new Map<string, { attempt: AttemptRecord | undefined; event: string }>();
  stopping = false;
  end: EndRecord | undefined;

  apply(records: RunEventRecord[]): void {
    for (const r of records) {
      if (r.type === 'attempt') {
        this.running.set(r.task, r);
        this.ended.delete(r.task);
      } else if (r.type === 'task' && ATTEMPT_ENDS.has(r.event)) {
        this.ended.set(r.task, { attempt: this.running.get(r.task), event: r.event });
        this.running.delete(r.task);
      } else if (r.type === 'stop' && r.scope === 'run') this.stopping = true;
      else if (r.type === 'end') this.end = r;
    }
  }
}
