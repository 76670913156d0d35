// Opt-in stress of concurrent mode (npm run stress:concurrent [-- TRIALS]): per trial, two or
// four workers (alternately; dist/cli.js run) on a 12-task DAG, one of them killed with SIGKILL
// at a random moment, then a last worker to finish the DAG. Counts double claims: a task merged
// or completed twice, or dispatched while another worker's claim on it was still open. Exits 1
// on any double claim or any trial that did not merge all twelve tasks.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';

const CLI = resolve('dist/cli.js');
const AGENT = resolve('test/fixtures/agents/writes-done.sh');
const trials = Number(process.argv[2] ?? 20);
const git = (cwd, ...args) => execFileSync('git', args, { cwd, encoding: 'utf8' });

function makeRepo() {
  const dir = mkdtempSync(join(tmpdir(), 'lp-stress-'));
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.email', 'stress@example.com');
  git(dir, 'config', 'user.name', 'stress');
  writeFileSync(join(dir, 'README.md'), '# stress\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'init');
  const tasks = [];
  for (const chain of ['a', 'b', 'c'])
    for (let i = 1; i <= 4; i++) {
      tasks.push({
        id: `${chain}${i}`,
        title: `Task ${chain}${i}`,
        status: 'pending',
        depends_on: i > 1 ? [`${chain}${i - 1}`] : [],
        files_hint: [`src/${chain}${i}/`],
        validation: { command: `test -f src/${chain}${i}/done.txt` },
      });
    }
  writeFileSync(
    join(dir, 'harness-tasks.json'),
    JSON.stringify(
      { version: 3, session_config: { concurrency_mode: 'concurrent', lease_seconds: 2, max_parallel_agents: 2 }, tasks },
      null,
      2,
    ),
  );
  return dir;
}

function worker(root, id) {
  const agent = `sleep 0.$((RANDOM % 9)); sh '${AGENT}'`;
  const child = spawn(process.execPath, [CLI, 'run', '--agent', `bash -c ${JSON.stringify(agent)}`], {
    cwd: root,
    env: { ...process.env, HARNESS_WORKER_ID: id },
    stdio: 'ignore',
  });
  return { child, done: new Promise((r) => child.on('close', r)) };
}

function doubleClaims(root) {
  const log = readFileSync(join(root, 'harness-progress.txt'), 'utf8').split('\n');
  let doubles = 0;
  const open = new Map();
  let early = 0;
  let takeovers = 0;
  for (const l of log) {
    const m = / (DISPATCH|Completed|ERROR|RECOVERY) \[([^\]]+)\](.*)$/.exec(l);
    if (!m) continue;
    const [, type, id, rest] = m;
    // A claim of another worker is taken over only once its lease has lapsed.
    const lapsed = /took over claim.*claim of (\S+) \(generation \d+\) lapsed at (\S+)"/.exec(rest);
    if (lapsed) takeovers++;
    if (lapsed && Date.parse(/^\[([^\]]+)\]/.exec(l)[1]) < Date.parse(lapsed[2])) early++;
    if (type === 'DISPATCH') {
      if (open.has(id)) doubles++;
      open.set(id, rest);
    } else if (type === 'Completed' || type === 'ERROR' || /took over claim/.test(rest)) open.delete(id);
  }
  const merges = git(root, 'log', '--merges', '--format=%s').split('\n').filter(Boolean);
  const ids = new Set(merges.map((s) => /^Merge \[([^\]]+)\]/.exec(s)?.[1]));
  doubles += merges.length - ids.size;
  return { doubles, merged: ids.size, early, takeovers };
}

let totalDoubles = 0;
let incomplete = 0;
let takenEarly = 0;
let takenOver = 0;
const started = Date.now();
for (let t = 1; t <= trials; t++) {
  const root = makeRepo();
  const count = t % 2 ? 2 : 4;
  const ws = Array.from({ length: count }, (_, i) => worker(root, `w${i + 1}`));
  const victim = ws[Math.floor(Math.random() * ws.length)];
  setTimeout(() => victim.child.kill('SIGKILL'), 500 + Math.random() * 4000);
  await Promise.all(ws.map((w) => w.done));
  await worker(root, 'last').done;
  const { doubles, merged, early, takeovers } = doubleClaims(root);
  takenOver += takeovers;
  totalDoubles += doubles;
  takenEarly += early;
  if (merged !== 12) incomplete++;
  const failed = doubles || early || merged !== 12;
  console.log(`trial ${t} (${count} workers): merged ${merged}/12, double claims ${doubles}${failed ? `; kept: ${root}` : ''}`);
  if (failed) continue;
  rmSync(root, { recursive: true, force: true });
  rmSync(join(dirname(root), `${basename(root)}.launchpad-worktrees`), { recursive: true, force: true });
}
const minutes = ((Date.now() - started) / 60000).toFixed(1);
console.log(
  `${trials} trials in ${minutes} min: ${totalDoubles} double claims, ${takenEarly} claims taken before their lease lapsed (${takenOver} taken over after it), ${incomplete} with tasks not merged`,
);
process.exit(totalDoubles || incomplete || takenEarly ? 1 : 0);
