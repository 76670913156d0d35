// The two helpers a large process can start its processes from (spawner.ts decides which, and
// when): spawnerMain.py under python3, which starts each process with posix_spawn, and
// spawnerMain.js under node, where python3 is missing or fails. Both speak the requests and
// replies of spawnerProtocol.ts; each ends when this process does.
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';

import { encodeBaseEnv, encodeRequest, ReplyReader, type SpawnerReply, type SpawnerRequest } from './spawnerProtocol';

export type HelperKind = 'python' | 'node';

export interface Helper {
  readonly kind: HelperKind;
  readonly pid: number | undefined;
  send(request: SpawnerRequest): void;
  /** Ends it: its input closes, and it exits. */
  stop(): void;
  /** Keeps this process alive for the helper's replies (commands in flight), or not (idle). */
  hold(held: boolean): void;
}

export const HELPER_SCRIPTS: Record<HelperKind, string> = { python: 'spawnerMain.py', node: 'spawnerMain.js' };

/** False where the helper's script is not beside this code (a copied bundle). */
export function helperShipped(kind: HelperKind): boolean {
  return existsSync(join(__dirname, HELPER_SCRIPTS[kind]));
}

/**
 * Starts a helper. `lost` is called once when it ends or cannot start (python3 missing, too old):
 * a 'spawn' error or an exit, whichever comes first.
 */
export function startHelper(kind: HelperKind, receive: (reply: SpawnerReply) => void, lost: () => void): Helper {
  const script = join(__dirname, HELPER_SCRIPTS[kind]);
  return kind === 'python' ? pythonHelper(script, receive, lost) : nodeHelper(script, receive, lost);
}

function nodeHelper(script: string, receive: (reply: SpawnerReply) => void, lost: () => void): Helper {
  // Node's own binary as node (in the editor it is the editor's, which needs the variable).
  const proc = fork(script, [], {
    execArgv: [],
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    serialization: 'advanced',
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  proc.on('message', receive);
  onEnd(proc, 'exit', lost);
  return {
    kind: 'node',
    pid: proc.pid,
    send: (request) => void proc.send(request),
    stop: () => proc.connected && proc.disconnect(),
    hold: (held) => {
      for (const handle of [proc, proc.channel]) {
        if (held) handle?.ref();
        else handle?.unref();
      }
    },
  };
}

function pythonHelper(script: string, receive: (reply: SpawnerReply) => void, lost: () => void): Helper {
  // -I: none of the user's PYTHON* variables or site packages; -S: no site module (faster start).
  const proc = spawn('python3', ['-I', '-S', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  // Sent, not inherited: a launcher (pyenv's shim) may have changed python3's own environment.
  const base = { ...process.env };
  const reader = new ReplyReader();
  const input = proc.stdin as Socket;
  const output = proc.stdout as Socket;
  input.on('error', () => undefined); // it is gone: its exit says so
  input.write(encodeBaseEnv(base));
  output.on('data', (chunk: Buffer) => {
    for (const reply of reader.read(chunk)) receive(reply);
  });
  // Once its last replies are read: 'close' comes after its output's end, 'exit' may not.
  onEnd(proc, 'close', lost);
  return {
    kind: 'python',
    pid: proc.pid,
    send: (request) => void input.write(encodeRequest(request, base)),
    stop: () => input.end(),
    hold: (held) => {
      for (const handle of [proc, input, output]) {
        if (held) handle.ref();
        else handle.unref();
      }
    },
  };
}

function onEnd(proc: ChildProcess, event: 'exit' | 'close', lost: () => void): void {
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    lost();
  };
  proc.on('error', end);
  proc.on(event, end);
}
