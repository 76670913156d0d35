import { closeSync, fstatSync, openSync, readSync, watch } from 'node:fs';
import { CATEGORIES, LOG_TYPES, type Category, type LogType } from '../../core/logLine';
import { lineMatches, LogFollower, readLogLines, type LogFilter } from '../../core/logReader';
import { isValidTaskId } from '../../core/ids';
import { numberOption, type Command } from '../command';
import { EXIT, UsageError } from '../exit';
import { existingHarness } from '../harness';

export const logCommand: Command = {
  name: 'log',
  usage: 'launchpad log [--type T] [--task ID] [--session N] [--category C] [--grep REGEX] [--follow]',
  summary: 'Print the lines of harness-progress.txt that match every filter given (all lines without filters).',
  details: `types: ${LOG_TYPES.join(' ')}\ncategories: ${CATEGORIES.join(' ')}`,
  options: {
    type: { type: 'string', value: 'T', help: 'event type, e.g. ERROR, DISPATCH, STATS (case-insensitive)' },
    task: { type: 'string', value: 'ID', help: 'lines about one task' },
    session: { type: 'string', value: 'N', help: 'lines of session N' },
    category: { type: 'string', value: 'C', help: 'error category, e.g. TEST_FAIL, MERGE_CONFLICT' },
    grep: { type: 'string', value: 'REGEX', help: 'lines matching a JavaScript regular expression' },
    follow: { type: 'boolean', short: 'f', help: 'keep printing matching lines as they are appended (Ctrl-C to stop)' },
  },
  async run(ctx) {
    const store = existingHarness(ctx, 'log');
    const filter = parseFilter(ctx.values);
    const file = store.paths.progress;
    const write = (lines: string[]) => ctx.io.out(lines.join('\n') + '\n');
    const { offset } = readLogLines(file, filter, write);
    if (!ctx.values.follow) {
      // readLogLines leaves a last line without its newline for the next incremental read;
      // a one-shot read has no next read, so it is printed like any other (as grep does).
      const last = unterminatedTail(file, offset);
      if (last && lineMatches(last, filter)) write([last]);
      return EXIT.OK;
    }

    const follower = new LogFollower(file, filter, offset);
    await new Promise<void>((resolve) => {
      const poll = () => {
        const lines = follower.poll();
        if (lines.length) write(lines);
      };
      // Watch the directory: the log is appended in place, but editors may replace it.
      const watcher = watch(store.paths.root, (_event, name) => {
        if (!name || name === 'harness-progress.txt') poll();
      });
      const timer = setInterval(poll, 1000);
      const stop = () => {
        watcher.close();
        clearInterval(timer);
        resolve();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    return EXIT.OK;
  },
};

export function parseFilter(values: Record<string, string | boolean | undefined>): LogFilter {
  const filter: LogFilter = {};
  if (typeof values.type === 'string') {
    const type = LOG_TYPES.find((t) => t.toLowerCase() === (values.type as string).toLowerCase());
    if (!type) throw new UsageError(`--type: unknown type "${values.type}"; one of ${LOG_TYPES.join(', ')}`);
    filter.type = type as LogType;
  }
  if (typeof values.category === 'string') {
    const category = CATEGORIES.find((c) => c.toLowerCase() === (values.category as string).toLowerCase());
    if (!category) throw new UsageError(`--category: unknown category "${values.category}"; one of ${CATEGORIES.join(', ')}`);
    filter.category = category as Category;
  }
  if (typeof values.task === 'string') {
    if (!isValidTaskId(values.task)) throw new UsageError(`--task: "${values.task}" is not a valid task id`);
    filter.taskId = values.task;
  }
  filter.session = numberOption('session', values.session, { integer: true, min: 0 });
  if (typeof values.grep === 'string') {
    try {
      filter.regex = new RegExp(values.grep);
    } catch (err) {
      throw new UsageError(`--grep: ${(err as Error).message}`);
    }
  }
  return filter;
}

/** The bytes after the last newline (from `offset`, just after it), without a trailing CR. */
function unterminatedTail(file: string, offset: number): string {
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
