// Every process of a task carries _LAUNCHPAD_PROC=<token> in its environment, and everything it
// starts inherits it, even a process that left the task's process group (setsid, a shell's job
// control). On Linux /proc/<pid>/environ shows it, so such processes can still be found. A
// process that clears its environment is not found this way (a cgroup finds it). A Launchpad
// run inside a task adds its own token after the inherited ones, so the outer task still finds
// its inner tasks' processes.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** Launchpad's own, not part of the agent's contract (whose variables are LAUNCHPAD_*). */
export const MARKER_VAR = '_LAUNCHPAD_PROC';

export function newMarkerToken(): string {
  return randomBytes(12).toString('hex');
}

/** The marker value for a new run: the inherited tokens, then its own. */
export function markerValue(inherited: string | undefined, token: string): string {
  return inherited ? `${inherited} ${token}` : token;
}

/** Processes can be found by their environment here (Linux, with /proc). */
export function canScanEnvironments(): boolean {
  return process.platform === 'linux' && existsSync('/proc/self/environ');
}

/** Live processes (other than this one) whose _LAUNCHPAD_PROC holds `token`. */
export function markedPids(token: string): number[] {
  if (!canScanEnvironments()) return [];
  const prefix = Buffer.from(`${MARKER_VAR}=`);
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    let environ: Buffer;
    try {
      environ = readFileSync(`/proc/${name}/environ`);
    } catch {
      continue; // gone, or not ours to read (then not ours to signal either)
    }
    if (markerOf(environ, prefix)?.split(' ').includes(token)) found.push(pid);
  }
  return found;
}

/** The value of the NUL-separated `NAME=` item of an environ block. */
function markerOf(environ: Buffer, name: Buffer): string | undefined {
  for (let at = environ.indexOf(name); at !== -1; at = environ.indexOf(name, at + 1)) {
    if (at !== 0 && environ[at - 1] !== 0) continue;
    const end = environ.indexOf(0, at);
    return environ.toString('utf8', at + name.length, end === -1 ? environ.length : end);
  }
  return undefined;
}

/** The process group of a live process (Linux), undefined when it is gone. */
export function processGroupOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command name (which may hold spaces and parentheses): state, ppid, pgrp.
    const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
    return Number.isInteger(pgrp) ? pgrp : undefined;
  } catch {
    return undefined;
  }
}
