import { watch } from 'node:fs';

import { parseLogFilter } from '../../core/log/logFilterSpec';
import { CATEGORIES, LOG_TYPES } from '../../core/log/logLine';
import { filterLog, lineMatches, LogFollower, readLogLines, unterminatedTail } from '../../core/log/logReader';
import type { Command } from '../command';
import { EXIT, UsageError } from '../exit';
import { existingStateRoot } from '../stateRoot';
import { paintLogLine } from '../ui/logLineView';

export const logCommand: Command = {
  name: 'log',
  usage: 'launchpad log [--type T[,T…]] [--task ID] [--session N] [--category C] [--grep REGEX] [--follow]',
  summary: 'Print the lines of harness-progress.txt that match every filter given (all lines without filters).',
  details: `types: ${LOG_TYPES.join(' ')}\ncategories: ${CATEGORIES.join(' ')}\nA --task that neither harness-tasks.json nor any line of the log names is an error (exit 2): a typo\nshould not look like a quiet task. A removed task's lines are still printed.`,
  options: {
    type: { type: 'string', value: 'T', help: 'event type, e.g. ERROR, DISPATCH, STATS, or several: ERROR,WARN (case-insensitive)' },
    task: { type: 'string', value: 'ID', help: 'lines about one task' },
    session: { type: 'string', value: 'N', help: 'lines of session N' },
    category: { type: 'string', value: 'C', help: 'error category, e.g. TEST_FAIL, MERGE_CONFLICT' },
    grep: { type: 'string', value: 'REGEX', help: 'lines matching a JavaScript regular expression' },
    follow: { type: 'boolean', short: 'f', help: 'keep printing matching lines as they are appended (Ctrl-C to stop)' },
  },
  globals: ['dir', 'no-color'],
  async run(ctx) {
    const store = existingStateRoot(ctx, 'log');
    const filter = parseLogFilter(ctx.values);
    const file = store.paths.progress;
    const closed = ctx.io.outputClosed;
    let printed = 0;
    const write = (lines: string[]) => {
      // `launchpad log | head`: once nobody reads, reading the rest of the log is wasted.
      if (closed?.aborted) throw new OutputClosed();
      printed += lines.length;
      ctx.io.out(lines.map((l) => paintLogLine(l, ctx.colour)).join('\n') + '\n');
    };
    let offset: number;
    try {
      ({ offset } = readLogLines(file, filter, write));
    } catch (err) {
      if (err instanceof OutputClosed) return EXIT.OK;
      throw err;
    }
    // readLogLines leaves a last line without its newline for the next incremental read; a
    // one-shot read has no next read, so it is printed like any other (as grep does).
    const last = ctx.values.follow ? undefined : unterminatedTail(file, offset);
    if (last && lineMatches(last, filter) && !closed?.aborted) write([last]);
    if (filter.taskId && !printed && !knownTask(store, filter.taskId) && !filterLog(file, { taskId: filter.taskId }).length) {
      throw new UsageError(`--task: no task "${filter.taskId}" in harness-tasks.json, and no line of harness-progress.txt names it`);
    }
    if (!ctx.values.follow) return EXIT.OK;

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
/** Whether the task file has the task; a task file that does not load does not say no. */
function knownTask(store: ReturnType<typeof existingStateRoot>, id: string): boolean {
  try {
    return store.load().file.tasks.some((t) => t.id === id);
  } catch {
    return true;
  }
}
