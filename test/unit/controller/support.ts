// Shared by the controller's end-to-end tests: `launchpad run` (the built CLI) as a child
// process on real repositories, scripted agents composed per task, waiting on conditions
// (never on fixed sleeps), and the checks every test repeats (log lines, processes, git).
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

import { CLI } from '../helpers/cli';
import { git, makeRepo } from '../helpers/gitRepo';
import { agent, type HarnessOptions, makeHarness, readLog } from '../helpers/harness';
import { afterEveryFile, afterEveryTest } from '../helpers/rootHooks';
import { tempDir } from '../helpers/tmp';

export { git, writeFiles } from '../helpers/gitRepo';
export { agent, readLog, readTasks, taskById } from '../helpers/harness';
export { tempDir } from '../helpers/tmp';

/**
 * A private copy of dist/cli.js taken when the tests load: other people rebuild dist/ while
 * these tests run, and a half-written bundle must not fail a run here.
 */
export const CLI_COPY = (() => {
  // CONTROLLER_TEST_CLI: another build to test (e.g. a deliberately broken one, to see tests fail).
  if (process.env.CONTROLLER_TEST_CLI) return process.env.CONTROLLER_TEST_CLI;
  // Not a tempDir: those go after each test file, and this copy serves every file of the process.
  const dir = mkdtempSync(join(tmpdir(), 'launchpad-cli-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const copy = join(dir, 'cli.js');
  for (let i = 0; i < 20; i++) {
    const before = statSync(CLI).size;
    copyFileSync(CLI, copy);
    if (statSync(copy).size === before && before > 0 && statSync(CLI).size === before) break;
  }
  return copy;
})();

export interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Started {
  child: ChildProcess;
  done: Promise<Result>;
  output(): { stdout: string; stderr: string };
}

const children = new Set<ChildProcess>();

/**
 * The environment a user would have: nothing of ours inherited from the test's own, but the
 * approval of the repository's commands every unit test has (helpers/approval.ts).
 */
function cleanEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env))
    if ((key.startsWith('LAUNCHPAD_') && key !== 'LAUNCHPAD_TRUST') || key.startsWith('GIT_') || key === 'HARNESS_STATE_ROOT')
      delete env[key];
  return { ...env, ...extra };
}

/** Any CLI command, without blocking the test process. */
export function startLaunchpad(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Started {
  const child = spawn(process.execPath, [CLI_COPY, ...args], { cwd, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<Result>((resolve) =>
    child.on('close', (code, signal) => {
      children.delete(child);
      resolve({ code, signal, stdout, stderr });
    }),
  );
  return { child, done, output: () => ({ stdout, stderr }) };
}

export function launchpad(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Result> {
  return startLaunchpad(cwd, args, env).done;
}

/** `launchpad run --agent CMD …` in `root`. */
export function startRun(root: string, agentCommand: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Started {
  return startLaunchpad(root, ['run', '--agent', agentCommand, ...args], env);
}

export function run(root: string, agentCommand: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<Result> {
  return startRun(root, agentCommand, args, env).done;
}

/** A runs's result as one string for assertion messages. */
export function show(r: Result, root?: string): string {
  return `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}${root ? `\n--- log\n${readLog(root).join('\n')}` : ''}`;
}

// A test that failed half-way must not leave a controller (and its agents) running.
afterEveryTest(async () => {
  const left = [...children];
  for (const c of left) c.kill('SIGTERM');
  await Promise.all(
    left.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          const t = setTimeout(() => c.kill('SIGKILL'), 8000);
          c.once('close', () => {
            clearTimeout(t);
            resolve();
          });
        }),
    ),
  );
});

/** A harness (repo + task file) whose default worktree folder beside it goes with the temp dirs. */
export function harness(opts: HarnessOptions): string {
  const root = makeHarness(opts);
  worktreeFolders.push(defaultWorktreeRoot(root));
  return root;
}

/** A plain repository (no harness yet), cleaned up the same way. */
export function repo(files?: Record<string, string>): string {
  const root = makeRepo(files);
  worktreeFolders.push(defaultWorktreeRoot(root));
  return root;
}

const worktreeFolders: string[] = [];
afterEveryFile(() => {
  for (const dir of worktreeFolders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export function defaultWorktreeRoot(root: string): string {
  return join(dirname(root), `${basename(root)}.launchpad-worktrees`);
}

/** Rewrites harness-tasks.json by hand (as a person or a crashed controller left it). */
export function editTaskFile(root: string, edit: (file: any) => void): void {
  const path = join(root, 'harness-tasks.json');
  const file = JSON.parse(readFileSync(path, 'utf8'));
  edit(file);
  writeFileSync(path, JSON.stringify(file, null, 2) + '\n');
}

export function patchTask(root: string, id: string, patch: Record<string, unknown>): void {
  editTaskFile(root, (file) => {
    const t = file.tasks.find((x: { id: string }) => x.id === id);
    if (!t) throw new Error(`no task ${id}`);
    Object.assign(t, patch);
  });
}

/** Single-quoted for /bin/sh. */
export function shq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A fixture agent as a command line, optionally with arguments (already shell words). */
export function agentCmd(name: string, ...args: string[]): string {
  return [shq(agent(name)), ...args].join(' ');
}

/** One agent command line that runs a different command per task id (`*` for the rest). */
export function byTask(cases: Record<string, string>, fallback: string): string {
  const arms = Object.entries(cases).map(([id, cmd]) => `${shq(id)}) ${cmd} ;;`);
  return `case "$LAUNCHPAD_TASK_ID" in ${arms.join(' ')} *) ${fallback} ;; esac`;
}

/** A directory for gate files: gate.sh waits for <dir>/<task-id>. */
export function gates(): { dir: string; open(id: string): void; waiting(id: string): boolean } {
  const dir = tempDir('launchpad-gates-');
  return {
    dir,
    open: (id) => writeFileSync(join(dir, id), ''),
    waiting: (id) => existsSync(join(dir, `${id}.waiting`)),
  };
}

/** Polls until `check` returns something truthy; fails with `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => T | undefined | null | false, timeoutMs = 60_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Waits for a progress log line matching `re`. */
export function waitForLog(root: string, re: RegExp, timeoutMs = 60_000): Promise<string> {
  return waitFor(`a log line ${re}`, () => readLogSafe(root).find((l) => re.test(l)), timeoutMs);
}

function readLogSafe(root: string): string[] {
  try {
    return readLog(root);
  } catch {
    return [];
  }
}

const LINE_RE = /^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\] \[SESSION-(\d+)\] (\S+)(?: \[([^\]]+)\])?(?: \[([A-Z_]+)\])?(?: (.*))?$/;

const CATEGORIES = new Set([
  'ENV_SETUP',
  'CONFIG',
  'TASK_EXEC',
  'TEST_FAIL',
  'AGENT_FAIL',
  'MERGE_CONFLICT',
  'TIMEOUT',
  'DEPENDENCY',
  'SESSION_TIMEOUT',
  'INTEGRATION',
]);

export interface Line {
  raw: string;
  session: number;
  type: string;
  task: string | undefined;
  category: string | undefined;
  message: string;
}

/** The progress log, parsed; every line must follow the log grammar. */
export function logLines(root: string): Line[] {
  return readLog(root).map((raw) => {
    const m = LINE_RE.exec(raw);
    assert.ok(m, `log line does not follow the grammar: ${raw}`);
    // Session-level lines have no task id: a lone bracketed category is not a task.
    const [task, category] = !m[5] && m[4] && CATEGORIES.has(m[4]) ? [undefined, m[4]] : [m[4], m[5]];
    return { raw, session: Number(m[2]), type: m[3]!, task, category, message: m[6] ?? '' };
  });
}

/** Lines of one type (and task). */
export function linesOf(root: string, type: string, task?: string): Line[] {
  return logLines(root).filter((l) => l.type === type && (task === undefined || l.task === task));
}

/** The task ids of every BATCH line, in order. */
export function batches(root: string): string[][] {
  return linesOf(root, 'BATCH').map((l) => {
    const m = /^dispatching (\d+) tasks?: \[(.*)\]$/.exec(l.message);
    assert.ok(m, `BATCH line: ${l.raw}`);
    const ids = m[2]!.split(', ');
    assert.equal(ids.length, Number(m[1]), `BATCH count: ${l.raw}`);
    return ids;
  });
}

/** The STATS line's fields (the last one, or the session's). */
export function stats(root: string, session?: number): Record<string, number> {
  const all = linesOf(root, 'STATS').filter((l) => session === undefined || l.session === session);
  const last = all.at(-1);
  assert.ok(last, 'no STATS line');
  return Object.fromEntries(last.message.split(' ').map((kv) => [kv.split('=')[0]!, Number(kv.split('=')[1])]));
}

/** Alive and not a zombie (a zombie has ended; only its exit status waits to be collected). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return existsSync(`/proc/${pid}`) || process.platform !== 'linux';
  }
}

/** Waits until none of `pids` is running (a killed group may take a moment to be reaped). */
export async function assertAllGone(pids: number[], what: string): Promise<void> {
  await waitFor(`${what} (pids ${pids.join(', ')}) to end`, () => pids.every((p) => !alive(p)), 10_000).catch(() => {
    assert.fail(`${what} still running: ${pids.filter(alive).join(', ')}`);
  });
}

/** Pids an agent fixture wrote to `<dir>/<task>.<role>`, waiting until each file is there. */
export async function pidsOf(dir: string, task: string, roles: string[] = ['agent', 'child', 'grandchild']): Promise<number[]> {
  return waitFor(`pid files of ${task}`, () => {
    const pids = roles.map((r) => {
      const p = join(dir, `${task}.${r}`);
      return existsSync(p) ? Number(readFileSync(p, 'utf8').trim()) : NaN;
    });
    return pids.every((p) => Number.isInteger(p) && p > 0) ? pids : undefined;
  });
}

/** Branches named harness-*. */
export function harnessBranches(root: string): string[] {
  const out = git(root, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/harness-*');
  return out ? out.split('\n') : [];
}

/** Worktrees other than the main one. */
export function extraWorktrees(root: string): string[] {
  return git(root, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .map((l) => l.slice('worktree '.length))
    .slice(1);
}

/** Merge commits on the first-parent line of `branch`, newest first: [subject, parent count]. */
export function merges(root: string, branch = 'main'): Array<{ subject: string; parents: number }> {
  const out = git(root, 'log', '--first-parent', '--format=%P%x09%s', branch);
  return out
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [parents, subject] = l.split('\t');
      return { subject: subject!, parents: parents!.split(' ').length };
    })
    .filter((c) => c.parents > 1);
}

/** Files of a directory, sorted (empty when it does not exist). */
export function ls(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

export function read(path: string): string {
  return readFileSync(path, 'utf8');
}

export function mkdirp(path: string): string {
  mkdirSync(path, { recursive: true });
  return path;
}

/** Asserts the lines of one task appear in this order of types (others may be in between). */
export function assertOrder(root: string, task: string, types: string[]): void {
  const seen = logLines(root)
    .filter((l) => l.task === task)
    .map((l) => l.type);
  let i = 0;
  for (const t of seen) if (t === types[i]) i++;
  assert.equal(i, types.length, `lines of ${task} not in the order ${types.join(' → ')}: ${seen.join(', ')}`);
}

/**
 * Commits git cannot reach from any ref (reflogs not counted) whose message starts with a task
 * id in brackets — the agents' commits: `[task-001] …`. Each as `sha subject`.
 */
export function unreachableAgentCommits(root: string): string[] {
  const out = git(root, 'fsck', '--unreachable', '--no-reflogs', '--no-progress');
  return out
    .split('\n')
    .map((l) => /^unreachable commit ([0-9a-f]+)$/.exec(l)?.[1])
    .filter((sha): sha is string => sha !== undefined)
    .map((sha) => `${sha.slice(0, 7)} ${git(root, 'log', '-1', '--format=%s', sha)}`)
    .filter((c) => /^\S+ \[[^\]]+\]/.test(c));
}

/** Refs under refs/launchpad/ (kept attempts), sorted. */
export function launchpadRefs(root: string): string[] {
  const out = git(root, 'for-each-ref', '--format=%(refname)', 'refs/launchpad/');
  return out ? out.split('\n').sort() : [];
}

/** Files of `commit`'s tree under `dir`, with their contents. */
export function treeFiles(root: string, commit: string, dir: string): Record<string, string> {
  const names = git(root, 'ls-tree', '-r', '--name-only', commit, '--', dir);
  return Object.fromEntries((names ? names.split('\n') : []).map((f) => [f, git(root, 'show', `${commit}:${f}`)]));
}
