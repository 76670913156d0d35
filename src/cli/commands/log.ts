import { watch } from 'node:fs';
import { parseLogFilter } from '../../core/log/logFilterSpec';
import { CATEGORIES, LOG_TYPES } from '../../core/log/logLine';
import { lineMatches, LogFollower, readLogLines, unterminatedTail } from '../../core/log/logReader';
import type { Command } from '../command';
import { EXIT } from '../exit';
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
    const filter = parseLogFilter(ctx.values);
    const file = store.paths.progress;
    const closed = ctx.io.outputClosed;
    const write = (lines: string[]) => {
      // `launchpad log | head`: once nobody reads, reading the rest of the log is wasted.
      if (closed?.aborted) throw new OutputClosed();
      ctx.io.out(lines.join('\n') + '\n');
    };
    let offset: number;
    try {
      ({ offset } = readLogLines(file, filter, write));
    } catch (err) {
      if (err instanceof OutputClosed) return EXIT.OK;
      throw err;
    }
    if (!ctx.values.follow) {
      // readLogLines leaves a last line without its newline for the next incremental read;
      // a one-shot read has no next read, so it is printed like any other (as grep does).
      const last = unterminatedTail(file, offset);
      if (last && lineMatches(last, filter) && !closed?.aborted) write([last]);
      return EXIT.OK;
    }

    const follower = new LogFollower(file, filter, offset);
    await new Promise<void>((resolve) => {
      const poll = () => {
        const lines = follower.poll();
        if (lines.length && !closed?.aborted) write(lines);
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
      // `launchpad log --follow | head`: nobody reads any more.
      closed?.addEventListener('abort', stop, { once: true });
    });
    return EXIT.OK;
  },
};

class OutputClosed extends Error {}
