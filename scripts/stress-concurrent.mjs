// Opt-in stress of concurrent mode (npm run stress:concurrent [-- TRIALS]): per trial, three
// workers (dist/cli.js run) on a 12-task DAG, one of them killed with SIGKILL at a random
// moment, then a last worker to finish the DAG. Counts double claims: a task merged or
// completed twice, or dispatched while another worker's claim on it was still open.
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
  for (const l of log) {
    const m = / (DISPATCH|Completed|ERROR|RECOVERY) \[([^\]]+)\](.*)$/.exec(l);
    if (!m) continue;
    const [, type, id, rest] = m;
    if (type === 'DISPATCH') {
      if (open.has(id)) doubles++;
      open.set(id, rest);
    } else if (type === 'Completed' || type === 'ERROR' || /took over claim/.test(rest)) open.delete(id);
  }
  const merges = git(root, 'log', '--merges', '--format=%s').split('\n').filter(Boolean);
  const ids = new Set(merges.map((s) => /^Merge \[([^\]]+)\]/.exec(s)?.[1]));
  doubles += merges.length - ids.size;
  return { doubles, merged: ids.size };
}

let totalDoubles = 0;
let incomplete = 0;
for (let t = 1; t <= trials; t++) {
  const root = makeRepo();
  const ws = ['w1', 'w2', 'w3'].map((id) => worker(root, id));
  const victim = ws[Math.floor(Math.random() * ws.length)];
  setTimeout(() => victim.child.kill('SIGKILL'), 500 + Math.random() * 4000);
  await Promise.all(ws.map((w) => w.done));
  await worker(root, 'w4').done;
  const { doubles, merged } = doubleClaims(root);
  totalDoubles += doubles;
  if (merged !== 12) incomplete++;
  console.log(`trial ${t}: merged ${merged}/12, double claims ${doubles}`);
  rmSync(root, { recursive: true, force: true });
  rmSync(join(dirname(root), `${basename(root)}.launchpad-worktrees`), { recursive: true, force: true });
}
console.log(`${trials} trials: ${totalDoubles} double claims, ${incomplete} with tasks not merged`);
process.exit(totalDoubles ? 1 : 0);
