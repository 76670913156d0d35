// Filter Progress Log's views on a 1,000,000-line log (~130 MB), in node: the editor adapter's
// FilteredLog (src/vscode/progressLog/filteredLog.ts, no vscode in it) over the core's reader.
//   - opening a view: one streaming read of the whole file (readLogLines, 4 MiB chunks)
//   - an append: LogFollower reads only the new bytes; the view's state for the editor edit
// For information: the log filter's own budget is bench/logFilter.mjs's (≤ 3× grep).
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { generateLog } from './lib/gen.mjs';

export const description = 'Filter Progress Log views on 1,000,000 lines: first open, then per append';

const LINES = 1_000_000;
const SEED = 11;

export default async function run(bench) {
  const require = createRequire(join(bench.ROOT, 'package.json'));
  let FilteredLog;
  try {
    ({ FilteredLog } = require(join(bench.ROOT, 'out', 'src', 'vscode', 'progressLog', 'filteredLog.js')));
  } catch (err) {
    if (err.code === 'MODULE_NOT_FOUND') throw new Error('out/src/vscode/progressLog/filteredLog.js is missing: run "npm run build" first');
    throw err;
  }
  const dir = bench.tmp('log');
  const file = join(dir, 'harness-progress.txt');
  const gen = generateLog(file, LINES, { seed: SEED });
  bench.fact('generated log', `${gen.lines.toLocaleString('en')} lines, ${(gen.bytes / 1048576).toFixed(1)} MiB (seed ${SEED})`);
  readFileSync(file); // into the page cache

  const describe = { filter: 'x', command: 'launchpad log' };
  const views = [
    ['all errors (--type ERROR)', { type: 'ERROR' }],
    ['one session (--session 3)', { session: 3 }],
    ["a regex ('AGENT_FAIL.*import')", { regex: /AGENT_FAIL.*import/ }],
  ];
  for (const [label, filter] of views) {
    let view;
    const open = await bench.time(() => (view = new FilteredLog(file, filter, describe)), { warmup: 1, reps: 8 });
    const s = view.state();
    bench.info(`open a view: ${label}`, open, {
      note: `${view.matched.toLocaleString('en')} matching lines, ${(s.end - s.first).toLocaleString('en')} shown`,
    });
  }

  // Appends: 1,000 lines before each poll; the view then computes what the editor edit needs.
  const view = new FilteredLog(file, { type: 'ERROR' }, describe);
  let session = gen.nextSession;
  const append = (i) => {
    session = generateLog(file, 1000, { seed: 5000 + i, append: true, startSession: session }).nextSession;
  };
  let added = 0;
  const poll = await bench.time(
    () => {
      const before = view.matched;
      view.poll();
      const s = view.state();
      added = view.matched - before;
      return view.slice(Math.max(s.first, before), s.end).length;
    },
    { warmup: 3, reps: 20, before: append },
  );
  bench.info('an append of 1,000 lines: read the new bytes, state + new lines of the ERROR view', poll, {
    note: `${added} new matching lines in the last; log now ${(statSync(file).size / 1048576).toFixed(0)} MiB`,
  });
  bench.info(
    "the ERROR view's whole text (VS Code asks for it on open)",
    await bench.time(() => view.text().length, { warmup: 2, reps: 10 }),
  );
}
