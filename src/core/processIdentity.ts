// A pid alone is not an identity: after a crash the pid may belong to another process, and
// `kill -0` would call it alive. The identity adds the process's start time (and, on Linux,
// the boot id), so a reused pid never matches.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let bootId: string | undefined;

export function processIdentity(pid: number): string | undefined {
  if (process.platform === 'linux') {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Field 22 (starttime) counts after the command name, which may itself hold spaces.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      bootId ??= readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      return `${bootId}:${fields[19]}`;
    } catch {
      return undefined;
    }
  }
  const ps = spawnSync('ps', ['-o', 'lstart=', '-p', String(pid)], { encoding: 'utf8' });
  const out = ps.status === 0 ? ps.stdout.trim() : '';
  return out || undefined;
}

/** Alive and, when an identity was recorded, still the same process. */
export function isSameProcessAlive(pid: number, identity: string | undefined): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: alive but not ours to signal.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (!identity) return true;
  return processIdentity(pid) === identity;
}

/**
 * When the process started (ms since the epoch, to the second), or undefined when it cannot be
 * told. For a holder that recorded only a pid: a process that started after the pid was written
 * cannot be the one that wrote it.
 */
export function processStartTimeMs(pid: number): number | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  if (process.platform === 'linux') {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
      const btime = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1]);
      // Linux reports start times in USER_HZ ticks, which is 100 on every architecture.
      return Number.isFinite(ticks) && btime ? btime * 1000 + (ticks / 100) * 1000 : undefined;
    } catch {
      return undefined;
    }
  }
  const ps = spawnSync('ps', ['-o', 'lstart=', '-p', String(pid)], { encoding: 'utf8' });
  const time = ps.status === 0 ? Date.parse(ps.stdout.trim()) : NaN;
  return Number.isNaN(time) ? undefined : time;
}
