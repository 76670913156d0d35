// Where a task's last line is in the progress log, without reading the whole log into memory:
// the file is scanned backwards in chunks for the line, then its newlines before it are
// counted (a Buffer scan, no decoding). No vscode import: tested in node.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

import { parseLogLine } from './logLine';

const CHUNK = 1 << 20;

export interface LogPosition {
  /** Zero-based line number. */
  line: number;
  text: string;
}

/** The last line about `taskId` (its task field, not a mention in a message), or undefined. */
export function lastLineOfTask(file: string, taskId: string): LogPosition | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const size = fstatSync(fd).size;
    const needle = Buffer.from(` [${taskId}]`);
    let end = size;
    let carry = Buffer.alloc(0); // the start of a line cut by the previous (later) chunk
    while (end > 0) {
      const start = Math.max(0, end - CHUNK);
      const buf = Buffer.alloc(end - start);
      readSync(fd, buf, 0, buf.length, start);
      const data = Buffer.concat([buf, carry]);
      // Lines wholly inside `data`, from the last; the first is cut unless the chunk starts the file.
      const prevNewline = (before: number) => (before > 0 ? data.lastIndexOf(10, before - 1) : -1);
      let lineEnd = data.length;
      for (;;) {
        const nl = prevNewline(lineEnd);
        if (nl < 0 && start > 0) break;
        const lineStart = nl + 1;
        const line = data.subarray(lineStart, lineEnd);
        if (line.includes(needle)) {
          const text = line.toString('utf8').replace(/\r$/, '');
          if (parseLogLine(text)?.taskId === taskId) return { line: countNewlines(fd, start + lineStart), text };
        }
        if (nl < 0) return undefined;
        lineEnd = nl;
      }
      carry = data.subarray(0, lineEnd);
      end = start;
    }
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Number of `\n` bytes in the first `upTo` bytes of the file. */
function countNewlines(fd: number, upTo: number): number {
  const buf = Buffer.alloc(Math.min(CHUNK, upTo));
  let count = 0;
  for (let pos = 0; pos < upTo;) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, upTo - pos), pos);
    if (n <= 0) break;
    for (let i = buf.indexOf(10, 0); i >= 0 && i < n; i = buf.indexOf(10, i + 1)) count++;
    pos += n;
  }
  return count;
}
