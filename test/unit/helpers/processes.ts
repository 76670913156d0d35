import { readFileSync } from 'node:fs';

/** Alive as process.kill(pid, 0) says, a zombie (dead, not yet reaped) counting as dead. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Dead within a short grace for the kernel to deliver a signal and reap; no timing asserted. */
export async function dead(pid: number): Promise<boolean> {
  for (let i = 0; i < 500 && alive(pid); i++) await new Promise((r) => setTimeout(r, 10));
  return !alive(pid);
}
