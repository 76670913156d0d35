// harness-tasks.json on disk: read, atomic write with a backup, recovery from the backup, and
// read-modify-write transactions under the state lock. A reader never sees a partial file and a
// file that could not be parsed is never overwritten.
import { closeSync, copyFileSync, existsSync, fstatSync, fsyncSync, linkSync, lstatSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { ExpectedError } from '../expectedErrors';
import { rmdirIfEmpty } from '../fsQuiet';
import { acquireLock } from '../lock';
import { StatePaths, TASKS_FILE } from '../statePaths';
import { MAX_TASK_FILE_BYTES, parseTaskFile, serializeTaskFile, TaskFileError, tooLargeProblem } from './parse';
import type { TaskFile } from './schema';

export class TaskFileMissingError extends ExpectedError {
  constructor(readonly path: string) {
    super(`${TASKS_FILE}: not found in ${path.slice(0, -TASKS_FILE.length - 1) || '/'}; run "launchpad init" first`);
    this.name = 'TaskFileMissingError';
  }
}

export interface LoadedState {
  file: TaskFile;
  /** The exact text read, to tell whether a write changes anything. */
  text: string;
}

export type RecoveryOutcome =
  | { kind: 'ok' }
  | { kind: 'restored'; error: TaskFileError; corruptCopy: string }
  | { kind: 'unrecoverable'; error: TaskFileError };

/** How long `add`, `retry` and the controller wait for another writer's transaction. */
export const TRANSACTION_WAIT_MS = 10_000;

export class StateStore {
  private queue: Promise<unknown> = Promise.resolve();

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
    let text: string;
    try {
      text = readTaskFileText(this.paths.tasks, TASKS_FILE);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw new TaskFileMissingError(this.paths.tasks);
      if (code === 'EISDIR') throw new TaskFileError(TASKS_FILE, '', ['is a directory, not a file']);
      if (code === 'EACCES') throw new TaskFileError(TASKS_FILE, '', ['cannot be read: permission denied']);
      throw err;
    }
    const parsed = parseTaskFile(text, TASKS_FILE);
    if (!parsed.ok) throw parsed.error;
    return { file: parsed.file, text };
  }

  /**
   * Atomic replace: current file → .bak (itself by rename), new text → .tmp, fsync, rename over.
   * Callers pass state they loaded and validated, so the .bak is always a valid file.
   */
  save(file: TaskFile, text = serializeTaskFile(file)): string {
    if (existsSync(this.paths.tasks)) {
      const bakTmp = `${this.paths.backup}.tmp`;
      backupCopy(this.paths.tasks, bakTmp);
      renameSync(bakTmp, this.paths.backup);
      // When .bak already was this very file (a save that stopped between here and its final
      // rename), the rename above is a no-op that leaves .bak.tmp behind.
      rmSync(bakTmp, { force: true });
    }
    writeDurably(this.paths.tmp, text);
    renameSync(this.paths.tmp, this.paths.tasks);
    return text;
  }

  /** Creates the file only if absent (never clobbers). Returns false when it already existed. */
  create(file: TaskFile): boolean {
    if (existsSync(this.paths.tasks)) return false;
    writeDurably(this.paths.tmp, serializeTaskFile(file));
    try {
      // link fails if the target appeared meanwhile, unlike rename.
      linkSync(this.paths.tmp, this.paths.tasks);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    } finally {
      rmSync(this.paths.tmp, { force: true });
    }
    return true;
  }

  /** The text of harness-tasks.json.bak when it is a valid task file. */
  validBackupText(): string | undefined {
    try {
      const text = readTaskFileText(this.paths.backup, `${TASKS_FILE}.bak`);
      return parseTaskFile(text, `${TASKS_FILE}.bak`).ok ? text : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Session start (seed 000): a file that fails to parse or validate is replaced by a valid
   * .bak, keeping the broken file beside it; with no valid .bak both stay byte-for-byte.
   */
  recover(): RecoveryOutcome {
    try {
      this.load();
      return { kind: 'ok' };
    } catch (err) {
      if (!(err instanceof TaskFileError)) throw err;
      const backupText = this.validBackupText();
      if (backupText === undefined) return { kind: 'unrecoverable', error: err };
      const corruptCopy = `${this.paths.tasks}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      copyFileSync(this.paths.tasks, corruptCopy);
      writeDurably(this.paths.tmp, backupText);
      renameSync(this.paths.tmp, this.paths.tasks);
      return { kind: 'restored', error: err, corruptCopy };
    }
  }

  /**
   * One read-modify-write under the state lock. `mutate` edits the freshly loaded file in place
   * and returns a result; the file is written only when the mutation changed something. Transactions from
   * this process are queued so they never wait on their own lock.
   */
  transact<T>(mutate: (file: TaskFile) => T): Promise<T> {
    const run = async () => {
      const hadArtefacts = existsSync(this.paths.artefacts);
      const lock = await acquireLock(this.paths.stateLock, this.command, TRANSACTION_WAIT_MS);
      try {
        const { file } = this.load();
        const before = serializeTaskFile(file);
        const result = mutate(file);
        const after = serializeTaskFile(file);
        if (after !== before) this.save(file, after);
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
 * The file's text, refusing one over MAX_TASK_FILE_BYTES from its size alone: reading a file of
 * several hundred MiB first would take seconds and gigabytes, and past 512 MiB node cannot even
 * make it a string (an internal error instead of a TaskFileError).
 */
export function readTaskFileText(path: string, label: string): string {
  const fd = openSync(path, 'r');
  try {
    const { size } = fstatSync(fd);
    if (size > MAX_TASK_FILE_BYTES) throw new TaskFileError(label, '', [tooLargeProblem(size)]);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
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

function writeDurably(path: string, text: string): void {
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

