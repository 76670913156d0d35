// Saving a 5,000-task harness-tasks.json atomically: StateStore.save (serialize, the current file
// to .bak, write .tmp + fsync, rename over). Budget: ≤ 20 ms. The store serializes
// and schema-checks only the tasks that differ from the last file it wrote (its snapshot); the
// anchor is the previous save, a store without a snapshot (whole serialize, whole parse to check
// the text), on its own copy, alternated with ours.
// For information: the steps of a save one by one, and parsing the whole file (JSON.parse, the
// schema): what a load costs when the file is not the one the store last wrote. Transactions
// and load() are in transaction.mjs.
//
// The file lives under the OS temp dir: the figure includes a real fsync on that file system.
import { closeSync, copyFileSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';

import { generateTaskFile } from './lib/gen.mjs';

export const description = 'atomic save of a 5,000-task state file (≤ 20 ms); load and transact for information';

const TASKS = 5_000;
const SEED = 43;
const BUDGET_MS = 20;

export default async function run(bench) {
  const { StateStore } = bench.core('taskFile/store');
  const { StatePaths } = bench.core('statePaths');
  const { parseTaskFile, serializeTaskFile } = bench.core('taskFile/parse');

  const dir = bench.tmp('state');
  const store = new StateStore(new StatePaths(dir), 'launchpad bench');
  const previousPaths = new StatePaths(bench.tmp('state-previous'));
  const parsed = parseTaskFile(JSON.stringify(generateTaskFile(TASKS, { seed: SEED })));
  if (!parsed.ok) throw parsed.error;
  const file = parsed.file;
  store.save(file);
  const size = statSync(store.paths.tasks).size;
  bench.fact(
    'generated state file',
    `${TASKS} tasks, ${(size / 1048576).toFixed(2)} MiB pretty-printed (seed ${SEED}) in ${dir.split('/').slice(0, -1).join('/')}`,
  );

  // Each save writes slightly different content, as a real transaction does.
  const touch = (i) => {
    file.tasks[i % TASKS].attempts = (file.tasks[i % TASKS].attempts + 1) % 3;
  };
  const opts = { warmup: 5, reps: 30 };

  // The first few dozen saves of a fresh process are slower (heap growing to fit 3.6 MB strings,
  // JIT): warm up well past that, as a long-running controller is.
  let i = 0;
  const save = await bench.pair(
    () => {
      touch(i++);
      return store.save(file);
    },
    () => {
      touch(i++);
      return new StateStore(previousPaths, 'launchpad bench', false).save(file);
    },
    { warmup: 25, reps: 40 },
  );
  bench.check('StateStore.save(file): serialize + .bak + .tmp/fsync + rename', save.ours, {
    budgetMs: BUDGET_MS,
    note: `anchor: the previous save (no snapshot) ${save.peer.median.toFixed(1)} ms, ours ${save.ratio.toFixed(2)}× it`,
  });
  bench.checkRatio('  the same, vs the previous save', save, { peerName: 'previous save' });

  // The same steps one at a time, to see where a save's time goes.
  const { paths } = store;
  bench.info('  serializeTaskFile (JSON.stringify, 2-space indent)', await bench.time(() => serializeTaskFile(file), opts));
  const text = serializeTaskFile(file);
  // On scratch names, removed before each run: renaming a link over a link to the same file is
  // a no-op (POSIX), and copyFile onto the same file does nothing, which would time nothing.
  const s1 = `${paths.tasks}.bench-1`;
  const s2 = `${paths.tasks}.bench-2`;
  const clear = () => {
    rmSync(s1, { force: true });
    rmSync(s2, { force: true });
  };
  bench.info(
    '  current → .bak by hard link (link + rename), what save does',
    await bench.time(
      () => {
        linkSync(paths.tasks, s1);
        renameSync(s1, s2);
      },
      { ...opts, before: clear },
    ),
  );
  bench.info(
    '  current → .bak by copy (copyFile + rename), the fallback',
    await bench.time(
      () => {
        copyFileSync(paths.tasks, s1);
        renameSync(s1, s2);
      },
      { ...opts, before: clear },
    ),
  );
  clear();
  bench.info(
    '  write .tmp + fsync + close',
    await bench.time(() => {
      const fd = openSync(paths.tmp, 'w');
      writeSync(fd, text);
      fsyncSync(fd);
      closeSync(fd);
    }, opts),
  );
  bench.info(
    '  write .tmp without fsync (what fsync costs, by difference)',
    await bench.time(() => {
      const fd = openSync(paths.tmp, 'w');
      writeSync(fd, text);
      closeSync(fd);
    }, opts),
  );
  bench.info('  StateStore.save(file, text): text given, checked by a whole parse', await bench.time(() => store.save(file, text), opts));

  // Reading a file the store did not write itself: the whole parse.
  const raw = readFileSync(paths.tasks, 'utf8');
  bench.info(
    'parseTaskFile (JSON.parse + schema, no I/O): a load of a file changed by someone else',
    await bench.time(() => parseTaskFile(raw), opts),
  );
  bench.info('  JSON.parse alone', await bench.time(() => JSON.parse(raw), opts));
}
