import type { StatePaths } from '../core/statePaths';
import { readTaskFile } from '../core/taskFile/read';
import { describeUnknownField, unknownFields } from '../core/taskFile/unknownFields';
import type { Io } from './io';

/** At most this many warnings, then a count: a file of another tool's fields should not flood the terminal. */
const SHOWN = 5;

/**
 * Warns on stderr about each field of the task file Launchpad does not read. A file that cannot
 * be read or used is left to the command, which says so in its own words.
 */
export function warnUnknownFields(io: Io, paths: StatePaths): void {
  let read;
  try {
    read = readTaskFile(paths);
  } catch {
    return;
  }
  const found = unknownFields(read.file);
  const text = found.length ? read.bytes.toString('utf8') : '';
  for (const u of found.slice(0, SHOWN)) io.err(`warning: ${describeUnknownField(paths.tasks, text, u)}\n`);
  if (found.length > SHOWN) io.err(`warning: ${found.length - SHOWN} more field(s) of ${paths.tasks} that Launchpad does not read\n`);
}
