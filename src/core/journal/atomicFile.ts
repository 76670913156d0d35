// The journal's files under .agent-os/: written whole (`core/atomicFile.ts`, which keeps an
// existing file's permissions: tasks.md is a person's file), read-modified-written under one lock.
import { statSync } from 'node:fs';

import { rmdirIfEmpty } from '../fsQuiet';
import { acquireLock, type LockHandle } from '../lock';
import { TRANSACTION_WAIT_MS } from '../taskFile/store';
import type { JournalPaths } from './journalPaths';

/**
 * One read-modify-write of files under .agent-os/, under the journal lock (an mkdir lock in
 * .launchpad/, like the state lock). `.launchpad/` is taken away again when the lock was all it held.
 */
export async function withJournalLock<T>(paths: JournalPaths, command: string, work: () => T | Promise<T>): Promise<T> {
  const artefacts = paths.state.artefacts;
  let hadArtefacts = true;
  try {
    statSync(artefacts);
  } catch {
    hadArtefacts = false;
  }
  const lock: LockHandle = await acquireLock(paths.lock, command, TRANSACTION_WAIT_MS);
  try {
    return await work();
  } finally {
    lock.release();
    if (!hadArtefacts) rmdirIfEmpty(artefacts);
  }
}
