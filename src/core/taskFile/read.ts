// Reading harness-tasks.json, for whoever only looks at it (the editor's views, a report): the
// bytes of a regular file, bounded, parsed by parse.ts. What writes it, and keeps the parse of
// the bytes it last read or wrote, is store.ts.
import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, readSync, type Stats, statSync } from 'node:fs';

import { ExpectedError } from '../expectedErrors';
import { type StatePaths, TASKS_FILE } from '../statePaths';
import { MAX_TASK_FILE_BYTES, parseTaskFileBytes, TaskFileError, tooLargeProblem } from './parse';
import type { TaskFile } from './schema';

export class TaskFileMissingError extends ExpectedError {
  constructor(readonly path: string) {
    super(`${TASKS_FILE}: not found in ${path.slice(0, -TASKS_FILE.length - 1) || '/'}; run "launchpad init" first`);
    this.name = 'TaskFileMissingError';
  }
}

export interface ReadTaskFile {
  file: TaskFile;
  /** The bytes it was parsed from. */
  bytes: Buffer;
}

/**
 * The task file as it is on disk: TaskFileMissingError when there is none, TaskFileError when it
 * cannot be used. `last` is the previous read: while the file holds the same bytes, its parse is
 * returned again instead of parsing the file anew (callers do not change it).
 */
export function readTaskFile(paths: StatePaths, last?: ReadTaskFile): ReadTaskFile {
  let bytes: Buffer;
  try {
    bytes = readTaskFileBytes(paths.tasks, TASKS_FILE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new TaskFileMissingError(paths.tasks);
    throw err;
  }
  if (last?.bytes.equals(bytes)) return last;
  const parsed = parseTaskFileBytes(bytes, TASKS_FILE);
  if (!parsed.ok) throw parsed.error;
  return { file: parsed.file, bytes };
}

/**
 * The file's bytes, read only from a regular file (a symbolic link to one is followed) and never
 * more than MAX_TASK_FILE_BYTES of them: a FIFO would block the read (and every command after
 * it, the lock held), a device such as /dev/zero reports size 0 and never ends, and past 512 MiB
 * node cannot even make a string. A missing file throws the ENOENT error as it is. With
 * `reuse`, the bytes are read into its buffer (grown when too small) and the result is a view of
 * it, valid until the next read into it: no allocation per read of a file that fits.
 */
export function readTaskFileBytes(path: string, label: string, reuse?: { buffer?: Buffer }): Buffer {
  const refuse = (problem: string) => new TaskFileError(label, '', [problem]);
  let st: Stats;
  try {
    st = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && isSymbolicLink(path)) throw refuse(`is a symbolic link to ${readlinkSync(path)}, which does not exist`);
    if (code === 'ELOOP') throw refuse('is a symbolic link that loops');
    if (code === 'EACCES') throw refuse('cannot be read: permission denied');
    throw err;
  }
  if (!st.isFile()) throw refuse(notRegularProblem(path, st));
  if (st.size > MAX_TASK_FILE_BYTES) throw refuse(tooLargeProblem(st.size));
  let fd: number;
  try {
    // Non-blocking: should a FIFO take the file's place after the check, opening it does not wait.
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EACCES') throw refuse('cannot be read: permission denied');
    throw err;
  }
  try {
    const now = fstatSync(fd);
    if (!now.isFile()) throw refuse(notRegularProblem(path, now));
    // One byte more than the size says, so the end is seen without growing the buffer.
    const want = Math.min(Math.max(now.size + 1, 4096), MAX_TASK_FILE_BYTES + 1);
    let buffer = reuse?.buffer && reuse.buffer.length >= want ? reuse.buffer : Buffer.allocUnsafe(want);
    let total = 0;
    for (;;) {
      if (total === buffer.length) {
        // Grown since fstat: the bound holds whatever the size said.
        const bigger = Buffer.allocUnsafe(Math.min(buffer.length * 2, MAX_TASK_FILE_BYTES + 1));
        buffer.copy(bigger, 0, 0, total);
        buffer = bigger;
      }
      const n = readSync(fd, buffer, total, buffer.length - total, null);
      if (n === 0) break;
      total += n;
      if (total > MAX_TASK_FILE_BYTES) throw refuse(tooLargeProblem());
    }
    if (reuse) reuse.buffer = buffer;
    return buffer.subarray(0, total);
  } finally {
    closeSync(fd);
  }
}

function isSymbolicLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

export function notRegularProblem(path: string, st: Stats): string {
  const kind = st.isDirectory()
    ? 'a directory'
    : st.isFIFO()
      ? 'a FIFO (named pipe)'
      : st.isCharacterDevice()
        ? 'a character device'
        : st.isBlockDevice()
          ? 'a block device'
          : st.isSocket()
            ? 'a socket'
            : 'not a file';
  if (isSymbolicLink(path)) return `is a symbolic link to ${readlinkSync(path)}, ${kind}, not a regular file`;
  // The words a directory has always been refused with.
  if (st.isDirectory()) return 'is a directory, not a file';
  return `is ${kind}, not a regular file; Launchpad reads and writes only a regular file (or a symbolic link to one)`;
}
