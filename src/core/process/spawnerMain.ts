// The spawner process (spawner.ts starts it): it starts short commands for a large process and
// relays their output and exit over IPC. Its own memory stays small and idle, so a fork from it
// is cheap where a fork from the large process is not (see spawner.ts). It has no rules of its
// own: runProcess keeps the process group, the time limit and the kill, by pid, as for a child.
// It ends with its parent: the IPC channel closing ends it; the signals a terminal or a process
// group sends do not, so a controller that stops gracefully can still run its git commands.
import { type ChildProcess, spawn } from 'node:child_process';
import type { Writable } from 'node:stream';

import type { SpawnerReply, SpawnerRequest } from './spawnerProtocol';

const children = new Map<number, ChildProcess>();
const send = (reply: SpawnerReply) => {
  if (process.connected) process.send!(reply);
};

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => undefined);
process.on('disconnect', () => process.exit(0));

process.on('message', (request: SpawnerRequest) => {
  if (request.t === 'release') {
    const hold = children.get(request.id)?.stdio[3] as Writable | null | undefined;
    hold?.end('\n');
    return;
  }
  if (request.t === 'close-pipes') {
    const child = children.get(request.id);
    child?.stdout?.destroy();
    child?.stderr?.destroy();
    return;
  }
  const { id } = request;
  let child: ChildProcess;
  try {
    child = spawn(request.file, request.args, {
      cwd: request.cwd,
      env: request.env,
      detached: true,
      stdio: [request.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe', ...(request.hold ? (['pipe'] as const) : [])],
    });
  } catch (e) {
    // Refused before starting (a NUL byte in an argument): that command's error, not the helper's end.
    send({ t: 'error', id, message: (e as Error).message });
    return;
  }
  // The command may have ended before its release (it was killed): nothing to write to then.
  (child.stdio[3] as Writable | null | undefined)?.on('error', () => undefined);
  child.on('error', (e) => {
    children.delete(id);
    send({ t: 'error', id, message: e.message });
  });
  if (child.pid === undefined) return;
  children.set(id, child);
  send({ t: 'spawn', id, pid: child.pid });
  child.stdout!.on('data', (data: Buffer) => send({ t: 'out', id, fd: 1, data }));
  child.stderr!.on('data', (data: Buffer) => send({ t: 'out', id, fd: 2, data }));
  if (request.stdin !== undefined) {
    child.stdin!.on('error', () => undefined); // the program may not read its input: EPIPE
    child.stdin!.end(request.stdin);
  }
  child.on('exit', (code, signal) => send({ t: 'exit', id, code, signal }));
  child.on('close', (code, signal) => {
    children.delete(id);
    send({ t: 'close', id, code, signal });
  });
});

send({ t: 'ready' });
