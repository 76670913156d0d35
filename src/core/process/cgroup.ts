// A cgroup (v2) per task process where this machine lets us make one: the kernel keeps every
// descendant in it whatever it does to its process group, session or environment, and
// cgroup.kill ends them all at once. That needs the cgroup2 hierarchy writable at our own
// cgroup (root without a read-only cgroupfs, or a subtree systemd delegated to us); the probe
// makes one and moves a process into it, once per process. Where it fails: no cgroups, and the
// environment marker finds what left the process group.
import { spawnSync } from 'node:child_process';
import { closeSync, constants, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmdirSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';

import { newMarkerToken } from './environmentMarker';

/**
 * Run by /bin/sh with "$@" = the command: it waits for a line on fd 3, which the parent writes
 * once it has moved the shell into the cgroup (moveIntoCgroup), then becomes the command; so
 * nothing the command starts is ever outside, and the parent knows whether the move worked.
 * No line (the parent died first): the command never starts.
 */
export const AWAIT_CGROUP_AND_EXEC = 'read _ <&3 || exit 125; exec 3<&-; exec "$@"';

/**
 * Moves a process into the cgroup; false when it could not. Off the event loop: where the cgroup2
 * mount lacks `favordynmods`, the kernel waits out an RCU grace period for each move (10-40 ms
 * seen on a 2-core machine), which would otherwise stall everything else the process does.
 */
export async function moveIntoCgroup(dir: string, pid: number): Promise<boolean> {
  try {
    const file = await open(join(dir, 'cgroup.procs'), constants.O_WRONLY);
    try {
      await file.write(String(pid));
    } finally {
      await file.close();
    }
    return true;
  } catch {
    return false;
  }
}

let parent: string | null | undefined; // undefined until probed; null when unusable
let enabled = true;

/** For tests of the fallback: pretend cgroups cannot be made. */
export function setCgroupsEnabled(on: boolean): void {
  enabled = on;
}

export function cgroupsAvailable(): boolean {
  return enabled && cgroupParent() !== null;
}

/** Where run cgroups are made (our own cgroup), when they can be. */
export function runCgroupsParent(): string | undefined {
  return cgroupsAvailable() ? cgroupParent()! : undefined;
}

/** A new, empty cgroup below ours for one run; undefined when cgroups are not available. */
export function createRunCgroup(): string | undefined {
  if (!cgroupsAvailable()) return undefined;
  const dir = join(cgroupParent()!, `launchpad-${process.pid}-${newMarkerToken()}`);
  try {
    mkdirSync(dir);
    return dir;
  } catch {
    return undefined;
  }
}

/** A cgroup directory (a path read from a record may name anything). */
export function isCgroup(dir: string): boolean {
  return existsSync(join(dir, 'cgroup.procs'));
}

/** Processes in the cgroup and in any cgroup below it (a nested Launchpad makes its own). */
export function cgroupPids(dir: string): number[] {
  let pids: number[];
  try {
    pids = readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
  for (const sub of subgroups(dir)) pids.push(...cgroupPids(sub));
  return pids;
}

/** SIGKILLs everything in the cgroup and below (cgroup.kill; signal by signal before Linux 5.14). */
export function killCgroup(dir: string): void {
  try {
    // Never created: a directory that is not a cgroup gets no file.
    const fd = openSync(join(dir, 'cgroup.kill'), constants.O_WRONLY);
    try {
      writeSync(fd, '1');
    } finally {
      closeSync(fd);
    }
    return;
  } catch {
    // no cgroup.kill: kill what is listed, again while new processes appear
  }
  for (let pass = 0; pass < 10; pass++) {
    const pids = cgroupPids(dir);
    if (!pids.length) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  }
}

/** Removes the cgroup (and any below it); false while a process is still in it. */
export function removeCgroup(dir: string): boolean {
  for (const sub of subgroups(dir)) removeCgroup(sub);
  try {
    rmdirSync(dir);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/** Killed processes leave their cgroup within moments: waits that long (up to 2 s) to remove it. */
export async function removeCgroupWhenEmpty(dir: string): Promise<void> {
  for (let i = 0; i < 100 && !removeCgroup(dir); i++) await new Promise((r) => setTimeout(r, 20));
}

/** removeCgroupWhenEmpty for callers that cannot wait asynchronously (recovery, an exit at once). */
export function removeCgroupWhenEmptySync(dir: string): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let i = 0; i < 100 && !removeCgroup(dir); i++) Atomics.wait(pause, 0, 0, 20);
}

function subgroups(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(dir, e.name));
  } catch {
    return [];
  }
}

function cgroupParent(): string | null {
  if (parent === undefined) parent = probe();
  return parent;
}

function probe(): string | null {
  if (process.platform !== 'linux') return null;
  try {
    const own = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('0::'))
      ?.slice(3);
    const mount = cgroup2Mount();
    if (!own || !mount) return null;
    // Our cgroup's path is relative to the hierarchy's root; the mount may show a subtree of it.
    const root = mount.root === '/' ? '' : mount.root;
    if (own !== root && !own.startsWith(`${root}/`)) return null;
    const dir = join(mount.point, own.slice(root.length));
    removeStaleCgroups(dir);
    const test = join(dir, `launchpad-probe-${process.pid}-${newMarkerToken()}`);
    mkdirSync(test);
    try {
      const moved = spawnSync('/bin/sh', ['-c', 'echo $$ > "$0"', join(test, 'cgroup.procs')], { stdio: 'ignore' });
      return moved.status === 0 ? dir : null;
    } finally {
      removeCgroup(test);
    }
  } catch {
    return null;
  }
}

/**
 * Empty cgroups that a Launchpad process which is gone made here (killed before it could remove
 * them). One still holding a process is left to the recovery or watchdog that ends it.
 */
function removeStaleCgroups(dir: string): void {
  for (const name of readdirSync(dir)) {
    const creator = /^launchpad-(?:probe-)?(\d+)-[0-9a-f]+$/.exec(name)?.[1];
    if (creator && !pidAlive(Number(creator))) removeCgroup(join(dir, name));
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Where the cgroup2 hierarchy is mounted, from /proc/self/mountinfo. */
function cgroup2Mount(): { root: string; point: string } | undefined {
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    // id parent major:minor root mount-point options [optional fields...] - fstype source options
    const [before, after] = line.split(' - ');
    if (!after?.startsWith('cgroup2 ')) continue;
    const fields = before!.split(' ');
    return { root: unescapeMount(fields[3]!), point: unescapeMount(fields[4]!) };
  }
  return undefined;
}

/** mountinfo writes space, tab, newline and backslash as \ooo. */
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}
