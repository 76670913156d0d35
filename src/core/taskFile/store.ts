// harness-tasks.json on disk: read, atomic write with a backup, recovery from the backup, and
// read-modify-write transactions under the state lock. A reader never sees a partial file; a
// file that could not be parsed is never overwritten; a file a person changed is never replaced
// by the backup unless they ask (`restoreBackup`). Only a regular file is read or written: a
// symbolic link is written through to its target and stays a link. The parse of the bytes last
// read or written is kept (snapshot.ts), one per file for the whole process: while the file holds
// exactly those bytes, a load copies it instead of parsing again, and a write serializes and
// checks only what changed.
import { createHash } from 'node:crypto';
import {
  accessSync,
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  fchmodSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';

import { rmdirIfEmpty } from '../fsQuiet';
import { InputError } from '../inputError';
import { acquireLock, tryAcquireLock } from '../lock';
import { StatePaths, TASKS_FILE } from '../statePaths';
import { FileDigest } from './fileDigest';
import { parseTaskFile, parseTaskFileBytes, serializeTaskFile, TaskFileError } from './parse';
import { notRegularProblem, readTaskFileBytes, TaskFileMissingError } from './read';
import type { TaskFile } from './schema';
import { type TaskFileEdit, TaskFileSnapshot } from './snapshot';

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

/** How long `add`, `retry` and the other commands wait for another writer's transaction. */
export const TRANSACTION_WAIT_MS = 10_000;

/**
 * How long a run waits for the state lock: far longer than a command, so a person's commands in
 * a loop beside it (add, edit, retry) delay its writes but never stop it. A lock held longer is
 * a stuck holder: the machine's failure, not the tasks'.
 */
export const RUN_TRANSACTION_WAIT_MS = 10 * 60_000;

/**
 * The task file as this process last read or wrote it, by path: every StateStore of the process
 * shares it (the controller's writes are what the journal's and the views' stores read next).
 * A snapshot is used only for the exact bytes it holds: a person's edit, another process's
 * write, a restore are parsed afresh.
 */
const snapshots = new Map<string, TaskFileSnapshot>();

/** The sha256 of each task file as this process writes it, from where it changed (fileDigest.ts). */
const digests = new Map<string, FileDigest>();

/** Where load and transact read the file: one buffer for the process, its bytes compared in place. */
const readBuffer: { buffer?: Buffer } = {};

export class StateStore {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly paths: StatePaths,
    /** Names the holder of the state lock: "launchpad run", "launchpad add". */
    private readonly command = 'launchpad',
    /** false: parse the whole file on every read and check every write whole (no snapshot). */
    private readonly reuseParse = true,
    /** How long a transaction waits for the state lock. */
    private readonly lockWaitMs = TRANSACTION_WAIT_MS,
  ) {}

  private get snapshot(): TaskFileSnapshot | undefined {
    return this.reuseParse ? snapshots.get(this.paths.tasks) : undefined;
  }

  private set snapshot(snapshot: TaskFileSnapshot) {
    if (this.reuseParse) snapshots.set(this.paths.tasks, snapshot);
  }

  exists(): boolean {
    return existsSync(this.paths.tasks);
  }

  /** Reads and validates; throws TaskFileMissingError or TaskFileError. */
  load(): LoadedState {
    const snapshot = this.snapshotOf(this.readBytes(readBuffer));
    let text: string | undefined;
    return {
      file: snapshot.copy(),
      get text() {
        return (text ??= snapshot.text());
      },
    };
  }

  /**
   * The file for reading only, without load()'s copy: the store's own parse, frozen (a write to
   * it throws). For callers that look at the file after every task event (the journal).
   */
  peek(): TaskFile {
    return this.snapshotOf(this.readBytes(readBuffer)).frozen();
  }

  /**
   * peek() without reading the file: the parse of what this process last read or wrote, frozen,
   * or undefined before any. Only for what follows this process's own write (run's DISPATCH line
   * shows the task's title and attempt; the journal records the task an event is about), where
   * reading a large file each time would cost more than the line: another process's later write
   * is not seen.
   */
  lastKnown(): TaskFile | undefined {
    return this.snapshot?.frozen();
  }

  /** Refuses (TaskFileError) a task file Launchpad may not replace: read-only, or not a regular file. */
  assertWritable(): void {
    const target = this.writeTarget();
    assertWritable(target, target !== this.paths.tasks);
  }

  /**
   * Atomic replace: current file → .bak (itself by rename), new text → .tmp, fsync, rename over.
   * Callers pass state they loaded and validated, so the .bak is always a valid file; the new
   * text is validated here too, so what Launchpad writes it can always read back (against the
   * last snapshot, only the tasks that changed go through the schema again).
   */
  save(file: TaskFile, text?: string): string {
    const base = this.snapshot;
    const edit = text === undefined && base ? refuseInvalid(() => base.edit(file, true)!) : this.fullEdit(file, text);
    this.write(edit);
    return edit.text;
  }

  /** The file parsed whole, as it was written before there was a snapshot to compare with. */
  private fullEdit(file: TaskFile, text = serializeTaskFile(file)): TaskFileEdit {
    const checked = parseTaskFile(text, TASKS_FILE);
    if (!checked.ok) throw refusal(checked.error);
    const bytes = Buffer.from(text, 'utf8');
    return { text, bytes, next: new TaskFileSnapshot(bytes, checked.file) };
  }

  /**
   * The parse of `read` (a view of the shared read buffer): the snapshot's when they are its
   * bytes, else parsed from a copy of them (and kept).
   */
  private snapshotOf(read: Buffer): TaskFileSnapshot {
    const kept = this.snapshot;
    if (kept?.matches(read)) return kept;
    const bytes = Buffer.from(read);
    const parsed = parseTaskFileBytes(bytes, TASKS_FILE);
    if (!parsed.ok) throw parsed.error;
    const snapshot = new TaskFileSnapshot(bytes, parsed.file);
    this.snapshot = snapshot;
    return snapshot;
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
      this.replace(target, edit.bytes);
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
      // The bytes this process parsed already (run's checks before the session load the file).
      if (this.snapshot?.matches(bytes)) return { kind: 'ok' };
      const parsed = parseTaskFileBytes(bytes, TASKS_FILE);
      if (parsed.ok) {
        // Kept: the session's first load right after is this parse, not another one.
        this.snapshot = new TaskFileSnapshot(bytes, parsed.file);
        return { kind: 'ok' };
      }
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
        if (!error)
          throw new InputError(`${TASKS_FILE} is valid: nothing to restore (restore-backup only replaces a file that cannot be read)`);
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
          throw new TaskFileError(
            label,
            field,
            [...problems, 'the backup is not a valid task file either: nothing was restored, both files were left as they are'],
            position,
          );
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
  private readBytes(reuse?: { buffer?: Buffer }): Buffer {
    try {
      return readTaskFileBytes(this.paths.tasks, TASKS_FILE, reuse);
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
  private replace(target: string, text: string | Buffer): void {
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
   * With `sharedTasks`, `mutate` gets a draft (draft.ts) whose unchanged tasks are the snapshot's
   * frozen objects: for callers that write tasks only through transitions.ts, which copies a
   * task before it changes it.
   */
  transact<T>(mutate: (file: TaskFile) => T, opts: { sharedTasks?: boolean } = {}): Promise<T> {
    const run = async () => {
      const hadArtefacts = existsSync(this.paths.artefacts);
      const lock = await acquireLock(this.paths.stateLock, this.command, this.lockWaitMs);
      try {
        const base = this.snapshotOf(this.readBytes(readBuffer));
        const file = opts.sharedTasks && this.reuseParse ? base.draft() : base.copy();
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

function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
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
  return new TaskFileError(
    TASKS_FILE,
    error.field,
    error.problems.map((p) => `not written, the change would make it invalid: ${p}`),
  );
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
    // The file system's error stays its cause: the controller classifies it as the machine's failure.
    return Object.assign(
      new TaskFileError(TASKS_FILE, '', [`cannot be written (${(err as Error).message}); the file was left as it was`]),
      {
        cause: err,
      },
    );
  }
  return err;
}

function sha256(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * Records what Launchpad wrote to harness-tasks.json (its sha256) in the artefact folder, so a
 * broken file can be told apart: Launchpad's own write may be replaced by the backup, a
 * person's edit never. Tmp and rename, like the file itself. Best effort: without a record a
 * broken file counts as a person's, which only means it is not restored automatically.
 */
export function recordWrite(paths: StatePaths, text: Uint8Array | string): void {
  try {
    mkdirSync(paths.artefacts, { recursive: true });
    const tmp = `${paths.taskFileRecord}.tmp`;
    const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    let digest = digests.get(paths.tasks);
    if (!digest) digests.set(paths.tasks, (digest = new FileDigest()));
    writeFileSync(tmp, JSON.stringify({ sha256: digest.digest(bytes), written_at: new Date().toISOString() }) + '\n');
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

function writeDurably(path: string, text: string | Buffer, mode?: number): void {
  const fd = openSync(path, 'w');
  try {
    // A replaced file keeps its permissions (0600 stays 0600).
    if (mode !== undefined) fchmodSync(fd, mode);
    const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    for (let done = 0; done < bytes.length;) done += writeSync(fd, bytes, done, bytes.length - done);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
