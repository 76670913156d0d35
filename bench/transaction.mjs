// A state transaction on a 5,000-task harness-tasks.json (budget ≤ 20 ms): StateStore.transact,
// under the state lock, with the store's snapshot of the bytes it last wrote, as the controller
// and a person's edits make it: the unchanged tasks shared with the snapshot (frozen), the one
// changed copied, and only what changed serialized and checked. The anchor, measured in the
// same run: the previous transaction (previousTransact below: parse the whole file on every
// load, serialize it twice to see whether anything changed, parse the whole new text again to
// check it, the same atomic write), on its own copy of the file, alternated with ours.
// Then, for information: the same on a whole copy of the parse (what a caller that changes
// tasks directly gets); a read-only transaction; a transaction after another process rewrote
// the file (the snapshot cannot be used: a whole parse); load(); and the controller's state work
// per task on that file — now one transaction that records the last task completed, orders the
// pool and claims the next; before, a read-only pool pass, a claim and a completion.
import { closeSync, fsyncSync, linkSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';

import { generateTaskFile } from './lib/gen.mjs';

export const description = 'a state transaction on a 5,000-task file (≤ 20 ms) vs the previous whole-parse transaction';

const TASKS = 5_000;
const SEED = 43;
const BUDGET_MS = 20;

export default async function run(bench) {
  const { StateStore, readTaskFileBytes, recordWrite } = bench.core('taskFile/store');
  const { StatePaths } = bench.core('statePaths');
  const { parseTaskFile, parseTaskFileBytes, serializeTaskFile } = bench.core('taskFile/parse');
  const { acquireLock } = bench.core('lock');
  const dag = bench.core('tasks/dag');
  const transitions = bench.core('tasks/transitions');

  const parsed = parseTaskFile(JSON.stringify(generateTaskFile(TASKS, { seed: SEED })));
  if (!parsed.ok) throw parsed.error;
  const text = serializeTaskFile(parsed.file);
  const state = (name) => {
    const paths = new StatePaths(bench.tmp(name));
    new StateStore(paths, 'launchpad bench', false).save(parseTaskFile(text).file);
    return paths;
  };

  /** The transaction before snapshots, step for step (the atomic write is the store's). */
  const previousTransact = async (paths, mutate) => {
    const lock = await acquireLock(paths.stateLock, 'launchpad bench', 10_000);
    try {
      const p = parseTaskFileBytes(readTaskFileBytes(paths.tasks, 'harness-tasks.json'));
      if (!p.ok) throw p.error;
      const before = serializeTaskFile(p.file);
      const result = mutate(p.file);
      const after = serializeTaskFile(p.file);
      if (after !== before) {
        const checked = parseTaskFile(after);
        if (!checked.ok) throw checked.error;
        rmSync(`${paths.backup}.tmp`, { force: true });
        linkSync(paths.tasks, `${paths.backup}.tmp`);
        renameSync(`${paths.backup}.tmp`, paths.backup);
        const fd = openSync(paths.tmp, 'w');
        writeSync(fd, after);
        fsyncSync(fd);
        closeSync(fd);
        renameSync(paths.tmp, paths.tasks);
        recordWrite(paths, after);
      }
      return result;
    } finally {
      lock.release();
    }
  };

  const oursPaths = state('ours');
  const prevPaths = state('previous');
  const store = new StateStore(oursPaths, 'launchpad bench');
  bench.fact(
    'generated state file',
    `${TASKS} tasks, ${(statSync(oursPaths.tasks).size / 1048576).toFixed(2)} MiB (seed ${SEED}); ours and the previous transaction each on their own copy`,
  );

  // One task's attempts change, as a dispatch or a failure changes one task.
  let n = 0;
  const touch = (f) => {
    const t = f.tasks[n++ % TASKS];
    t.attempts = (t.attempts + 1) % 3;
  };
  // The session's transactions and a person's edits: the unchanged tasks shared (frozen), the one changed copied.
  const { writableTask } = bench.core('taskFile/draft');
  const touchShared = (f) => {
    const t = writableTask(f, f.tasks[n++ % TASKS]);
    t.attempts = (t.attempts + 1) % 3;
  };
  const write = await bench.pair(
    () => store.transact(touchShared, { sharedTasks: true }),
    () => previousTransact(prevPaths, touch),
    { warmup: 5, reps: 30 },
  );
  bench.check('StateStore.transact(), one task changed: lock + load + mutate + save + unlock', write.ours, {
    budgetMs: BUDGET_MS,
    note: `anchor: the previous transaction ${write.peer.median.toFixed(1)} ms, ours ${write.ratio.toFixed(2)}× it`,
  });
  bench.checkRatio('  the same, vs the previous transaction', write, { peerName: 'previous transaction' });
  bench.info(
    'StateStore.transact(), one task changed, on a whole copy of the parse (a caller that writes tasks directly)',
    await bench.time(() => store.transact(touch), { warmup: 5, reps: 30 }),
  );
  const read = await bench.pair(
    () => store.transact((f) => f.tasks.length, { sharedTasks: true }),
    () => previousTransact(prevPaths, (f) => f.tasks.length),
    { warmup: 5, reps: 30 },
  );
  bench.checkRatio('StateStore.transact(), read-only', read, { peerName: 'previous transaction' });

  // Another writer between two of ours: the bytes are not the snapshot's, so the file is parsed.
  const other = new StateStore(oursPaths, 'launchpad add', false); // as another process: no shared snapshot
  bench.info(
    'StateStore.transact() after another process rewrote the file (whole parse)',
    await bench.time(() => store.transact(touch), {
      warmup: 3,
      reps: 15,
      before: () => other.transact(touch),
    }),
  );
  bench.info(
    'StateStore.load(), the bytes it last wrote (a copy of the parse)',
    await bench.time(() => store.load(), { warmup: 5, reps: 30 }),
  );
  bench.info(
    '  a copy of the parse alone (copyJson)',
    await bench.time(() => bench.core('taskFile/snapshot').copyJson(parsed.file), { warmup: 5, reps: 30 }),
  );

  // The controller's state work for one task: ours, one transaction that records the last task
  // completed, orders the pool and claims the head of the batch (a completion runs the next pass
  // in its own transaction); before, a read-only pool pass, a claim, then the completion.
  const claimed = [];
  // The controller's pass at max_parallel 1 with nothing running: it claims the head of the pool.
  const pass = (f) => {
    transitions.markDependencyFailures(f);
    // One walk of the pool, as the controller's pass (poolPass.ts): the eligible pool, the tasks
    // missing a validation command, the next retry time.
    const batch = dag.selectBatch(dag.scanPool(f.tasks).eligible, [], 1);
    return batch[0]?.id;
  };
  const claim = (f, id) =>
    id && transitions.dispatchTask(f, id, { agentId: 'agent_bench', branch: `harness-${id}`, baseCommit: 'abc1234' });
  let running;
  const ours = async () => {
    running = await store.transact(
      (f) => {
        if (running) transitions.completeTask(f, running);
        const next = pass(f);
        claim(f, next);
        return next;
      },
      { sharedTasks: true },
    );
    claimed.push(running);
  };
  const previous = async () => {
    const id = await previousTransact(prevPaths, pass);
    if (!id) return;
    await previousTransact(prevPaths, (f) => void claim(f, id));
    await previousTransact(prevPaths, (f) => void transitions.completeTask(f, id));
  };
  await store.transact(() => undefined); // the other writer's bytes: parsed once, as a run's first pass
  const perTask = await bench.pair(ours, previous, { warmup: 3, reps: 20 });
  if (claimed.some((id) => !id)) throw new Error('the pool ran out of eligible tasks during the bench');
  bench.checkRatio('controller state work per task: completion + pool + claim (1 transaction; before: 3)', perTask, {
    peerName: 'previous transactions',
  });
}
