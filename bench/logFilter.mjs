// Filtering a 1,000,000-line progress log (~130 MB), against grep on the same file and pattern.
// Budget: ≤ 3× grep, incremental on append.
//
// For each filter: the library call (readLogLines, in process, matching lines collected) and the
// CLI end to end (node dist/cli.js log … --dir D, node's start-up included), each timed
// alternately with grep. Both write to a pipe this process drains and counts, never to
// /dev/null: GNU grep notices its output is /dev/null and stops at the first match (shown
// below as information), which would compare us against a grep that did not read the file.
// grep runs with LC_ALL=C, its fastest mode. The file is in the page cache for every run.
// Then the incremental path: LogFollower.poll() after 1,000 appended lines, and tailLog().
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { generateLog } from './lib/gen.mjs';
import { spawnTimed } from './lib/harness.mjs';

export const description = 'log filter on 1,000,000 lines vs grep (≤ 3×), incremental poll, tail';

const LINES = 1_000_000;
const SEED = 7;

const CASES = [
  {
    name: '--type ERROR',
    filter: { type: 'ERROR' },
    cli: ['--type', 'ERROR'],
    grep: ['-F', '] ERROR'],
    // Only an ERROR event has "] ERROR" right after its session tag.
    exact: '^\\[[^]]*\\] \\[SESSION-[0-9]+\\] ERROR( |$)',
  },
  {
    name: '--task task-0042',
    filter: { taskId: 'task-0042' },
    cli: ['--task', 'task-0042'],
    grep: ['-F', '[task-0042]'],
    exact: '^\\[[^]]*\\] \\[SESSION-[0-9]+\\] [A-Za-z_]+ \\[task-0042\\]( |$)',
  },
  {
    name: '--category TIMEOUT',
    filter: { category: 'TIMEOUT' },
    cli: ['--category', 'TIMEOUT'],
    grep: ['-F', '[TIMEOUT]'],
    exact: '^\\[[^]]*\\] \\[SESSION-[0-9]+\\] [A-Za-z_]+( \\[[A-Za-z0-9][A-Za-z0-9._-]*\\])? \\[TIMEOUT\\]( |$)',
  },
  {
    name: "--grep 'AGENT_FAIL.*import'",
    filter: { regex: /AGENT_FAIL.*import/ },
    cli: ['--grep', 'AGENT_FAIL.*import'],
    grep: ['-E', 'AGENT_FAIL.*import'],
  },
];

const GREP_ENV = { ...process.env, LC_ALL: 'C' };

function grepCount(args, file) {
  const r = spawnSync('grep', ['-c', ...args, file], { env: GREP_ENV, encoding: 'utf8' });
  return Number(r.stdout.trim());
}

export default async function run(bench) {
  const { readLogLines, LogFollower, tailLog } = bench.core('log/logReader');
  const cli = join(bench.ROOT, 'dist', 'cli.js');
  const dir = bench.tmp('state');
  const file = join(dir, 'harness-progress.txt');
  // A state root as `init` leaves it (the log command only needs the directory).
  writeFileSync(join(dir, 'harness-tasks.json'), JSON.stringify({ version: 3, tasks: [] }, null, 2) + '\n');

  let t0 = Date.now();
  const gen = generateLog(file, LINES, { seed: SEED });
  bench.fact(
    'generated log',
    `${gen.lines.toLocaleString('en')} lines, ${(gen.bytes / 1048576).toFixed(1)} MiB, ${(gen.bytes / gen.lines).toFixed(1)} bytes/line (seed ${SEED}, ${Date.now() - t0} ms)`,
  );
  readFileSync(file); // into the page cache

  const collect = (filter) => () => {
    const out = [];
    readLogLines(file, filter, (lines) => {
      for (const l of lines) out.push(l);
    });
    return out.length;
  };

  for (const c of CASES) {
    // Do both select the same lines?
    const ours = collect(c.filter)();
    const theirs = grepCount(c.grep, file);
    let note;
    if (ours === theirs) note = `same ${ours} lines as grep ${c.grep.join(' ')}`;
    else {
      const exact = c.exact ? grepCount(['-E', c.exact], file) : undefined;
      note =
        `${ours} lines; grep ${c.grep.join(' ')} selects ${theirs}` +
        (exact === ours
          ? `, the exact grep -E '${c.exact}' ${exact} (the difference: lines mentioning the text in a message)`
          : exact !== undefined
            ? `, exact grep -E ${exact}: MISMATCH`
            : ': MISMATCH');
    }
    bench.fact(`${c.name} lines`, note);

    const lib = await bench.pair(collect(c.filter), () => spawnTimed('grep', [...c.grep, file], { env: GREP_ENV }), {
      warmup: 3,
      reps: 20,
    });
    bench.checkRatio(`${c.name} library`, lib, { budget: 3, peerName: 'grep' });
    const endToEnd = await bench.pair(
      () => spawnTimed(process.execPath, [cli, 'log', ...c.cli, '--dir', dir]),
      () => spawnTimed('grep', [...c.grep, file], { env: GREP_ENV }),
      { warmup: 2, reps: 15 },
    );
    if (endToEnd.oursValue !== ours) throw new Error(`CLI printed ${endToEnd.oursValue} lines, the library found ${ours}`);
    bench.checkRatio(`${c.name} CLI end to end`, endToEnd, { budget: 3, peerName: 'grep' });
  }

  // Floors and the /dev/null effect, for reading the figures above.
  bench.info('node start-up (node -e 0)', await bench.time(() => spawnTimed(process.execPath, ['-e', '0']), { warmup: 2, reps: 15 }));
  bench.info(
    'CLI start-up (node dist/cli.js --version)',
    await bench.time(() => spawnTimed(process.execPath, [cli, '--version']), { warmup: 2, reps: 15 }),
  );
  bench.info(
    "grep -F '] ERROR' > /dev/null (stops at the first match)",
    await bench.time(() => spawnTimed('grep', ['-F', '] ERROR', file], { env: GREP_ENV, devNull: true }), { warmup: 2, reps: 15 }),
  );
  bench.info(
    "grep -cF '] ERROR' (reads it all, prints a count)",
    await bench.time(() => spawnTimed('grep', ['-cF', '] ERROR', file], { env: GREP_ENV }), { warmup: 2, reps: 15 }),
  );

  // Incremental: a follower at the end of the 1M-line file; 1,000 lines appended before each poll.
  let session = gen.nextSession;
  const append = (i) => {
    const r = generateLog(file, 1000, { seed: 1000 + i, append: true, startSession: session });
    session = r.nextSession;
  };
  for (const [label, filter] of [
    ['all lines', {}],
    ['--type ERROR', { type: 'ERROR' }],
  ]) {
    const follower = new LogFollower(file, filter, statSync(file).size);
    let got = 0;
    const s = await bench.time(() => (got = follower.poll().length), { warmup: 5, reps: 30, before: append });
    bench.info(`LogFollower.poll() after 1,000 appended lines, ${label}`, s, {
      note: `${got} lines returned by the last poll; file ${(statSync(file).size / 1048576).toFixed(0)} MiB`,
    });
  }
  bench.info('tailLog(file, 200)', await bench.time(() => tailLog(file, 200), { warmup: 10, reps: 50 }));
}
