// harness-tasks.json on disk: read, atomic write with a backup, recovery from the backup, and
// read-modify-write transactions under the state lock. A reader never sees a partial file; a
// file that could not be parsed is never overwritten; a file a person changed is never replaced
// by the backup unless they ask (`restoreBackup`). Only a regular file is read or written: a
// symbolic link is written through to its target and stays a link. The parse of the bytes this
// store last read or wrote is kept (snapshot.ts): while the file holds exactly those bytes, a
// load copies it instead of parsing again, and a write serializes and checks only what changed.
import { createHash } from 'node:crypto';
import {
  accessSync,
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  fchmodSync,
  fstatSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  readSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
  writevSync,
  type Stats,
} from 'node:fs';
import { ExpectedError } from '../expectedErrors';
import { rmdirIfEmpty } from '../fsQuiet';
import { InputError } from '../inputError';
import { acquireLock, tryAcquireLock } from '../lock';
import { StatePaths, TASKS_FILE } from '../statePaths';
import { MAX_TASK_FILE_BYTES, parseTaskFile, parseTaskFileBytes, serializeTaskFile, TaskFileError, tooLargeProblem } from './parse';
import type { TaskFile } from './schema';
import { TaskFileSnapshot, type TaskFileEdit } from './snapshot';

export class TaskFileMissingError extends ExpectedError {
  constructor(readonly path: string) {
    super(`${TASKS_FILE}: not found in ${path.slice(0, -TASKS_FILE.length - 1) || '/'}; run "launchpad init" first`);
    this.name = 'TaskFileMissingError';
  }
}

export interface LoadedState {
  /** The caller's own copy: changing it changes nothing else. */
  file: TaskFile;
  /** The exact text read. */
  readonly text: string;
}

export type RecoveryOutcome =
  | { kind: 'ok' }
  | { kind: 'restored'; error: TaskFileError; corruptCopy: string }
  | {
      kind: 'unrecoverable';
      error: TaskFileError;
      /** No valid .bak; or the file is not what Launchpad last wrote, so a person's edit is not replaced. */
      reason: 'no-valid-backup' | 'changed-by-hand';
      /** For the person: why nothing was restored and what to do. */
      detail: string;
      /** One line for the progress log. */
      logMessage: string;
    };

export interface RestoredBackup {
  /** Why the file was broken. */
  error: TaskFileError;
  corruptCopy: string;
  file: TaskFile;
}

/** How long `add`, `retry` and the controller wait for another writer's transaction. */
export const TRANSACTION_WAIT_MS = 10_000;

export class StateStore {
  private queue: Promise<unknown> = Promise.resolve();
  /**
   * The file as this store last read or wrote it. Reused only while the file's bytes are exactly
   * these (a person's edit, another process's write, a restore: parsed afresh).
   */
  private snapshot: TaskFileSnapshot | undefined;

  constructor(
    readonly paths: StatePaths,
    /** Names the holder of the state lock: "launchpad run", "launchpad add". */
    private readonly command = 'launchpad',
  ) {}

  exists(): boolean {
    return existsSync(this.paths.tasks);
  }

  /** Reads and validates; throws TaskFileMissingError or TaskFileError. */
  load(): LoadedState {
    const bytes = this.readBytes();
    const file = this.snapshotOf(bytes).copy();
    let text: string | undefined;
    return {
      file,
      get text() {
        return (text ??= bytes.toString('utf8'));
      },
    };
  }

  /**
   * Atomic replace: current file → .bak (itself by rename), new text → .tmp, fsync, rename over.
   * Callers pass state they loaded and validated, so the .bak is always a valid file; the new
   * text is validated here too, so what Launchpad writes it can always read back (against the
   * last snapshot, only the tasks that changed go through the schema again).
   */
  save(file: TaskFile, text?: string): string {
    const edit = text === undefined && this.snapshot ? refuseInvalid(() => this.snapshot!.edit(file, true)!) : this.fullEdit(file, text);
    this.write(edit);
    return edit.text;
  }

  /** The file parsed whole, as it was written before there was a snapshot to compare with. */
  private fullEdit(file: TaskFile, text = serializeTaskFile(file)): TaskFileEdit {
    const checked = parseTaskFile(text, TASKS_FILE);
    if (!checked.ok) throw refusal(checked.error);
    const parts = [Buffer.from(text, 'utf8')];
    return { text, parts, next: new TaskFileSnapshot(parts, checked.file) };
  }

  /** The parse of `bytes`: the snapshot's when they are its bytes, else parsed (and kept). */
  private snapshotOf(bytes: Buffer): TaskFileSnapshot {
    if (this.snapshot?.matches(bytes)) return this.snapshot;
    const parsed = parseTaskFileBytes(bytes, TASKS_FILE);
    if (!parsed.ok) throw parsed.error;
    return (this.snapshot = new TaskFileSnapshot([bytes], parsed.file));
  }

  private write(edit: TaskFileEdit): void {
    const target = this.writeTarget();
    assertWritable(target, target !== this.paths.tasks);
    try {
      if (existsSync(target)) {
        const bakTmp = `${this.paths.backup}.tmp`;
        backupCopy(target, bakTmp);
        renameSync(bakTmp, this.paths.backup);
        // When .bak already was this very file (a save that stopped between here and its final
        // rename), the rename above is a no-op that leaves .bak.tmp behind.
        rmSync(bakTmp, { force: true });
      }
      this.replace(target, edit.parts);
    } catch (err) {
      throw writeError(err);
    }
    this.snapshot = edit.next;
  }

  /** Creates the file only if absent (never clobbers). Returns false when it already existed. */
  create(file: TaskFile): boolean {
    if (existsSync(this.paths.tasks)) return false;
    const text = serializeTaskFile(file);
    writeDurably(this.paths.tmp, text);
    try {
      // link fails if the target appeared meanwhile, unlike rename.
      linkSync(this.paths.tmp, this.paths.tasks);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    } finally {
      rmSync(this.paths.tmp, { force: true });
    }
    recordWrite(this.paths, text);
    return true;
  }

  /** The text of harness-tasks.json.bak when it is a valid task file. */
  validBackupText(): string | undefined {
    try {
      const bytes = readTaskFileBytes(this.paths.backup, `${TASKS_FILE}.bak`);
      return parseTaskFileBytes(bytes, `${TASKS_FILE}.bak`).ok ? bytes.toString('utf8') : undefined;
    } catch {
      return undefined;
    }
  }

  /** Whether `restoreBackup` would act: a regular file beside a valid .bak. */
  canRestoreBackup(): boolean {
    return isRegularFile(this.paths.tasks) && this.validBackupText() !== undefined;
  }

  /** Whether harness-tasks.json holds exactly the bytes Launchpad last wrote to it. */
  isLastWrite(bytes: Uint8Array): boolean {
    const recorded = lastWriteSha256(this.paths);
    return recorded !== undefined && recorded === sha256(bytes);
  }

  /**
   * Session start: a file that fails to parse or validate is replaced by a valid .bak, keeping
   * the broken file beside it, only when it is byte for byte what Launchpad itself last wrote.
   * A file a person changed is never replaced by an older backup; with no valid .bak, or a
   * person's edit, both files stay byte-for-byte.
   */
  recover(): RecoveryOutcome {
    let bytes: Buffer | undefined;
    let error: TaskFileError;
    try {
      bytes = this.readBytes();
      const parsed = parseTaskFileBytes(bytes, TASKS_FILE);
      if (parsed.ok) return { kind: 'ok' };
      error = parsed.error;
    } catch (err) {
      if (!(err instanceof TaskFileError)) throw err;
      error = err;
    }
    const fix = error.where ? `fix ${error.where} by hand` : 'fix it by hand';
    const backupText = this.validBackupText();
    if (backupText === undefined) {
      return {
        kind: 'unrecoverable',
        error,
        reason: 'no-valid-backup',
        detail: `no valid ${TASKS_FILE}.bak to restore from; both files were left as they are: ${fix}`,
        logMessage: `${TASKS_FILE} corrupted and unrecoverable`,
      };
    }
    if (bytes === undefined || !this.isLastWrite(bytes)) {
      return {
        kind: 'unrecoverable',
        error,
        reason: 'changed-by-hand',
        detail:
          `${TASKS_FILE} was changed since Launchpad last wrote it, so it is not replaced by the older ${TASKS_FILE}.bak ` +
          `(both files were left as they are): ${fix}, or run "launchpad restore-backup" to go back to the backup ` +
          `(the broken file is kept as ${TASKS_FILE}.corrupt-<time>)`,
        logMessage: `${TASKS_FILE} invalid (${error.where || 'not readable'}) and changed since Launchpad last wrote it: not restored from .bak`,
      };
    }
    const target = this.writeTarget();
    assertWritable(target, target !== this.paths.tasks);
    const corruptCopy = this.keepCorrupt();
    this.replace(target, backupText);
    return { kind: 'restored', error, corruptCopy };
  }

  /**
   * `launchpad restore-backup`: a person asks for the valid .bak in place of a file that cannot
   * be read, the broken file kept beside it. Refused while a run is live, when the file is
   * valid (nothing to restore), and when the backup is missing or invalid; then nothing changes.
   */
  async restoreBackup(): Promise<RestoredBackup> {
    const hadArtefacts = existsSync(this.paths.artefacts);
    const session = tryAcquireLock(this.paths.sessionLock, this.command);
    try {
      const lock = await acquireLock(this.paths.stateLock, this.command, TRANSACTION_WAIT_MS);
      try {
        let error: TaskFileError | undefined;
        try {
          this.load();
        } catch (err) {
          if (!(err instanceof TaskFileError)) throw err;
          error = err;
        }
        if (!error) throw new InputError(`${TASKS_FILE} is valid: nothing to restore (restore-backup only replaces a file that cannot be read)`);
        // A FIFO, a device, a directory: nothing to copy aside or to write over.
        if (!isRegularFile(this.paths.tasks)) throw error;
        const label = `${TASKS_FILE}.bak`;
        let bytes: Buffer;
        try {
          bytes = readTaskFileBytes(this.paths.backup, label);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new InputError(`no ${label} to restore from; nothing was changed`);
          throw err;
        }
        const backup = parseTaskFileBytes(bytes, label);
        if (!backup.ok) {
          const { field, problems, position } = backup.error;
          throw new TaskFileError(label, field, [...problems, 'the backup is not a valid task file either: nothing was restored, both files were left as they are'], position);
        }
        const target = this.writeTarget();
        assertWritable(target, target !== this.paths.tasks);
        const corruptCopy = this.keepCorrupt();
        this.replace(target, bytes.toString('utf8'));
        return { error, corruptCopy, file: backup.file };
      } finally {
        lock.release();
      }
    } finally {
      session.release();
      if (!hadArtefacts) rmdirIfEmpty(this.paths.artefacts);
    }
  }

  /** The file's bytes; a missing file is TaskFileMissingError, anything else wrong a TaskFileError. */
  private readBytes(): Buffer {
    try {
      return readTaskFileBytes(this.paths.tasks, TASKS_FILE);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new TaskFileMissingError(this.paths.tasks);
      throw err;
    }
  }

  /** Where a write goes: the file, or the file its symbolic link points to (the link stays). */
  private writeTarget(): string {
    try {
      if (lstatSync(this.paths.tasks).isSymbolicLink()) return realpathSync(this.paths.tasks);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return this.paths.tasks;
  }

  /** new text → .tmp beside the target, fsync, rename over the target; then the record of it. */
  private replace(target: string, text: string | readonly Uint8Array[]): void {
    const tmp = target === this.paths.tasks ? this.paths.tmp : `${target}.tmp`;
    let mode: number | undefined;
    try {
      mode = statSync(target).mode & 0o7777;
    } catch {
      // a new file: the default mode
    }
    writeDurably(tmp, text, mode);
    renameSync(tmp, target);
    recordWrite(this.paths, text);
  }

  /** The broken file copied to harness-tasks.json.corrupt-<time>, never over another copy. */
  private keepCorrupt(): string {
    const corruptCopy = `${this.paths.tasks}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    copyFileSync(this.paths.tasks, corruptCopy, constants.COPYFILE_EXCL);
    return corruptCopy;
  }

  /**
   * One read-modify-write under the state lock. `mutate` edits the freshly loaded file (its own
   * copy) in place and returns a result; the file is written only when the mutation changed its
   * text. Transactions from this process are queued so they never wait on their own lock.
   */
  transact<T>(mutate: (file: TaskFile) => T): Promise<T> {
    const run = async () => {
      const hadArtefacts = existsSync(this.paths.artefacts);
      const lock = await acquireLock(this.paths.stateLock, this.command, TRANSACTION_WAIT_MS);
      try {
        const base = this.snapshotOf(this.readBytes());
        const file = base.copy();
        const result = mutate(file);
        const edit = refuseInvalid(() => base.edit(file));
        if (edit) this.write(edit);
        return result;
      } finally {
        lock.release();
        // The lock made .launchpad/: take it away again if the lock was all it held.
        if (!hadArtefacts) rmdirIfEmpty(this.paths.artefacts);
      }
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

/**
 * The file's bytes, read only from a regular file (a symbolic link to one is followed) and never
 * more than MAX_TASK_FILE_BYTES of them: a FIFO would block the read (and every command after
 * it, the lock held), a device such as /dev/zero reports size 0 and never ends, and past 512 MiB
 * node cannot even make a string. A missing file throws the ENOENT error as it is.
 */
export function readTaskFileBytes(path: string, label: string): Buffer {
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
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(1 << 20, MAX_TASK_FILE_BYTES + 1 - total));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      total += n;
      // Grown since fstat: the bound holds whatever the size said.
      if (total > MAX_TASK_FILE_BYTES) throw refuse(tooLargeProblem());
    }
    return Buffer.concat(chunks, total);
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

function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function notRegularProblem(path: string, st: Stats): string {
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

/**
 * A file without write permission is one a person protected: it is not replaced (a rename would
 * replace it anyway, and root may write anything, so the mode bits are checked as well).
 */
function assertWritable(target: string, throughLink: boolean): void {
  let st: Stats;
  try {
    st = statSync(target);
  } catch {
    return; // a new file
  }
  if (!st.isFile()) throw new TaskFileError(TASKS_FILE, '', [notRegularProblem(target, st)]);
  let writable = (st.mode & 0o222) !== 0;
  try {
    accessSync(target, constants.W_OK);
  } catch {
    writable = false;
  }
  if (!writable) {
    const which = throughLink ? ` (${target}, where its symbolic link points)` : '';
    throw new TaskFileError(TASKS_FILE, '', [
      `has no write permission${which}, so Launchpad does not replace it; nothing was changed. Make it writable (chmod u+w) to let add, retry and run change it`,
    ]);
  }
}

/** A change the schema refuses: nothing is written, and the error says so. */
function refusal(error: TaskFileError): TaskFileError {
  return new TaskFileError(TASKS_FILE, error.field, error.problems.map((p) => `not written, the change would make it invalid: ${p}`));
}

function refuseInvalid<T>(edit: () => T): T {
  try {
    return edit();
  } catch (err) {
    throw err instanceof TaskFileError ? refusal(err) : err;
  }
}

/** A file system refusal while writing, as bad input rather than an internal error. */
function writeError(err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code && ['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT'].includes(code)) {
    return new TaskFileError(TASKS_FILE, '', [`cannot be written (${(err as Error).message}); the file was left as it was`]);
  }
  return err;
}

function sha256(data: Uint8Array | string | readonly Uint8Array[]): string {
  const hash = createHash('sha256');
  for (const part of typeof data === 'string' || !Array.isArray(data) ? [data as Uint8Array | string] : data) hash.update(part);
  return hash.digest('hex');
}

/**
 * Records what Launchpad wrote to harness-tasks.json (its sha256) in the artefact folder, so a
 * broken file can be told apart: Launchpad's own write may be replaced by the backup, a
 * person's edit never. Tmp and rename, like the file itself. Best effort: without a record a
 * broken file counts as a person's, which only means it is not restored automatically.
 */
export function recordWrite(paths: StatePaths, text: Uint8Array | string | readonly Uint8Array[]): void {
  try {
    mkdirSync(paths.artefacts, { recursive: true });
    const tmp = `${paths.taskFileRecord}.tmp`;
    writeFileSync(tmp, JSON.stringify({ sha256: sha256(text), written_at: new Date().toISOString() }) + '\n');
    renameSync(tmp, paths.taskFileRecord);
  } catch {
    // see above
  }
}

function lastWriteSha256(paths: StatePaths): string | undefined {
  try {
    const record = JSON.parse(readFileSync(paths.taskFileRecord, 'utf8')) as { sha256?: unknown };
    return typeof record.sha256 === 'string' ? record.sha256 : undefined;
  } catch {
    return undefined;
  }
}

/** Every byte of `parts`, in order: writev a batch at a time, the rest of a short write again. */
function writeAll(fd: number, parts: readonly Uint8Array[]): void {
  const BATCH = 1024; // IOV_MAX on Linux and macOS
  for (let i = 0; i < parts.length; ) {
    const batch = parts.slice(i, i + BATCH) as Uint8Array[];
    let written = writevSync(fd, batch);
    i += batch.length;
    // A short write (rare on a regular file): finish this batch part by part.
    for (const part of batch) {
      if (written >= part.length) {
        written -= part.length;
        continue;
      }
      for (let done = written; done < part.length; ) done += writeSync(fd, part, done, part.length - done);
      written = 0;
    }
  }
}

/**
 * `to` gets the bytes of `from` as they are now. The file is only ever replaced by rename,
 * never written in place, so a hard link to the current inode is that copy: the rename that
 * follows leaves the old inode to the backup alone, without copying megabytes. Where links
 * are not possible (some file systems, a symbolic link), a real copy.
 */
function backupCopy(from: string, to: string): void {
  rmSync(to, { force: true });
  try {
    if (lstatSync(from).isFile()) {
      linkSync(from, to);
      return;
    }
  } catch {
    // EPERM, ENOTSUP, EXDEV …: copy instead.
  }
  copyFileSync(from, to);
}

function writeDurably(path: string, text: string | readonly Uint8Array[], mode?: number): void {
  const fd = openSync(path, 'w');
  try {
    // A replaced file keeps its permissions (0600 stays 0600).
    if (mode !== undefined) fchmodSync(fd, mode);
    writeAll(fd, typeof text === 'string' ? [Buffer.from(text, 'utf8')] : text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

