// Opt-in stress of concurrent mode (npm run stress:concurrent [-- TRIALS]): per trial, two, three
// or four workers (in turn; dist/cli.js run) on a 20-task DAG, one of them killed with SIGKILL at
// a random moment, then a last worker to finish the DAG. Counts what the promise forbids: a task
// merged or completed twice, or dispatched while another worker's claim on it was still open; a
// task charged for a fault that was not its own (the agents never fail, so any ERROR line or a
// count above one attempt is one); a task not merged; an agent commit left unreachable. Exits 1
// on any of them.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';

const CLI = resolve('dist/cli.js');
const trials = Number(process.argv[2] ?? 20);
const TASKS = 20;
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
  for (const chain of ['a', 'b', 'c', 'd'])
    for (let i = 1; i <= 5; i++) {
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
  // Idempotent, as a real agent is: one resumed after its work was committed finds it done and
  // says so (a commit of nothing would fail, and that would be the agent's own failure).
  const agent = [
    'sleep 0.$((RANDOM % 9))',
    'mkdir -p "src/$LAUNCHPAD_TASK_ID"',
    'echo "done by $LAUNCHPAD_TASK_ID" > "src/$LAUNCHPAD_TASK_ID/done.txt"',
    'git add -A',
    '(git diff --cached --quiet || git commit -q -m "[$LAUNCHPAD_TASK_ID] done")',
    'echo RESULT:SUCCESS',
  ].join(' && ');
  const child = spawn(process.execPath, [CLI, 'run', '--agent', `bash -c ${JSON.stringify(agent)}`], {
    cwd: root,
    // The repository is made here: its commands are approved (docs/trust.md).
    env: { ...process.env, HARNESS_WORKER_ID: id, LAUNCHPAD_TRUST: '1' },
    stdio: 'ignore',
  });
  return { child, done: new Promise((r) => child.on('close', r)) };
}

/** Tasks charged for what was not their fault, and agent commits no ref reaches. */
function charged(root) {
  const file = JSON.parse(readFileSync(join(root, 'harness-tasks.json'), 'utf8'));
  const log = readFileSync(join(root, 'harness-progress.txt'), 'utf8').split('\n');
  const errors = log.filter((l) => / ERROR \[/.test(l));
  const overCharged = file.tasks.filter((t) => t.attempts > 1 || t.error_log.length).map((t) => `${t.id} (${t.attempts} attempts)`);
  // Every commit any ref of the repository or its reflogs reaches, against every commit git holds.
  const reachable = new Set(git(root, 'rev-list', '--all', '--reflog').split('\n').filter(Boolean));
  const objects = git(root, 'cat-file', '--batch-all-objects', '--batch-check=%(objectname) %(objecttype)').split('\n');
  const unreachable = objects.filter((l) => l.endsWith(' commit') && !reachable.has(l.split(' ')[0])).length;
  return { errors, overCharged, unreachable };
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
let totalCharged = 0;
let totalUnreachable = 0;
let incomplete = 0;
let takenEarly = 0;
let takenOver = 0;
const started = Date.now();
for (let t = 1; t <= trials; t++) {
  const root = makeRepo();
  const count = [2, 3, 4][t % 3];
  const ws = Array.from({ length: count }, (_, i) => worker(root, `w${i + 1}`));
  const victim = ws[Math.floor(Math.random() * ws.length)];
  setTimeout(() => victim.child.kill('SIGKILL'), 500 + Math.random() * 4000);
  await Promise.all(ws.map((w) => w.done));
  await worker(root, 'last').done;
  const { doubles, merged, early, takeovers } = doubleClaims(root);
  const { errors, overCharged, unreachable } = charged(root);
  takenOver += takeovers;
  totalDoubles += doubles;
  takenEarly += early;
  totalCharged += overCharged.length;
  totalUnreachable += unreachable;
  if (merged !== TASKS) incomplete++;
  const failed = doubles || early || merged !== TASKS || overCharged.length || unreachable;
  console.log(
    `trial ${t} (${count} workers): merged ${merged}/${TASKS}, double claims ${doubles}, charged ${overCharged.length ? overCharged.join(', ') : 0}, unreachable commits ${unreachable}${failed ? `; kept: ${root}` : ''}`,
  );
  if (failed) {
    for (const e of errors) console.log(`  ${e}`);
    continue;
  }
  rmSync(root, { recursive: true, force: true });
  rmSync(join(dirname(root), `${basename(root)}.launchpad-worktrees`), { recursive: true, force: true });
}
const minutes = ((Date.now() - started) / 60000).toFixed(1);
console.log(
  `${trials} trials in ${minutes} min: ${totalDoubles} double claims, ${takenEarly} claims taken before their lease lapsed (${takenOver} taken over after it), ${totalCharged} tasks charged for a fault not theirs, ${totalUnreachable} unreachable agent commits, ${incomplete} with tasks not merged`,
);
process.exit(totalDoubles || incomplete || takenEarly || totalCharged || totalUnreachable ? 1 : 0);
