// The messages between a process and its spawner (spawner.ts, spawnerHelpers.ts), one id per
// command. To spawnerMain.js they travel over node's IPC channel with its "advanced"
// serialization (output as bytes); to spawnerMain.py, as the frames below.
import { constants } from 'node:os';

export type SpawnerRequest =
  /** `hold`: a pipe on the command's fd 3, written and closed on `release` (AWAIT_CGROUP_AND_EXEC reads it). */
  | { t: 'spawn'; id: number; file: string; args: string[]; cwd: string; env: NodeJS.ProcessEnv; stdin?: string; hold?: boolean }
  | { t: 'release'; id: number }
  /** The command's pipes are no longer read (a process that escaped its group may hold them). */
  | { t: 'close-pipes'; id: number };

export type SpawnerReply =
  | { t: 'ready' }
  | { t: 'spawn'; id: number; pid: number }
  /** Could not be started (a missing cwd or program): node's message. */
  | { t: 'error'; id: number; message: string }
  | { t: 'out'; id: number; fd: 1 | 2; data: Uint8Array }
  | { t: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null }
  | { t: 'close'; id: number; code: number | null; signal: NodeJS.Signals | null };

// A frame: a 4-byte little-endian length of what follows it, a kind byte, a 4-byte little-endian
// command id, then the payload. Requests: the base environment (JSON, id 0, sent once first),
// spawn (JSON of the request's fields, its environment as the changes from the base: set and
// unset, as a command's rarely differs from the next's by more than a few variables), release,
// close-pipes (none). Replies: ready (none), spawn (the pid, 4 bytes), error (the message),
// stdout and stderr (the bytes), exit and close (JSON [code, signal number]).
const HEADER = 9;
const REQUEST_KIND = { env: 0, spawn: 1, release: 2, 'close-pipes': 3 } as const;

function frame(kind: number, id: number, payload: Buffer): Buffer {
  const bytes = Buffer.allocUnsafe(HEADER + payload.length);
  bytes.writeUInt32LE(5 + payload.length, 0);
  bytes.writeUInt8(kind, 4);
  bytes.writeUInt32LE(id, 5);
  payload.copy(bytes, HEADER);
  return bytes;
}

/** The environment the spawn requests after it are told apart from. */
export function encodeBaseEnv(base: NodeJS.ProcessEnv): Buffer {
  return frame(REQUEST_KIND.env, 0, Buffer.from(JSON.stringify(base)));
}

export function encodeRequest(request: SpawnerRequest, base: NodeJS.ProcessEnv): Buffer {
  if (request.t !== 'spawn') return frame(REQUEST_KIND[request.t], request.id, Buffer.alloc(0));
  const { t: _t, id, env, ...fields } = request;
  return frame(REQUEST_KIND.spawn, id, Buffer.from(JSON.stringify({ ...fields, env: envChanges(env, base) })));
}

/** What `env` sets that `base` has not (or has otherwise), and what of `base` it has not. */
export function envChanges(env: NodeJS.ProcessEnv, base: NodeJS.ProcessEnv): { set: Record<string, string>; unset: string[] } {
  const set: Record<string, string> = {};
  const unset: string[] = [];
  for (const key in env) {
    const value = env[key];
    if (value !== undefined && value !== base[key]) set[key] = value;
  }
  for (const key in base) if (env[key] === undefined) unset.push(key);
  return { set, unset };
}

const signalNames = new Map<number, NodeJS.Signals>();
for (const [name, n] of Object.entries(constants.signals)) if (!signalNames.has(n)) signalNames.set(n, name as NodeJS.Signals);

/** Reads replies from the helper's output, whatever the chunks it arrives in. */
export class ReplyReader {
  private pending: Buffer = Buffer.alloc(0);

  /** The replies complete with this chunk; a frame split across chunks waits for its rest. */
  read(chunk: Buffer): SpawnerReply[] {
    let buf = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const replies: SpawnerReply[] = [];
    while (buf.length >= 4) {
      const end = 4 + buf.readUInt32LE(0);
      if (buf.length < end) break;
      replies.push(decodeReply(buf.readUInt8(4), buf.readUInt32LE(5), buf.subarray(HEADER, end)));
      buf = buf.subarray(end);
    }
    // Copied, so the chunk it came in is not kept alive by a small rest.
    this.pending = buf.length ? Buffer.from(buf) : Buffer.alloc(0);
    return replies;
  }
}

function decodeReply(kind: number, id: number, payload: Buffer): SpawnerReply {
  switch (kind) {
    case 0:
      return { t: 'ready' };
    case 1:
      return { t: 'spawn', id, pid: payload.readUInt32LE(0) };
    case 2:
      return { t: 'error', id, message: payload.toString() };
    case 3:
    case 4:
      return { t: 'out', id, fd: kind === 3 ? 1 : 2, data: payload };
    case 5:
    case 6: {
      const [code, signal] = JSON.parse(payload.toString()) as [number | null, number | null];
      return { t: kind === 5 ? 'exit' : 'close', id, code, signal: signal === null ? null : (signalNames.get(signal) ?? null) };
    }
    default:
      throw new Error(`the spawner sent a frame of unknown kind ${kind}`);
  }
}
