// Where a process is started from. node starts a process by forking, and a fork write-protects
// every page the forking process has touched: each page it writes next costs a page fault. A
// controller holding a 5,000-task file (~150 MB resident) paid ~30 ms of kernel time per command
// that way, ten commands per task; the editor's extension host is larger still. Past
// SPAWNER_RSS_BYTES of resident memory, processes are started by a small helper process
// (spawnerMain.ts) instead: one per process, started on first use, ended with it. A task's
// process started there is held on its fd 3 (AWAIT_CGROUP_AND_EXEC) until runProcess, told its
// pid, has moved it into its cgroup and recorded it: nothing of it runs unrecorded.
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, type Readable, Writable } from 'node:stream';

import type { SpawnerReply, SpawnerRequest } from './spawnerProtocol';

/** From this much resident memory on, a fork costs more than asking the spawner. */
export const SPAWNER_RSS_BYTES = 100 * 1024 * 1024;

/** What runProcess uses of a started process: node's ChildProcess, or the spawner's stand-in. */
export interface StartedProcess {
  readonly pid?: number | undefined;
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  readonly stdio: ReadonlyArray<Readable | Writable | null | undefined>;
  on(event: 'spawn', listener: () => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  on(event: 'exit' | 'close', listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
}

export interface StartOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to the command's stdin, which is then closed; undefined: no stdin. */
  stdin?: string;
  /** A pipe on fd 3 (stdio[3]): a line written to it lets AWAIT_CGROUP_AND_EXEC go on. */
  hold?: boolean;
}

type Mode = 'auto' | 'always' | 'never';
let mode: Mode = 'auto';

/** For tests: route every short command through the spawner, or none; a spawner given up on is tried again. */
export function setSpawnerMode(next: Mode): void {
  mode = next;
  spawner.reset();
}

/** For tests: the spawner's pid while it runs. */
export function spawnerPid(): number | undefined {
  return spawner.pid;
}

/** Whether a process started now would start from the spawner: this process is large. */
export function fromSpawner(): boolean {
  const large = mode === 'always' || (mode === 'auto' && process.memoryUsage.rss() >= SPAWNER_RSS_BYTES);
  return large && spawner.usable();
}

/** Starts a process in its own process group: from the spawner when `viaSpawner`, else here. */
export function startProcess(file: string, args: string[], opts: StartOptions, viaSpawner = fromSpawner()): StartedProcess {
  return viaSpawner ? spawner.start(file, args, opts) : startHere(file, args, opts);
}

function startHere(file: string, args: string[], opts: StartOptions): ChildProcess {
  const child = spawn(file, args, {
    cwd: opts.cwd,
    env: opts.env,
    detached: true,
    stdio: [opts.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe', ...(opts.hold ? (['pipe'] as const) : [])],
  });
  if (opts.stdin !== undefined && child.stdin) {
    child.stdin.on('error', () => undefined); // the program may not read its input: EPIPE
    child.stdin.end(opts.stdin);
  }
  return child;
}

/** A command the spawner runs, seen from here: its pid once started, its output, its end (exported for its tests). */
export class RemoteProcess extends EventEmitter implements StartedProcess {
  pid: number | undefined;
  readonly stdin = null;
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  readonly stdio: Array<Readable | Writable | null>;
  ended = false;

  /** What ending fd 3 does: ask the spawner to write the line (or, adopted, write it here). */
  release: (() => void) | undefined;

  constructor(onPipesClosed: () => void, release?: () => void) {
    super();
    this.release = release;
    // fd 3 stands for the spawner's pipe.
    const hold = release && new Writable({ write: (_chunk, _enc, done) => done(), final: (done) => (this.release?.(), done()) });
    this.stdio = [null, this.stdout, this.stderr, ...(hold ? [hold] : [])];
    // runProcess destroys the pipes when it stops waiting for them: the spawner closes its own.
    this.stdout.once('close', onPipesClosed);
  }

  end(): void {
    this.ended = true;
    this.stdout.end();
    this.stderr.end();
  }

  /** 'close' as node's ChildProcess emits it: after all output has been read from both pipes. */
  close(code: number | null, signal: NodeJS.Signals | null): void {
    let open = 2;
    const closed = () => --open === 0 && this.emit('close', code, signal);
    this.stdout.once('close', closed);
    this.stderr.once('close', closed);
    this.end();
  }
}

class Spawner {
  private proc: ChildProcess | undefined;
  private broken = false;
  /** Whether it has started a command yet: one that dies before that is not tried again. */
  private worked = false;
  private nextId = 1;
  private readonly running = new Map<number, { remote: RemoteProcess; request: SpawnerRequest & { t: 'spawn' } }>();
  private readonly script = join(__dirname, 'spawnerMain.js');

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  reset(): void {
    this.broken = false;
    this.worked = false;
  }

  /** False where the helper's script is missing (a copied bundle) or it could not be started. */
  usable(): boolean {
    if (this.broken) return false;
    if (!this.proc && !existsSync(this.script)) this.broken = true;
    return !this.broken;
  }

  start(file: string, args: string[], opts: StartOptions): StartedProcess {
    const id = this.nextId++;
    const request: SpawnerRequest & { t: 'spawn' } = { t: 'spawn', id, file, args, cwd: opts.cwd, env: opts.env };
    if (opts.stdin !== undefined) request.stdin = opts.stdin;
    if (opts.hold) request.hold = true;
    const remote = new RemoteProcess(
      () => {
        if (!remote.ended && this.running.has(id)) this.proc?.send({ t: 'close-pipes', id } satisfies SpawnerRequest);
      },
      opts.hold ? () => this.running.has(id) && this.proc?.send({ t: 'release', id } satisfies SpawnerRequest) : undefined,
    );
    let channel: ChildProcess;
    try {
      channel = this.channel();
    } catch {
      // Could not even be started (out of processes, memory): start everything here.
      this.broken = true;
      return startHere(file, args, opts);
    }
    this.running.set(id, { remote, request });
    channel.send(request);
    this.hold();
    return remote;
  }

  private channel(): ChildProcess {
    if (this.proc) return this.proc;
    // Node's own binary as node (in the editor it is the editor's, which needs the variable).
    const proc = fork(this.script, [], {
      execArgv: [],
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    proc.on('message', (reply: SpawnerReply) => this.receive(reply));
    proc.on('error', () => this.lost(proc));
    proc.on('exit', () => this.lost(proc));
    this.proc = proc;
    return proc;
  }

  private receive(reply: SpawnerReply): void {
    if (reply.t === 'ready') return;
    const entry = this.running.get(reply.id);
    if (!entry) return;
    const { remote } = entry;
    switch (reply.t) {
      case 'spawn':
        this.worked = true;
        remote.pid = reply.pid;
        remote.emit('spawn');
        return;
      case 'out': {
        const data = Buffer.from(reply.data.buffer, reply.data.byteOffset, reply.data.byteLength);
        (reply.fd === 1 ? remote.stdout : remote.stderr).write(data);
        return;
      }
      case 'exit':
        remote.emit('exit', reply.code, reply.signal);
        return;
      case 'error':
        this.done(reply.id);
        remote.end();
        remote.emit('error', new Error(reply.message));
        return;
      case 'close':
        this.done(reply.id);
        remote.close(reply.code, reply.signal);
        return;
    }
  }

  /**
   * The spawner is gone (killed, or it could not start). Commands it had not started yet start
   * here; those it had started lose their output and are reported as failed to run.
   */
  private lost(proc: ChildProcess): void {
    if (this.proc !== proc) return;
    this.proc = undefined;
    const entries = [...this.running.entries()];
    this.running.clear();
    this.release();
    // Never started a single command: it cannot run here; start everything directly from now on.
    if (!this.worked) this.broken = true;
    for (const [, { remote, request }] of entries) {
      if (remote.pid === undefined) {
        const opts: StartOptions = { cwd: request.cwd, env: request.env, stdin: request.stdin, hold: request.hold };
        this.adopt(remote, startHere(request.file, request.args, opts));
        continue;
      }
      remote.end();
      remote.emit('error', new Error('the helper process that started it (spawnerMain.js) ended while it ran'));
    }
  }

  /** A command started here after all, reported through the stand-in runProcess already holds. */
  private adopt(remote: RemoteProcess, child: ChildProcess): void {
    const hold = child.stdio[3] as Writable | null | undefined;
    if (hold) {
      hold.on('error', () => undefined);
      remote.release = () => hold.end('\n');
    }
    child.on('spawn', () => {
      remote.pid = child.pid;
      remote.emit('spawn');
    });
    child.stdout!.pipe(remote.stdout, { end: false });
    child.stderr!.pipe(remote.stderr, { end: false });
    child.on('error', (e) => remote.emit('error', e));
    child.on('exit', (code, signal) => remote.emit('exit', code, signal));
    child.on('close', (code, signal) => remote.close(code, signal));
  }

  private done(id: number): void {
    this.running.delete(id);
    if (this.running.size === 0) this.release();
  }

  /** Commands in flight keep this process alive for their replies; an idle spawner does not. */
  private hold(): void {
    this.proc?.ref();
    this.proc?.channel?.ref();
  }

  private release(): void {
    this.proc?.unref();
    this.proc?.channel?.unref();
  }
}

const spawner = new Spawner();
