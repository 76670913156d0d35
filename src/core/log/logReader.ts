// Reading harness-progress.txt fast: grep-style filters over a file of any size, in chunks,
// without decoding lines that cannot match; and incremental reads from a byte offset so a
// live view or `log --follow` reads only what was appended.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

import { type Category, type LogType, parseLogLine } from './logLine';

export interface LogFilter {
  /** One type, or any of several. */
  type?: LogType | readonly LogType[] | undefined;
  taskId?: string | undefined;
  session?: number | undefined;
  category?: Category | undefined;
  regex?: RegExp | undefined;
}

interface Matcher {
  /** A byte string every matching line contains, to skip the rest with Buffer.indexOf. */
  needle?: Buffer;
  /**
   * Run the regex over whole decoded chunks when there is no needle, or when the needle turns
   * out to be on nearly every line (one decode per line then costs more than one per chunk).
   */
  chunkRegex?: RegExp;
  test(line: string): boolean;
}

export function isEmptyFilter(f: LogFilter): boolean {
  return !f.type?.length && !f.taskId && f.session === undefined && !f.category && !f.regex;
}

/** Whether one line passes the filter. The slow path, and the reference for the fast ones. */
export function lineMatches(line: string, f: LogFilter): boolean {
  if (f.regex && !testRegex(f.regex, line)) return false;
  if (!f.type?.length && !f.taskId && f.session === undefined && !f.category) return true;
  const entry = parseLogLine(line);
  if (!entry) return false;
  return (
    (!f.type?.length || (typeof f.type === 'string' ? entry.type === f.type : f.type.includes(entry.type))) &&
    (!f.taskId || entry.taskId === f.taskId) &&
    (f.session === undefined || entry.session === f.session) &&
    (!f.category || entry.category === f.category)
  );
}

function testRegex(re: RegExp, line: string): boolean {
  re.lastIndex = 0;
  return re.test(line);
}

function compile(f: LogFilter): Matcher {
  const test = (line: string) => lineMatches(line, f);
  // The most selective literal first.
  if (f.taskId) return { needle: Buffer.from(`[${f.taskId}]`), test };
  if (f.category) return { needle: Buffer.from(`[${f.category}]`), test };
  if (f.session !== undefined) return { needle: Buffer.from(`[SESSION-${f.session}] `), test };
  if (typeof f.type === 'string' || f.type?.length === 1)
    return { needle: Buffer.from(`] ${typeof f.type === 'string' ? f.type : f.type[0]}`), test };
  if (f.type?.length) return { chunkRegex: new RegExp(`\\] (?:${f.type.join('|')})(?: |$)`, 'gm'), test };
  if (f.regex) {
    const literal = plainLiteral(f.regex);
    if (literal !== undefined) return { needle: Buffer.from(literal), test };
    const chunkRegex = new RegExp(f.regex.source, f.regex.flags.replace(/[gym]/g, '') + 'gm');
    const required = requiredLiteral(f.regex);
    return required !== undefined ? { needle: Buffer.from(required), chunkRegex, test } : { chunkRegex, test };
  }
  return { test: () => true };
}

/** The regex as a literal string when it has no special characters and no flags. */
function plainLiteral(re: RegExp): string | undefined {
  if (re.flags.replace(/[gu]/g, '') !== '') return undefined;
  return /^[^\\^$.|?*+()[\]{}]+$/.test(re.source) ? re.source : undefined;
}

/** Shorter required literals are too common to be worth a line-by-line scan. */
const MIN_REQUIRED_LITERAL = 3;

/**
 * The longest run of printable ASCII that every match of `re` contains, so the scan can look
 * for it with Buffer.indexOf instead of decoding the whole file (`AGENT_FAIL.*import` →
 * `AGENT_FAIL`). Only the top-level sequence counts: a character followed by a quantifier is
 * dropped, groups, classes and escapes other than an escaped punctuation mark end a run, and
 * a top-level `|`, the `i` or `v` flag, or anything not understood gives undefined. The needle
 * only preselects lines; each is still tested against the regex.
 */
function requiredLiteral(re: RegExp): string | undefined {
  if (/[^gmsuyd]/.test(re.flags)) return undefined;
  const unicode = re.flags.includes('u');
  const src = re.source;
  let best = '';
  let run = '';
  const endRun = () => {
    if (run.length > best.length) best = run;
    run = '';
  };
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    let literal: string | undefined;
    if (c === '|') return undefined;
    if (c === '\\') {
      const next = src[i + 1];
      if (next === undefined) return undefined;
      if (/[!-/:-@[-`{-~]/.test(next)) {
        literal = next;
        i += 2;
      } else {
        const end = escapeEnd(src, i, unicode);
        if (end < 0) return undefined;
        i = end;
      }
    } else if (c === '[') {
      i = classEnd(src, i);
      if (i < 0) return undefined;
    } else if (c === '(') {
      i = groupEnd(src, i);
      if (i < 0) return undefined;
    } else if (c === '.' || c === '^' || c === '$') {
      i++;
    } else if (c === ')' || c === ']' || c === '{' || c === '}' || c === '*' || c === '+' || c === '?') {
      // Unbalanced or a quantifier without an atom: valid only in odd Annex B corners.
      return undefined;
    } else {
      if (c >= ' ' && c <= '~') literal = c;
      i++;
    }

    // A quantifier makes the atom before it optional or repeated: it is not a fixed literal.
    const quantifier = /^(?:[*+?]|\{\d+(?:,\d*)?\})\??/.exec(src.slice(i, i + 24));
    if (quantifier) {
      i += quantifier[0].length;
      endRun();
    } else if (literal !== undefined) {
      run += literal;
    } else {
      endRun();
    }
  }
  endRun();
  return best.length >= MIN_REQUIRED_LITERAL ? best : undefined;
}

/** Index after the escape at src[i] (a backslash and a letter or digit form), or -1. */
function escapeEnd(src: string, i: number, unicode: boolean): number {
  const rest = src.slice(i + 1);
  const m =
    /^(?:[dDwWsSbBtrnvf]|0(?!\d)|[1-9]\d*|c[A-Za-z]|x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|k<[^>]+>)/.exec(rest) ??
    (unicode ? /^(?:u\{[0-9A-Fa-f]+\}|[pP]\{[^}]+\})/.exec(rest) : null);
  return m ? i + 1 + m[0].length : -1;
}

/** Index after the character class opening at src[i], or -1. */
function classEnd(src: string, i: number): number {
  for (let j = i + 1; j < src.length; j++) {
    if (src[j] === '\\') j++;
    else if (src[j] === ']') return j + 1;
  }
  return -1;
}

/** Index after the group opening at src[i] (nested groups, classes and escapes skipped), or -1. */
function groupEnd(src: string, i: number): number {
  let depth = 0;
  for (let j = i; j < src.length; j++) {
    const c = src[j];
    if (c === '\\') j++;
    else if (c === '[') {
      j = classEnd(src, j) - 1;
      if (j < 0) return -1;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return j + 1;
  }
  return -1;
}

/** Matching lines among the complete lines in buf[0, end). */
function scan(buf: Buffer, end: number, m: Matcher, out: string[]): void {
  if (m.needle) {
    let pos = 0;
    let hits = 0;
    while (pos < end) {
      if (m.chunkRegex && hits >= DENSE_MIN_HITS && pos < hits * DENSE_BYTES_PER_HIT) {
        scanDecoded(buf, pos, end, m, out);
        return;
      }
      const hit = buf.indexOf(m.needle, pos);
      if (hit < 0 || hit >= end) return;
      hits++;
      const start = buf.lastIndexOf(10, hit) + 1;
      let stop = buf.indexOf(10, hit);
      if (stop < 0 || stop > end) stop = end;
      const line = decodeLine(buf, start, stop);
      if (m.test(line)) out.push(line);
      pos = stop + 1;
    }
    return;
  }
  scanDecoded(buf, 0, end, m, out);
}

/** After this many needle hits in a chunk, check whether they are dense … */
const DENSE_MIN_HITS = 64;
/** … that is, one hit every this many bytes or more often (about four lines of the log). */
const DENSE_BYTES_PER_HIT = 512;

/** Matching lines among the complete lines in buf[from, end), `from` at a line start. */
function scanDecoded(buf: Buffer, from: number, end: number, m: Matcher, out: string[]): void {
  const text = buf.toString('utf8', from, end);
  if (m.chunkRegex) {
    const re = m.chunkRegex;
    re.lastIndex = 0;
    let match: RegExpExecArray | null;
    while ((match = re.exec(text))) {
      // An empty match after the final newline belongs to no line.
      if (match.index >= text.length) break;
      const start = text.lastIndexOf('\n', match.index - 1) + 1;
      let stop = text.indexOf('\n', match.index);
      if (stop < 0) stop = text.length;
      // A pattern like [^x] can match across a newline; only whole-line matches count.
      const line = stripCr(text.slice(start, stop));
      if (m.test(line)) {
        out.push(line);
        re.lastIndex = stop + 1;
      } else {
        re.lastIndex = match.index + 1;
      }
    }
    return;
  }
  for (const line of text.split('\n')) if (line) out.push(stripCr(line));
}

function decodeLine(buf: Buffer, start: number, stop: number): string {
  if (stop > start && buf[stop - 1] === 13) stop--;
  return buf.toString('utf8', start, stop);
}

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

const CHUNK = 4 * 1024 * 1024;

export interface ReadResult {
  /** Where the next incremental read starts: just after the last complete line. */
  offset: number;
}

/**
 * Streams matching lines of `file` from byte `offset` to its current end, in batches
 * (`onLines` per chunk). A trailing line without its newline is left for the next read.
 */
export function readLogLines(file: string, filter: LogFilter, onLines: (lines: string[]) => void, offset = 0): ReadResult {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { offset: 0 };
    throw err;
  }
  try {
    const size = fstatSync(fd).size;
    // The log is append-only; if it shrank, it was replaced: start over.
    let pos = offset > size ? 0 : offset;
    const matcher = compile(filter);
    let buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(size - pos, 1)));
    let carry = 0;
    while (pos < size) {
      const want = Math.min(buf.length - carry, size - pos);
      const n = readSync(fd, buf, carry, want, pos);
      if (n <= 0) break;
      pos += n;
      const filled = carry + n;
      const lastNl = buf.lastIndexOf(10, filled - 1);
      if (lastNl < 0) {
        // One line longer than the buffer: grow and keep reading.
        if (filled === buf.length) {
          const bigger = Buffer.allocUnsafe(buf.length * 2);
          buf.copy(bigger, 0, 0, filled);
          buf = bigger;
        }
        carry = filled;
        continue;
      }
      const out: string[] = [];
      scan(buf, lastNl + 1, matcher, out);
      if (out.length) onLines(out);
      carry = filled - (lastNl + 1);
      buf.copy(buf, 0, lastNl + 1, filled);
    }
    return { offset: pos - carry };
  } finally {
    closeSync(fd);
  }
}

/** All matching lines, for small logs and tests. */
export function filterLog(file: string, filter: LogFilter = {}): string[] {
  const all: string[] = [];
  readLogLines(file, filter, (lines) => all.push(...lines));
  return all;
}

/** The last `count` lines of the log, reading only its tail. */
export function tailLog(file: string, count: number): string[] {
  // slice(-0) would be every line read.
  if (count <= 0) return [];
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return [];
  }
  try {
    const size = fstatSync(fd).size;
    let span = Math.min(size, 64 * 1024);
    for (;;) {
      const buf = Buffer.allocUnsafe(span);
      readSync(fd, buf, 0, span, size - span);
      const lines = buf.toString('utf8').split('\n');
      if (lines.at(-1) === '') lines.pop();
      if (span === size || lines.length > count) {
        if (span !== size) lines.shift(); // the first line may be cut
        return lines.slice(-count).map(stripCr);
      }
      span = Math.min(size, span * 4);
    }
  } finally {
    closeSync(fd);
  }
}

/** Follows a growing log: each `poll()` returns only the matching lines appended since the last. */
export class LogFollower {
  private offset: number;

  constructor(
    private readonly file: string,
    private readonly filter: LogFilter,
    startOffset = 0,
  ) {
    this.offset = startOffset;
  }

  poll(): string[] {
    const out: string[] = [];
    this.offset = readLogLines(this.file, this.filter, (lines) => out.push(...lines), this.offset).offset;
    return out;
  }

  get position(): number {
    return this.offset;
  }
}

/** The bytes after the last newline (from `offset`, just after it), without a trailing CR. */
export function unterminatedTail(file: string, offset: number): string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return '';
  }
  try {
    const size = fstatSync(fd).size;
    if (size <= offset) return '';
    const buf = Buffer.alloc(size - offset);
    const n = readSync(fd, buf, 0, buf.length, offset);
    const text = buf.toString('utf8', 0, n);
    return text.includes('\n') ? '' : text.replace(/\r$/, '');
  } finally {
    closeSync(fd);
  }
}
