// Whole-file replacement for the files under .agent-os/: the new text goes to `<file>.tmp`, is
// flushed, and renamed over the file, so a reader (or a crash) never sees half a file. An
// existing file's permissions are kept (tasks.md is a person's file).
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

import { rmdirIfEmpty } from '../fsQuiet';
import { acquireLock, type LockHandle } from '../lock';
import { TRANSACTION_WAIT_MS } from '../taskFile/store';
import type { JournalPaths } from './journalPaths';

export function replaceFile(path: string, content: string | Buffer): void {
  mkdirSync(dirname(path), { recursive: true });
  let mode: number | undefined;
  try {
    mode = statSync(path).mode & 0o7777;
  } catch {
    // A new file: the default mode.
  }
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w', mode);
  try {
    writeFileSync(fd, content);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  renameSync(tmp, path);
}

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
