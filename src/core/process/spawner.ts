// Where a process is started from. node starts a process by forking, and a fork write-protects
// every page the forking process has touched: each page it writes next costs a page fault. A
// controller holding a 5,000-task file (~150 MB resident) paid ~30 ms of kernel time per command
// that way, ten commands per task; the editor's extension host is larger still. Past
// SPAWNER_RSS_BYTES of resident memory, processes are started by a small helper process instead
// (spawnerHelpers.ts): one per process, started on first use, ended with it. python3's helper
// comes first, as it starts a process without a fork; node's where python3 is missing or fails;
// this process itself where neither can start. A task's process started there is held on its fd
// 3 (AWAIT_CGROUP_AND_EXEC) until runProcess, told its pid, has moved it into its cgroup and
// recorded it: nothing of it runs unrecorded.
import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { PassThrough, type Readable, Writable } from 'node:stream';

import { type Helper, HELPER_SCRIPTS, type HelperKind, helperShipped, startHelper } from './spawnerHelpers';
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

/** Set by tests: only this helper. */
let onlyKind: HelperKind | undefined;

/** The helpers tried in turn. LAUNCHPAD_SPAWNER_HELPER=node skips python3's (to compare, or to rule it out). */
function helperKinds(): HelperKind[] {
  if (onlyKind) return [onlyKind];
  return process.env.LAUNCHPAD_SPAWNER_HELPER === 'node' ? ['node'] : ['python', 'node'];
}

/**
 * For tests: route every short command through the spawner, or none; with `helper`, only that
 * helper (the other tried no more). Helpers given up on are tried again; an idle one is ended.
 */
export function setSpawnerMode(next: Mode, helper?: HelperKind): void {
  mode = next;
  onlyKind = helper;
  spawner.reset();
}

/** For tests: the spawner's pid while it runs. */
export function spawnerPid(): number | undefined {
  return spawner.pid;
}

/** For tests: which helper runs. */
export function spawnerKind(): HelperKind | undefined {
  return spawner.kind;
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
  private helper: Helper | undefined;
  /** Whether the helper has started a command yet: one that dies before that is not tried again. */
  private worked = false;
  /** The kinds given up on: they could not start, or died before starting anything. */
  private readonly failed = new Set<HelperKind>();
  private readonly shipped = new Map<HelperKind, boolean>();
  private nextId = 1;
  private readonly running = new Map<number, { remote: RemoteProcess; request: SpawnerRequest & { t: 'spawn' } }>();

  get pid(): number | undefined {
    return this.helper?.pid;
  }

  get kind(): HelperKind | undefined {
    return this.helper?.kind;
  }

  reset(): void {
    this.failed.clear();
    // An idle helper ends: the next command starts a new one of the kinds now wanted.
    if (this.helper && this.running.size === 0) this.stopHelper();
  }

  private stopHelper(): void {
    this.helper!.stop();
    this.helper = undefined;
  }

  /** False where no helper can be started: none shipped beside this code, or all given up on. */
  usable(): boolean {
    return this.helper !== undefined || this.nextKind() !== undefined;
  }

  private nextKind(): HelperKind | undefined {
    return helperKinds().find((kind) => {
      if (this.failed.has(kind)) return false;
      if (!this.shipped.has(kind)) this.shipped.set(kind, helperShipped(kind));
      return this.shipped.get(kind);
    });
  }

  start(file: string, args: string[], opts: StartOptions): StartedProcess {
    const id = this.nextId++;
    const request: SpawnerRequest & { t: 'spawn' } = { t: 'spawn', id, file, args, cwd: opts.cwd, env: opts.env };
    if (opts.stdin !== undefined) request.stdin = opts.stdin;
    if (opts.hold) request.hold = true;
    const remote = new RemoteProcess(
      () => {
        if (!remote.ended && this.running.has(id)) this.helper?.send({ t: 'close-pipes', id });
      },
      opts.hold ? () => this.running.has(id) && this.helper?.send({ t: 'release', id }) : undefined,
    );
    // An idle helper of a kind no longer wanted (the variable changed) gives way to one that is.
    if (this.helper && this.running.size === 0 && !helperKinds().includes(this.helper.kind)) this.stopHelper();
    const helper = this.channel();
    if (!helper) return startHere(file, args, opts);
    this.running.set(id, { remote, request });
    helper.send(request);
    helper.hold(true);
    return remote;
  }

  /** The running helper, or a new one of the first kind not given up on; none: start here. */
  private channel(): Helper | undefined {
    while (!this.helper) {
      const kind = this.nextKind();
      if (!kind) return undefined;
      try {
        const helper: Helper = startHelper(
          kind,
          (reply) => this.receive(reply),
          () => this.lost(helper),
        );
        this.helper = helper;
        this.worked = false;
      } catch {
        // Could not even be started (out of processes, memory).
        this.failed.add(kind);
      }
    }
    return this.helper;
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
   * The helper is gone (killed, or it could not start). Commands it had not started yet go to
   * the next helper, or start here; those it had started lose their output and are reported as
   * failed to run.
   */
  private lost(helper: Helper): void {
    if (this.helper !== helper) return;
    this.helper = undefined;
    helper.hold(false);
    // It never started a single command: its kind cannot run here; the next one is tried.
    if (!this.worked) this.failed.add(helper.kind);
    const entries = [...this.running.values()];
    this.running.clear();
    for (const { remote, request } of entries) {
      if (remote.pid !== undefined) {
        remote.end();
        remote.emit('error', new Error(`the helper process that started it (${HELPER_SCRIPTS[helper.kind]}) ended while it ran`));
        continue;
      }
      const next = this.channel();
      if (next) {
        this.running.set(request.id, { remote, request });
        next.send(request);
        next.hold(true);
        continue;
      }
      const opts: StartOptions = { cwd: request.cwd, env: request.env, stdin: request.stdin, hold: request.hold };
      let child: ChildProcess;
      try {
        child = startHere(request.file, request.args, opts);
      } catch (e) {
        // Refused as it stands (node checks the arguments first): thrown here, it would end this process.
        remote.end();
        remote.emit('error', e as Error);
        continue;
      }
      this.adopt(remote, child);
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

  /** Commands in flight keep this process alive for their replies; an idle helper does not. */
  private done(id: number): void {
    this.running.delete(id);
    if (this.running.size === 0) this.helper?.hold(false);
  }
}

const spawner = new Spawner();
