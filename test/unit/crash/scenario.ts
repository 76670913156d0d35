// One crash scenario: a fresh repository with a small task DAG, a `launchpad run` killed with
// SIGKILL at one point, then `launchpad run` again until it exits 0, and the checks that must
// hold whatever the point was. The kill is triggered from outside the product:
//   script  the scripted agent, validation or git hook kills the controller at a named point
//           (test/fixtures/agents/crash-lib.sh); it gets the controller's pid in its environment
//   log     the test kills when the n-th line matching a pattern reaches the progress log
//   tmp     the test kills when harness-tasks.json.tmp is created for the n-th time (inotify)
//   fifo    once a log line appears, the test puts a FIFO where the next state save writes
//           (harness-tasks.json.tmp): the save blocks in open(2), the test kills it there, then
//           leaves a torn regular file in the FIFO's place, as a kill in the middle of write(2) would
//   lock    the test kills as the session lock directory appears (inotify)
//   delay   the test kills a fixed time after the start
// Where a kill landed is derived afterwards from the files (see classify()).
import { execFile, execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { parseTaskFile } from '../../../src/core/taskFile/parse';
import type { TaskFile } from '../../../src/core/taskFile/schema';
import { makeRepo } from '../helpers/gitRepo';
import { agent } from '../helpers/harness';
import { tempDir } from '../helpers/tmp';

const execFileP = promisify(execFile);

export const AGENT = agent('crash-agent.sh');
const VALIDATE = agent('crash-validate.sh');
const HOOK = agent('crash-hook.sh');

/** The DAG: three roots, two joins, a chain of three; agents of 100–500 ms (task-006, the last, the longest). */
export const DAG: Array<{ id: string; deps: string[]; ms: number }> = [
  { id: 'task-001', deps: [], ms: 150 },
  { id: 'task-002', deps: [], ms: 300 },
  { id: 'task-003', deps: [], ms: 100 },
  { id: 'task-004', deps: ['task-001'], ms: 250 },
  { id: 'task-005', deps: ['task-002', 'task-003'], ms: 120 },
  { id: 'task-006', deps: ['task-004'], ms: 500 },
  { id: 'task-007', deps: ['task-005'], ms: 200 },
];
export const TASK_IDS = DAG.map((t) => t.id);
const MAX_RUNS_AFTER_KILL = 4;
/** Runs refused because the killed run left its session lock without a holder record (1 s apart). */
const LOCK_WAITS = 10;
const RUN_TIMEOUT_MS = 90_000;

export type Trigger =
  | { kind: 'script'; point: string; task: string }
  | { kind: 'log'; pattern: RegExp; nth?: number }
  | { kind: 'tmp'; nth: number }
  | { kind: 'fifo'; after: RegExp }
  | { kind: 'delay'; ms: number }
  | { kind: 'lock' }
  | { kind: 'none' };

export type Phase = 'dispatch' | 'agent' | 'validation' | 'merge' | 'state-write' | 'session';
export const PHASES: Phase[] = ['dispatch', 'agent', 'validation', 'merge', 'state-write', 'session'];

export interface ScenarioResult {
  name: string;
  trigger: Trigger;
  /** Where the kill landed and the evidence; undefined when no kill was asked for. */
  phase?: Phase;
  evidence?: string;
  /** Exit codes of the runs after the kill (the last one 0 when all went well). */
  reruns: Array<number | string>;
  /** Runs refused (exit 3) while a lock the kill left without a holder was still "being created". */
  lockWaits: number;
  durationMs: number;
  /** First run's duration (the baseline's is used to place delay kills). */
  firstRunMs: number;
  problems: string[];
  /** Files of the main branch that no task wrote (e.g. a validation's cache merged by recovery). */
  strayFiles: string[];
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await execFileP('git', args, { cwd, env: { ...process.env, LC_ALL: 'C' }, maxBuffer: 16 << 20 });
  return stdout.trim();
}

interface Scenario {
  dir: string;
  root: string;
  worktrees: string;
  control: string;
  /** session_config.worktree_pool, with included files to copy (0: no pool). */
  pool: number;
}

/** The pool scenarios' worktree_pool: 2 × max_parallel_agents, so dispatches take prepared slots. */
export const CRASH_POOL_SIZE = 6;
/** Ignored files of the main checkout that .worktreeinclude names, in the pool scenarios. */
const INCLUDED = { '.env': 'TOKEN=crash\n', 'deps/lib/index.js': 'module.exports = 1;\n' };

function makeScenario(pool: number): Scenario {
  const dir = tempDir('launchpad-crash-');
  const root = join(dir, 'repo');
  const worktrees = join(dir, 'worktrees');
  const control = join(dir, 'control');
  mkdirSync(root);
  mkdirSync(control);
  makeRepo(pool ? { 'README.md': '# crash scenario\n', '.gitignore': '.env\ndeps/\n' } : { 'README.md': '# crash scenario\n' }, root);
  if (pool) {
    for (const [path, text] of Object.entries(INCLUDED)) {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    writeFileSync(join(root, '.worktreeinclude'), Object.keys(INCLUDED).join('\n') + '\n');
  }
  const tasks = DAG.map((t) => ({
    id: t.id,
    title: `Task ${t.id}`,
    status: 'pending',
    priority: 'P1',
    depends_on: t.deps,
    attempts: 0,
    max_attempts: 4,
    context: `Write src/${t.id}/work.txt (crash-agent sleep_ms=${t.ms})`,
    files_hint: [`src/${t.id}/`],
    validation: { command: VALIDATE, timeout_seconds: 60 },
    on_failure: { cleanup: null },
    error_log: [],
  }));
  // A recovered task is retried at once (no back-off): the scenario is about crashes, not waiting.
  const file = {
    version: 3,
    session_config: {
      max_parallel_agents: 3,
      max_tasks_per_session: 50,
      retry_backoff_seconds: 0,
      ...(pool ? { worktree_pool: pool } : {}),
    },
    tasks,
    session_count: 0,
  };
  writeFileSync(join(root, 'harness-tasks.json'), JSON.stringify(file, null, 2) + '\n');
  writeFileSync(join(root, 'harness-progress.txt'), '');
  for (const hook of ['post-checkout', 'pre-merge-commit', 'post-merge']) {
    const path = join(root, '.git', 'hooks', hook);
    writeFileSync(path, `#!/bin/sh\nCRASH_HOOK=${hook} exec ${HOOK} "$@"\n`);
    chmodSync(path, 0o755);
  }
  return { dir, root, worktrees, control, pool };
}

interface RunHandle {
  pid: number;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }>;
}

/** `launchpad run` with the crash agent; CRASH_CONTROLLER_PID is its own pid (sh execs node). */
function startRun(cli: string, sc: Scenario, crashAt: string): RunHandle {
  const child = spawn(
    '/bin/sh',
    [
      '-c',
      'CRASH_CONTROLLER_PID=$$; export CRASH_CONTROLLER_PID; exec "$0" "$@"',
      process.execPath,
      cli,
      'run',
      '--agent',
      AGENT,
      '--worktree-dir',
      sc.worktrees,
    ],
    {
      cwd: sc.root,
      env: {
        ...process.env,
        HARNESS_STATE_ROOT: '',
        LAUNCHPAD_AGENT: '',
        CRASH_DIR: sc.control,
        CRASH_AT: crashAt,
        CRASH_POOL: sc.pool ? '1' : '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }>((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    });
  });
  return { pid: child.pid!, done };
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Arms a test-side trigger on a running controller. */
function arm(trigger: Trigger, sc: Scenario, run: RunHandle): { stop(): void } {
  let fired = false;
  let stopped = false;
  const fire = () => {
    if (fired || stopped) return;
    fired = true;
    kill(run.pid);
  };
  const cleanups: Array<() => void> = [];
  const log = join(sc.root, 'harness-progress.txt');

  // Calls `onLine` for every complete new log line; from inotify and a 5 ms poll.
  const followLog = (onLine: (line: string) => void) => {
    let offset = 0;
    let partial = '';
    const check = () => {
      if (stopped) return;
      let buf: Buffer;
      try {
        buf = readFileSync(log);
      } catch {
        return;
      }
      if (buf.length <= offset) return;
      const text = partial + buf.subarray(offset).toString('utf8');
      offset = buf.length;
      const lines = text.split('\n');
      partial = lines.pop()!;
      for (const line of lines) onLine(line);
    };
    const w = watch(sc.root, () => check());
    const t = setInterval(check, 5);
    cleanups.push(
      () => w.close(),
      () => clearInterval(t),
    );
  };

  switch (trigger.kind) {
    case 'log': {
      let seen = 0;
      followLog((line) => {
        if (trigger.pattern.test(line) && ++seen === (trigger.nth ?? 1)) fire();
      });
      break;
    }
    case 'tmp': {
      // Each save creates .tmp and renames it away: two inotify events, the odd ones creations.
      let events = 0;
      const w = watch(sc.root, (event, name) => {
        if (event === 'rename' && name === 'harness-tasks.json.tmp' && ++events === 2 * trigger.nth - 1) fire();
      });
      cleanups.push(() => w.close());
      break;
    }
    case 'fifo': {
      const path = join(sc.root, 'harness-tasks.json.tmp');
      let armed = false;
      followLog((line) => {
        if (armed || !trigger.after.test(line)) return;
        armed = true;
        void (async () => {
          // A save in flight may hold a regular file there for a moment: retry until ours is in.
          for (let i = 0; i < 500 && !stopped; i++) {
            try {
              await execFileP('mkfifo', [path]);
              break;
            } catch {
              await sleep(2);
            }
          }
          // The next save blocks opening it for writing: kill the controller there.
          while (!stopped) {
            let wchan = '';
            try {
              wchan = readFileSync(`/proc/${run.pid}/wchan`, 'utf8');
            } catch {
              return;
            }
            if (wchan === 'wait_for_partner' || wchan.includes('fifo')) return fire();
            await sleep(3);
          }
        })();
      });
      break;
    }
    case 'lock': {
      // The session lock appearing (mkdir), before or just after its holder record is written.
      const dir = join(sc.root, '.launchpad');
      let inner: ReturnType<typeof watch> | undefined;
      const watchInner = () => {
        if (inner || !existsSync(dir)) return;
        inner = watch(dir, (event, name) => event === 'rename' && name === 'session.lock' && fire());
        if (existsSync(join(dir, 'session.lock'))) fire();
      };
      const outer = watch(sc.root, (_event, name) => name === '.launchpad' && watchInner());
      watchInner();
      cleanups.push(
        () => outer.close(),
        () => inner?.close(),
      );
      break;
    }
    case 'delay': {
      const t = setTimeout(fire, trigger.ms);
      cleanups.push(() => clearTimeout(t));
      break;
    }
    default:
      break;
  }
  return {
    stop() {
      stopped = true;
      cleanups.forEach((c) => c());
    },
  };
}

function parseState(root: string): { file?: TaskFile; error?: string } {
  let text: string;
  try {
    text = readFileSync(join(root, 'harness-tasks.json'), 'utf8');
  } catch (err) {
    return { error: `harness-tasks.json unreadable: ${(err as Error).message}` };
  }
  const parsed = parseTaskFile(text);
  return parsed.ok ? { file: parsed.file } : { error: `harness-tasks.json does not parse: ${parsed.error.message.split('\n')[0]}` };
}

/** The files crash-agent.sh writes for a task, with their full contents (as git shows them). */
function agentWork(id: string): Record<string, string> {
  return { [`src/${id}/work.txt`]: `work of ${id}`, [`src/${id}/notes.txt`]: `notes of ${id}` };
}

/** [task id, merge commit] of every `Merge [id]` commit on main's first-parent history. */
async function mergeCommitsOnMain(root: string): Promise<Array<[string, string]>> {
  const out = await git(root, 'log', '--first-parent', '--merges', '--format=%H %s', 'main');
  return out.split('\n').flatMap((l) => {
    const m = /^([0-9a-f]+) Merge \[([^\]]+)\] /.exec(l);
    return m ? [[m[2]!, m[1]!] as [string, string]] : [];
  });
}

/** Commits no ref reaches (reflogs not counted) whose message is an agent's (`[task-id] …`). */
async function unreachableAgentCommits(root: string): Promise<string[]> {
  const out = await git(root, 'fsck', '--unreachable', '--no-reflogs', '--no-progress');
  const lost: string[] = [];
  for (const line of out.split('\n')) {
    const sha = /^unreachable commit ([0-9a-f]+)$/.exec(line)?.[1];
    if (!sha) continue;
    const subject = await git(root, 'log', '-1', '--format=%s', sha);
    if (/^\[task-\d+\]/.test(subject)) lost.push(`${sha.slice(0, 7)} ${subject}`);
  }
  return lost;
}

/** Problems where the log and the task file disagree about a completed task. */
function logAgreesWithState(root: string, file: TaskFile | undefined): string[] {
  const lines = readFileSync(join(root, 'harness-progress.txt'), 'utf8').split('\n');
  const problems: string[] = [];
  for (const t of file?.tasks ?? []) {
    if (t.status !== 'completed') continue;
    const dispatched = lines.findLastIndex((l) => l.includes(`] DISPATCH [${t.id}]`));
    const after = lines.slice(dispatched + 1);
    for (const type of ['MERGE', 'Completed']) {
      if (!after.some((l) => l.includes(`] ${type} [${t.id}]`)))
        problems.push(`${t.id} is completed but the log has no ${type} line after its last DISPATCH`);
    }
  }
  return problems;
}

/** Task ids merged into main, one entry per `Merge [id]` commit on its first-parent history. */
async function mergesOnMain(root: string): Promise<string[]> {
  const subjects = await git(root, 'log', '--first-parent', '--format=%s', 'main');
  return subjects
    .split('\n')
    .map((s) => /^Merge \[([^\]]+)\] /.exec(s)?.[1])
    .filter((id): id is string => id !== undefined);
}

/**
 * Where the controller was when it died, from what it left: a state save in flight (.tmp,
 * .bak.tmp or the state lock present), a merge (MERGE_HEAD, a merge commit the state does not
 * record, a validated task not merged yet, a completed task's branch not yet removed), a dispatch
 * (a batch's task not yet claimed, or claimed with no agent started), a validation (its process
 * record, or an agent done and no validation yet), an agent (its process record), else the
 * session's own start or end. The first that applies wins: the controller's own work before the
 * processes it was waiting for.
 */
async function classify(sc: Scenario): Promise<{ phase: Phase; evidence: string }> {
  const { root } = sc;
  const has = (p: string) => existsSync(join(root, p));
  if (has('harness-tasks.json.tmp')) return { phase: 'state-write', evidence: 'harness-tasks.json.tmp left' };
  if (has('harness-tasks.json.bak.tmp')) return { phase: 'state-write', evidence: 'harness-tasks.json.bak.tmp left' };
  if (has('.launchpad/state.lock')) return { phase: 'state-write', evidence: 'state lock held (inside a transaction)' };

  const tasks = parseState(root).file?.tasks ?? [];
  const status = new Map(tasks.map((t) => [t.id, t.status]));
  let records: string[] = [];
  try {
    records = readdirSync(join(root, '.launchpad', 'procs'));
  } catch {
    // none
  }
  const record = (id: string, kind: string) => records.includes(`${id}.${kind}.json`);
  const lines = readFileSync(join(root, 'harness-progress.txt'), 'utf8').split('\n').filter(Boolean);
  const last = new Map<string, string>();
  let lastBatch: { index: number; ids: string[] } | undefined;
  lines.forEach((line, index) => {
    const m = /^\[[^\]]+\] \[SESSION-\d+\] (\w+) \[([^\]]+)\]/.exec(line);
    if (m && TASK_IDS.includes(m[2]!)) last.set(m[2]!, line);
    const b = /\] BATCH dispatching \d+ tasks?: \[([^\]]*)\]/.exec(line);
    if (b) lastBatch = { index, ids: b[1]!.split(', ') };
  });
  const lastType = (id: string) => /\[SESSION-\d+\] (\w+)/.exec(last.get(id) ?? '')?.[1];

  if (existsSync(join(root, '.git', 'MERGE_HEAD'))) return { phase: 'merge', evidence: 'MERGE_HEAD present' };
  const merged = await mergesOnMain(root);
  const unrecorded = merged.filter((id) => status.get(id) !== 'completed');
  if (unrecorded.length) return { phase: 'merge', evidence: `${unrecorded.join(', ')} merged, not recorded completed` };
  const validated = tasks.filter((t) => t.status === 'in_progress' && /VALIDATE .*result=PASS/.test(last.get(t.id) ?? ''));
  if (validated.length) return { phase: 'merge', evidence: `${validated.map((t) => t.id).join(', ')} validated, merge not done` };
  const branches = (await git(root, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/harness-*')).split('\n').filter(Boolean);
  const uncleaned = branches.map((b) => b.replace(/^harness-/, '')).filter((id) => status.get(id) === 'completed');
  if (uncleaned.length) return { phase: 'merge', evidence: `${uncleaned.join(', ')} completed, branch not yet removed` };

  if (lastBatch) {
    const unclaimed = lastBatch.ids.filter((id) => !lines.slice(lastBatch!.index + 1).some((l) => l.includes(`DISPATCH [${id}]`)));
    if (unclaimed.length) return { phase: 'dispatch', evidence: `${unclaimed.join(', ')} batched, DISPATCH not logged` };
  }
  const starting = tasks.filter((t) => t.status === 'in_progress' && lastType(t.id) === 'DISPATCH' && !record(t.id, 'agent'));
  if (starting.length) return { phase: 'dispatch', evidence: `${starting.map((t) => t.id).join(', ')} dispatched, agent not started` };

  const validating = tasks.filter((t) => record(t.id, 'validation'));
  if (validating.length) return { phase: 'validation', evidence: `validation of ${validating.map((t) => t.id).join(', ')} running` };
  const checking = tasks.filter((t) => t.status === 'in_progress' && lastType(t.id) === 'AGENT_DONE');
  if (checking.length)
    return { phase: 'validation', evidence: `${checking.map((t) => t.id).join(', ')} agent done, validation not started` };

  const agents = tasks.filter((t) => record(t.id, 'agent'));
  if (agents.length) return { phase: 'agent', evidence: `agent of ${agents.map((t) => t.id).join(', ')} running` };

  const lastLine = lines[lines.length - 1] ?? '(empty log)';
  return { phase: 'session', evidence: `last line: ${lastLine.replace(/^\[[^\]]+\] /, '').slice(0, 80)}` };
}

/** What must hold once a run has exited 0 after the kill. */
async function finalChecks(sc: Scenario, problems: string[], strayFiles: string[]): Promise<void> {
  const { root } = sc;
  const { file, error } = parseState(root);
  if (error) problems.push(`final: ${error}`);
  for (const id of TASK_IDS) {
    const t = file?.tasks.find((x) => x.id === id);
    if (t?.status !== 'completed')
      problems.push(`${id} ended ${t?.status ?? 'missing'}, not completed (error_log: ${JSON.stringify(t?.error_log ?? [])})`);
  }
  const merged = await mergesOnMain(root);
  for (const id of TASK_IDS) {
    const n = merged.filter((m) => m === id).length;
    if (n !== 1) problems.push(`${id} has ${n} "Merge [${id}]" commits on main's first-parent history, not 1`);
  }
  const tree = (await git(root, 'ls-tree', '-r', '--name-only', 'main')).split('\n').filter(Boolean);
  for (const id of TASK_IDS) {
    for (const [file, text] of Object.entries(agentWork(id))) {
      let content = '';
      try {
        content = await git(root, 'show', `main:${file}`);
      } catch {
        // missing
      }
      if (content !== text) problems.push(`${id}'s work is not on main (${file}: ${JSON.stringify(content)})`);
    }
  }
  // Nothing unfinished was merged: each task's merge brought exactly what its agent wrote in full.
  for (const [id, merge] of await mergeCommitsOnMain(root)) {
    const brought = (await git(root, 'diff', '--name-only', `${merge}^1`, merge)).split('\n').filter(Boolean).sort();
    const full = Object.keys(agentWork(id)).sort();
    if (brought.join(',') !== full.join(','))
      problems.push(
        `the merge of ${id} (${merge.slice(0, 7)}) brought ${brought.join(', ') || 'nothing'}, not its full work ${full.join(', ')}`,
      );
  }
  // No agent commit became unreachable (every discarded or interrupted attempt is kept under a ref).
  const lost = await unreachableAgentCommits(root);
  if (lost.length) problems.push(`agent commits unreachable: ${lost.join('; ')}`);
  // The log agrees with the task file: every completed task's last DISPATCH has its MERGE and Completed after it.
  problems.push(...logAgreesWithState(root, file));
  const expected = new Set(['README.md', ...(sc.pool ? ['.gitignore'] : []), ...TASK_IDS.flatMap((id) => Object.keys(agentWork(id)))]);
  strayFiles.push(...tree.filter((f) => !expected.has(f)));
  // What a validation leaves in a worktree (its output, caches) is never a task's work.
  if (strayFiles.length) problems.push(`files on main that no task wrote: ${strayFiles.join(', ')}`);
  const dirty = await git(root, 'status', '--porcelain', '--untracked-files=no');
  if (dirty) problems.push(`main working tree left with changes: ${dirty.replace(/\n/g, '; ')}`);
  const worktrees = (await git(root, 'worktree', 'list', '--porcelain')).split('\n\n').filter(Boolean).slice(1);
  // The pool's slots stay (up to worktree_pool of them), detached and claimed by no process.
  const slot = /^worktree (.*\/\.pool\/slot-[0-9a-f]+)\nHEAD [0-9a-f]+\ndetached$/;
  const slots = sc.pool ? worktrees.filter((w) => slot.test(w.trim())) : [];
  const left = worktrees.filter((w) => !slots.includes(w));
  if (left.length) problems.push(`worktrees left: ${left.map((w) => w.split('\n')[0]).join(', ')}`);
  if (slots.length > sc.pool) problems.push(`${slots.length} worktrees in the pool, more than worktree_pool ${sc.pool}`);
  for (const w of slots) {
    const gitDir = readFileSync(join(slot.exec(w.trim())![1]!, '.git'), 'utf8')
      .replace(/^gitdir: /, '')
      .trim();
    if (existsSync(join(gitDir, 'launchpad-claim'))) problems.push(`${w.split('\n')[0]} still claimed after the last run`);
  }
  // A validation found a worktree that a new one would not be (the pool's promise).
  const unlike = join(sc.control, 'pool-unlike-new');
  if (existsSync(unlike)) problems.push(`a task's worktree was not what a new one is: ${readFileSync(unlike, 'utf8').trim()}`);
  const branches = await git(root, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/harness-*');
  if (branches) problems.push(`branches left: ${branches.replace(/\n/g, ', ')}`);
}

export async function runScenario(name: string, trigger: Trigger, cli: string, opts: { pool?: boolean } = {}): Promise<ScenarioResult> {
  const t0 = Date.now();
  const sc = makeScenario(opts.pool ? CRASH_POOL_SIZE : 0);
  const problems: string[] = [];
  const strayFiles: string[] = [];
  const result: ScenarioResult = { name, trigger, reruns: [], lockWaits: 0, durationMs: 0, firstRunMs: 0, problems, strayFiles };
  const logPath = join(sc.root, 'harness-progress.txt');
  try {
    const crashAt = trigger.kind === 'script' ? `${trigger.point}:${trigger.task}` : '';
    const first = startRun(cli, sc, crashAt);
    const armed = arm(trigger, sc, first);
    const r1 = await first.done;
    armed.stop();
    result.firstRunMs = Date.now() - t0;

    if (trigger.kind === 'none') {
      result.reruns.push(r1.code ?? String(r1.signal));
      if (r1.code !== 0) problems.push(`run without a kill exited ${r1.code ?? r1.signal}:\n${r1.output.slice(-3000)}`);
    } else {
      if (r1.signal !== 'SIGKILL') {
        problems.push(`the kill did not land: the first run exited ${r1.code ?? r1.signal} on its own`);
        return result;
      }
      const { phase, evidence } = await classify(sc);
      result.phase = phase;
      result.evidence = evidence;
      const parsed = parseState(sc.root);
      if (parsed.error) problems.push(`after the kill: ${parsed.error}`);
      // A FIFO stands for a half-written file: leave one, as a kill inside write(2) would.
      const tmpPath = join(sc.root, 'harness-tasks.json.tmp');
      if (trigger.kind === 'fifo' && existsSync(tmpPath)) {
        rmSync(tmpPath);
        const text = readFileSync(join(sc.root, 'harness-tasks.json'), 'utf8');
        writeFileSync(tmpPath, text.slice(0, text.length >> 1));
      }
      if (
        existsSync(join(sc.root, 'harness-tasks.json.bak')) &&
        !parseTaskFile(readFileSync(join(sc.root, 'harness-tasks.json.bak'), 'utf8')).ok
      ) {
        problems.push('after the kill: harness-tasks.json.bak does not parse');
      }
      let logBefore = readFileSync(logPath);
      for (let i = 0; i < MAX_RUNS_AFTER_KILL; i++) {
        const r = await startRun(cli, sc, '').done;
        // Killed between making the session lock and writing its holder record: the lock counts
        // as "being created" for a few seconds (a live starter is never raced), then as stale.
        // A person would run again a moment later; so does the test, without counting the run.
        if (r.code === 3 && /has no holder record yet/.test(r.output) && result.lockWaits < LOCK_WAITS) {
          result.lockWaits++;
          i--;
          await sleep(1000);
          continue;
        }
        result.reruns.push(r.code ?? String(r.signal));
        const logAfter = readFileSync(logPath);
        if (logAfter.length < logBefore.length || !logAfter.subarray(0, logBefore.length).equals(logBefore)) {
          problems.push(`run ${i + 2}: the progress log before it is not a byte prefix of the log after it`);
        }
        logBefore = logAfter;
        const p = parseState(sc.root);
        if (p.error) problems.push(`after run ${i + 2}: ${p.error}`);
        if (r.code === 0) break;
        if (i === MAX_RUNS_AFTER_KILL - 1) {
          problems.push(
            `never exited 0 in ${MAX_RUNS_AFTER_KILL} runs after the kill (exits ${result.reruns.join(', ')}); last output:\n${r.output.slice(-3000)}`,
          );
        }
      }
    }
    await finalChecks(sc, problems, strayFiles);
  } catch (err) {
    problems.push(`scenario error: ${(err as Error).stack ?? err}`);
  } finally {
    result.durationMs = Date.now() - t0;
    // Removed as soon as it passed: the suite's end would otherwise remove 50+ repositories at once.
    if (!problems.length) await rm(sc.dir, { recursive: true, force: true }).catch(() => undefined);
    if (problems.length) {
      // Keep what a person needs to see the failure.
      try {
        problems.push(`log:\n${readFileSync(logPath, 'utf8')}`);
        problems.push(`kept in ${keep(sc)}`);
      } catch {
        // nothing more
      }
    }
  }
  return result;
}

/** A failing scenario's state files and history, copied out of the temp dirs the suite removes. */
function keep(sc: Scenario): string {
  const dest = join(tmpdir(), `launchpad-crash-failed-${Date.now()}-${Math.random().toString(16).slice(2, 8)}`);
  mkdirSync(dest, { recursive: true });
  for (const name of ['harness-tasks.json', 'harness-tasks.json.bak', 'harness-progress.txt']) {
    const src = join(sc.root, name);
    if (existsSync(src)) copyFileSync(src, join(dest, name));
  }
  try {
    writeFileSync(
      join(dest, 'git-log.txt'),
      execFileSync('git', ['log', '--graph', '--stat', '--all'], { cwd: sc.root, encoding: 'utf8' }),
    );
  } catch {
    // no history to keep
  }
  return dest;
}
