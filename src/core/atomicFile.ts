// Whole-file replacement: the new bytes go to a temporary file beside the target (a name no other
// writer uses), are flushed, and renamed over it, so a reader or a crash sees the old file or the
// new one, never half of either. An existing file keeps its permissions; a new one gets `mode`.
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export function replaceFile(path: string, content: string | Buffer, opts: { mode?: number; dirMode?: number } = {}): void {
  mkdirSync(dirname(path), { recursive: true, ...(opts.dirMode === undefined ? {} : { mode: opts.dirMode }) });
  let mode = opts.mode;
  try {
    mode = statSync(path).mode & 0o7777;
  } catch {
    // A new file: the mode asked for, else the default.
  }
  const tmp = `${path}.${process.pid}-${randomBytes(3).toString('hex')}.tmp`;
  try {
    const fd = openSync(tmp, 'wx', mode);
    try {
      writeFileSync(fd, content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}
