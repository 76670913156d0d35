// Every process Launchpad starts goes through here. Each runs in its own process group, and
// a timeout, an abort or the leader's exit ends the whole group (SIGTERM, then SIGKILL after a
// grace period), so no grandchild outlives the step that started it.
// A task's process (one with a record) is followed further: it runs in a cgroup of its own
// where one can be made, and carries an environment marker, so the processes that leave its
// group (setsid, a shell's job control) end with it too; and a watchdog outside the controller
// enforces its time limit should the controller die.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import type { Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

import {
  AWAIT_CGROUP_AND_EXEC,
  createRunCgroup,
  moveIntoCgroup,
  removeCgroup,
  removeCgroupWhenEmpty,
  removeCgroupWhenEmptySync,
} from './cgroup';
import { agentEnvironment } from './environment';
import { MARKER_VAR, markerValue, newMarkerToken } from './environmentMarker';
import { groupAlive, killGroup } from './killGroup';
import type { ProcessRecords } from './processRecords';
import { ProcessTree } from './processTree';
import { startWatchdog, type Watchdog } from './watchdog';

export interface ProcessSpec {
  /** A shell command line (run by /bin/sh -c), or a program and its arguments (no shell). */
  command: string | { file: string; args: string[] };
  cwd: string;
  env?: NodeJS.ProcessEnv;
  stdin?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Live output, stdout and stderr interleaved as they arrive. */
  onOutput?: (text: string) => void;
  /** Appends all output here (the attempt's transcript). */
  transcript?: string;
  /** How much of stdout and stderr to keep in memory each (the tail). Default: all. */
  captureBytes?: number;
  /**
   * A task's process: recorded while it runs, so a later session can end it after a crash, and
   * followed beyond its process group (cgroup or _LAUNCHPAD_PROC environment marker), with a
   * watchdog for its time limit. Run this way, a program that cannot be found is reported by
   * the shell (exit 127) rather than as spawnError.
   */
  record?: { records: ProcessRecords; name: string; label: string };
  /**
   * A recorded process that must not outlive the controller (an in-place agent works in the
   * person's checkout): its watchdog ends it as soon as the controller is gone.
   */
  endWithController?: boolean;
  /** Between SIGTERM and SIGKILL. */
  graceMs?: number;
  onSpawn?: (pid: number) => void;
}

export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  stdout: string;
  stderr: string;
  /** The last output, both streams interleaved, bounded by captureBytes. */
  tail: string;
  /** Set when the process could not be started at all (missing cwd, missing program). */
  spawnError?: string;
  /** Set when writing the transcript failed (a full disk): the output is incomplete there. */
  transcriptError?: string;
  durationMs: number;
  /** Processes of a recorded run that had left its process group and were ended with it. */
  escaped: number;
}

const DEFAULT_GRACE_MS = 2000;

/** The WARN message for a run whose processes outside its process group were ended with it. */
export function escapedMessage(what: string, count: number): string {
  return `${what}: ended ${count} process${count === 1 ? '' : 'es'} that had left its process group`;
}

/** Runs started here that have not been ended yet (for an exit that cannot wait for them). */
const liveRuns = new Map<number, { tree?: ProcessTree | undefined; watchdog?: Watchdog | undefined; cgroup?: string | undefined }>();

/**
 * SIGKILLs every run still going, at once, with what left its group: for a process about to
 * exit without waiting (a second Ctrl-C), whose grace-period timers would never fire.
 */
export function killAllProcessGroupsNow(): void {
  for (const [pgid, run] of liveRuns) {
    killGroup(pgid, 'SIGKILL');
    run.tree?.killEscaped();
    run.watchdog?.stop();
  }
  // The records stay for the next session; the cgroups need not.
  for (const run of liveRuns.values()) if (run.cgroup) removeCgroupWhenEmptySync(run.cgroup);
  liveRuns.clear();
}

export function runProcess(spec: ProcessSpec): Promise<ProcessResult> {
  const started = Date.now();
  const command = typeof spec.command === 'string' ? { file: '/bin/sh', args: ['-c', spec.command] } : spec.command;
  const token = spec.record ? newMarkerToken() : undefined;
  let cgroup = spec.record ? createRunCgroup() : undefined;
  // A task's process is a shell waiting on its fd 3 until it is in its cgroup (where it has one),
  // recorded and watched, then it becomes the command: a controller killed before that leaves
  // nothing of it running unrecorded.
  const hold = !!spec.record;
  const { file, args } = hold
    ? { file: '/bin/sh', args: ['-c', AWAIT_CGROUP_AND_EXEC, 'launchpad-task', command.file, ...command.args] }
    : command;
  // No process Launchpad starts gets its own secrets (the queue's URL, the shared remote).
  const env = agentEnvironment(spec.env ?? process.env, 'local');
  const limit = spec.captureBytes ?? Infinity;
  const grace = spec.graceMs ?? DEFAULT_GRACE_MS;

  return new Promise((resolve) => {
    let transcript: WriteStream | undefined;
    let transcriptError: string | undefined;
    if (spec.transcript) {
      mkdirSync(dirname(spec.transcript), { recursive: true });
      transcript = createWriteStream(spec.transcript, { flags: 'a' });
      // A write that fails (ENOSPC) is reported in the result; unhandled, it would end the process.
      transcript.on('error', (e) => void (transcriptError ??= e.message));
    }
    const out = new Capture(limit);
    const err = new Capture(limit);
    const tail = new Capture(limit);
    let timedOut = false;
    let aborted = false;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];

    let pid: number | undefined;
    let tree: ProcessTree | undefined;
    let watchdog: Watchdog | undefined;

    const endGroup = () => {
      const leader = pid;
      if (leader === undefined) return;
      const group = killGroup(leader, 'SIGTERM');
      const escaped = tree ? tree.signalEscaped('SIGTERM') : 0;
      if (!group && !escaped) return;
      const t = setTimeout(() => {
        if (groupAlive(leader)) killGroup(leader, 'SIGKILL');
        tree?.killEscaped();
      }, grace);
      t.unref();
      timers.push(t);
    };
    const onAbort = () => {
      aborted = true;
      endGroup();
    };

    const finish = (code: number | null, signal: NodeJS.Signals | null, spawnError?: string) => {
      if (settled) return;
      settled = true;
      timers.forEach(clearTimeout);
      // The leader is gone; anything of its group still here has had its SIGTERM.
      if (pid !== undefined && groupAlive(pid)) killGroup(pid, 'SIGKILL');
      tree?.killEscaped();
      watchdog?.stop();
      if (pid !== undefined) liveRuns.delete(pid);
      spec.signal?.removeEventListener('abort', onAbort);
      if (spec.record) spec.record.records.remove(spec.record.name);
      const result: ProcessResult = {
        code,
        signal,
        timedOut,
        aborted,
        stdout: out.text,
        stderr: err.text,
        tail: tail.text,
        durationMs: Date.now() - started,
        escaped: tree?.escapedCount ?? 0,
        ...(spawnError ? { spawnError } : {}),
      };
      const resolveNow = () => resolve(transcriptError ? { ...result, transcriptError } : result);
      const done = () => (transcript ? transcript.end(resolveNow) : resolveNow());
      if (cgroup) void removeCgroupWhenEmpty(cgroup).then(done);
      else done();
    };

    // In its own process group (detached): a kill of the group reaches all it starts.
    let child: ChildProcess;
    try {
      child = spawn(file, args, {
        cwd: spec.cwd,
        env: token ? { ...env, [MARKER_VAR]: markerValue(env[MARKER_VAR], token) } : env,
        detached: true,
        stdio: [spec.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe', ...(hold ? (['pipe'] as const) : [])],
      });
    } catch (e) {
      // Refused before starting (a NUL byte in an argument): this command's error, not the caller's.
      return finish(null, null, (e as Error).message);
    }
    if (spec.stdin !== undefined) {
      child.stdin!.on('error', () => undefined); // the program may not read its input: EPIPE
      child.stdin!.end(spec.stdin);
    }
    child.on('error', (e) => finish(null, null, e.message));
    if (spec.timeoutMs !== undefined) {
      const t = setTimeout(() => {
        timedOut = true;
        if (pid === undefined) finish(null, null, 'not started within its time limit');
        else endGroup();
      }, spec.timeoutMs);
      timers.push(t);
    }
    if (child.pid !== undefined) begin();
    else child.on('spawn', begin);

    function begin(): void {
      if (pid !== undefined) return;
      // Started after the run was given up (its time limit): it ends at once.
      if (settled) return void killGroup(child.pid!, 'SIGKILL');
      pid = child.pid!;
      // Held on fd 3 until moved, recorded and watched; its output and exit are followed from
      // now, so a kill while it waits (a time limit, an abort) ends the run as any other.
      follow();
      if (cgroup) void moveIntoCgroup(cgroup, pid).then(release);
      else release(true);
    }

    function release(moved: boolean): void {
      if (settled) return;
      if (cgroup && !moved) {
        // Not movable after all: the marker alone finds what leaves the group.
        removeCgroup(cgroup);
        cgroup = undefined;
      }
      tree = token ? new ProcessTree(pid!, token, cgroup) : undefined;
      watched(
        tree && spec.timeoutMs !== undefined
          ? startWatchdog({
              pgid: pid!,
              token: tree.token,
              cgroup,
              timeoutMs: spec.timeoutMs,
              graceMs: grace,
              endWithController: spec.endWithController,
            })
          : undefined,
      );
    }

    /**
     * Watched (or not: no time limit, no watchdog to start): recorded with its watchdog, then the
     * watchdog begins, then the command: a kill between two steps leaves each either recorded
     * or ended by itself (its fd 3 closed with the controller).
     */
    function watched(started: Watchdog | undefined): void {
      watchdog = started;
      liveRuns.set(pid!, { tree, watchdog, cgroup });
      if (spec.record) {
        const tracking = { marker: token!, cgroup, watchdog: watchdog && { pid: watchdog.pid, identity: watchdog.identity } };
        spec.record.records.add(spec.record.name, pid!, spec.record.label, tracking);
      }
      watchdog?.release();
      spec.onSpawn?.(pid!);
      // Moved, recorded and watched: the command may start.
      if (child.stdio[3]) {
        const go = child.stdio[3] as Writable;
        go.on('error', () => undefined);
        go.end('\n');
      }
    }

    function follow(): void {
      const decoders = [new StringDecoder('utf8'), new StringDecoder('utf8')];
      const onData = (which: 0 | 1) => (chunk: Buffer) => {
        const text = decoders[which]!.write(chunk);
        if (!text) return;
        (which === 0 ? out : err).push(text);
        tail.push(text);
        transcript?.write(text);
        spec.onOutput?.(text);
      };
      child.stdout!.on('data', onData(0));
      child.stderr!.on('data', onData(1));

      if (spec.signal) {
        if (spec.signal.aborted) onAbort();
        else spec.signal.addEventListener('abort', onAbort, { once: true });
      }

      let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
      child.on('exit', (code, signal) => {
        exit = { code, signal };
        // Whatever the leader left behind in its group goes with it.
        endGroup();
        // A process that escaped the group may still hold our pipes: do not wait for it forever.
        const t = setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          finish(code, signal);
        }, grace + 1000);
        t.unref();
        timers.push(t);
      });
      child.on('close', (code, signal) => finish(exit?.code ?? code, exit?.signal ?? signal));
    }
  });
}

/** Keeps the last `limit` characters of a stream. */
class Capture {
  private parts: string[] = [];
  private size = 0;

  constructor(private readonly limit: number) {}

  push(text: string): void {
    this.parts.push(text);
    this.size += text.length;
    if (this.size > this.limit * 2) this.compact();
  }

  private compact(): void {
    const all = this.parts.join('');
    const kept = all.slice(-this.limit);
    this.parts = [kept];
    this.size = kept.length;
  }

  get text(): string {
    const all = this.parts.join('');
    return all.length > this.limit ? all.slice(-this.limit) : all;
  }
}
