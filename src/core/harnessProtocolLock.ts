// The lock of the shell protocol Launchpad's files come from: an agent following it by hand in
// the same state root takes `mkdir /tmp/harness-<first 16 hex of sha256(state root)>.lock` and
// writes its pid into `pid` there. Launchpad respects such a lock while its holder lives, but
// never takes, reclaims or removes it: it is not ours. A dead holder's lock is simply ignored.
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

import type { LockHolder } from './lock';
import { isSameProcessAlive, processStartTimeMs } from './processIdentity';

/** The protocol writes its lock under /tmp itself, whatever TMPDIR says. */
const LOCK_PARENT = '/tmp';

/** A lock directory this young without its pid file is being created by its holder. */
const CREATING_GRACE_MS = 5000;

/**
 * Start times are read to the second (and the boot time behind them can drift a little), so a
 * process is only taken for a reuse of the pid when it started clearly after the pid was written.
 */
const START_TIME_SLACK_MS = 5000;

export function harnessProtocolLockDir(stateRoot: string): string {
  const hash = createHash('sha256').update(stateRoot).digest('hex').slice(0, 16);
  return join(LOCK_PARENT, `harness-${hash}.lock`);
}

export interface HarnessProtocolHolder {
  lockDir: string;
  /** Undefined while the holder is still writing its pid file. */
  holder: LockHolder | undefined;
}

/**
 * The live holder of the protocol's lock for this state root, if any. The shell computes the
 * hash from its $PWD, which may go through a symbolic link, so both the path as given and its
 * real path are checked.
 */
export function liveHarnessProtocolHolder(stateRoot: string): HarnessProtocolHolder | undefined {
  if (process.platform === 'win32') return undefined;
  const roots = new Set([stateRoot]);
  try {
    roots.add(realpathSync(stateRoot));
  } catch {
    // A state root that does not exist (yet) has only the one name.
  }
  for (const root of roots) {
    const found = liveHolderOf(harnessProtocolLockDir(root));
    if (found) return found;
  }
  return undefined;
}

function liveHolderOf(lockDir: string): HarnessProtocolHolder | undefined {
  let dirTime: number;
  try {
    dirTime = statSync(lockDir).mtimeMs;
  } catch {
    return undefined;
  }
  let text: string;
  let written: number;
  try {
    const pidFile = join(lockDir, 'pid');
    written = statSync(pidFile).mtimeMs;
    text = readFileSync(pidFile, 'utf8').trim();
  } catch {
    return Date.now() - dirTime < CREATING_GRACE_MS ? { lockDir, holder: undefined } : undefined;
  }
  if (!/^\d+$/.test(text)) return Date.now() - written < CREATING_GRACE_MS ? { lockDir, holder: undefined } : undefined;
  const pid = Number(text);
  if (!isSameProcessAlive(pid, undefined)) return undefined;
  const started = processStartTimeMs(pid);
  if (started !== undefined && started > written + START_TIME_SLACK_MS) return undefined;
  return {
    lockDir,
    holder: { pid, host: hostname(), command: 'an agent following the harness protocol', acquired_at: new Date(written).toISOString() },
  };
}
