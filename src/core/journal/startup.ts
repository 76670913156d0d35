// Session start-up, steps 1 to 5, as data (the CLI prints it, `start --json` emits it, the
// editor renders it as Markdown): where we are, what the journal says, the git state, the task
// status, the environment's health. Step 6 (the focus question) is sessionFocus.ts.
import { accessSync, constants, existsSync } from 'node:fs';
import { relative } from 'node:path';

import { lastMeaningfulLine } from '../controller/agentOutput';
import { Git } from '../git/git';
import { InputError } from '../inputError';
import { runProcess } from '../process/runProcess';
import { readTasksJson, syncSpec } from '../specTasks/specFiles';
import { commitOwnWrites } from '../specTasks/specGit';
import { specTaskRef } from '../specTasks/specImport';
import { isOwnPath, StatePaths } from '../statePaths';
import type { TaskFile } from '../taskFile/schema';
import { StateStore } from '../taskFile/store';
import { analyzeTasks, eligibleTasks } from '../tasks/dag';
import type { JournalEntry } from './entrySchema';
import { Journal } from './journal';
import { checkSpecName, findProjectRoot, JournalPaths, listSpecs } from './journalPaths';

/** Entries step 2 reads. */
export const CONTEXT_ENTRIES = 20;
/** Step 5's time limit when harness-tasks.json does not set session_config.health_check_timeout_seconds. */
export const HEALTH_TIMEOUT_S = 600;

export type StepStatus = 'ok' | 'warn' | 'fail' | 'skipped';

export interface TaskRef {
  id: string;
  title: string;
  reason?: string;
}

export interface TaskProgress {
  total: number;
  completed: number;
  percent: number;
  next: TaskRef | null;
  blocked: TaskRef[];
}

export interface StartupSummary {
  root: string;
  spec: string | null;
  directory: { status: StepStatus; cwd: string; root: string; git_toplevel: string; markers: string[] };
  progress: {
    status: StepStatus;
    entries_read: number;
    accomplishments: string[];
    unresolved_blockers: Array<{ spec: string; task_id: string; issue: string; since: string }>;
    next_steps: string[];
  };
  git: {
    status: StepStatus;
    branch: string | null;
    expected_branch: string | null;
    status_lines: string[];
    recent_commits: string[];
    warnings: string[];
  };
  tasks: {
    status: StepStatus;
    harness: TaskProgress | null;
    spec: (TaskProgress & { name: string; next_parent: TaskRef | null }) | null;
    specs_available: string[];
    warnings: string[];
  };
  health: { status: 'pass' | 'fail' | 'skipped'; source: string | null; detail: string; duration_ms: number | null };
}

/** Step 1 failed: not a project, not a repository. Exit 2. */
export class StartupError extends InputError {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

export interface StartupOptions {
  cwd: string;
  dir?: string | undefined;
  env?: NodeJS.ProcessEnv;
  spec?: string | undefined;
  signal?: AbortSignal;
  /** Step 5 may run a command (harness-init.sh, session_config.health_check); false skips it. */
  runHealthCheck?: boolean;
}

export async function gatherStartup(opts: StartupOptions): Promise<StartupSummary> {
  const env = opts.env ?? process.env;
  if (opts.spec !== undefined) checkSpecName(opts.spec);
  // Step 1
  const root = findProjectRoot(opts.cwd, opts.dir, env);
  if (!root) {
    const where = opts.dir ?? env.HARNESS_STATE_ROOT;
    throw new StartupError(
      where
        ? `not a project: ${where} holds neither harness-tasks.json nor .agent-os/`
        : `not in a project: no harness-tasks.json or .agent-os/ in ${opts.cwd} or any parent directory (run "launchpad init" in the project, or pass --dir)`,
    );
  }
  const git = new Git(root);
  const toplevel = await git.toplevel();
  if (!toplevel) throw new StartupError(`not a git repository: ${root} (Launchpad works on a git repository)`);
  const paths = new StatePaths(root);
  const jpaths = new JournalPaths(paths);
  const markers = ['harness-tasks.json', '.agent-os'].filter((m) => existsSync(`${root}/${m}`));
  const directory = { status: 'ok' as StepStatus, cwd: opts.cwd, root, git_toplevel: toplevel, markers };

  // Step 2 (a journal that cannot be read stops here: exit 2, naming the file)
  const journal = new Journal(jpaths, 'launchpad start');
  const all = journal.read().entries;
  const progress = progressContext(all);

  // Step 3
  const gitState = await gitStep(git, root, toplevel, all);

  // Step 4
  let file: TaskFile | undefined;
  const taskWarnings: string[] = [];
  const store = new StateStore(paths, 'launchpad start');
  if (store.exists()) {
    try {
      file = store.load().file;
    } catch (err) {
      taskWarnings.push((err as Error).message);
    }
  }
  const specs = listSpecs(jpaths);
  let specProgress: StartupSummary['tasks']['spec'] = null;
  if (opts.spec !== undefined) {
    const state = await syncSpec(jpaths, opts.spec, 'launchpad start');
    if (state.changed) await commitOwnWrites(root, [jpaths.specTasksJson(opts.spec)], `Launchpad: sync tasks.json of spec ${opts.spec}`);
    const subs = state.md.filter((t) => t.type === 'subtask');
    const done = subs.filter((t) => t.checked).length;
    const next = subs.find((t) => !t.checked);
    const parent = next ? state.md.find((t) => t.id === next.parent) : undefined;
    const blocked = (readTasksJson(jpaths, opts.spec)?.tasks ?? [])
      .filter((t) => t.type === 'subtask' && t.status === 'blocked')
      .map((t) => ({ id: t.id, title: t.description, ...(t.notes ? { reason: String(t.notes) } : {}) }));
    specProgress = {
      name: opts.spec,
      total: subs.length,
      completed: done,
      percent: subs.length ? Math.floor((done * 100) / subs.length) : 0,
      next: next ? { id: next.id, title: next.description } : null,
      next_parent: parent ? { id: parent.id, title: parent.description } : null,
      blocked,
    };
  } else if (specs.length) {
    taskWarnings.push(`spec task lists in .agent-os/tasks/: ${specs.join(', ')} (pass --spec NAME to include one)`);
  }
  const harness = file ? harnessProgress(file) : null;
  const blockedAny = (harness?.blocked.length ?? 0) + (specProgress?.blocked.length ?? 0) > 0;
  const tasks = {
    status: (taskWarnings.some((w) => !w.startsWith('spec task lists')) ? 'fail' : blockedAny ? 'warn' : 'ok') as StepStatus,
    harness,
    spec: specProgress,
    specs_available: specs,
    warnings: taskWarnings,
  };

  // Step 5
  const health =
    opts.runHealthCheck === false
      ? { status: 'skipped' as const, source: null, detail: 'not run', duration_ms: null }
      : await healthStep(paths, file, opts.signal);

  return { root, spec: opts.spec ?? null, directory, progress, git: gitState, tasks, health };
}

/** Step 2 over the journal's entries: the last CONTEXT_ENTRIES of them. */
export function progressContext(all: readonly JournalEntry[]): StartupSummary['progress'] {
  const recent = all.slice(-CONTEXT_ENTRIES);
  const accomplishments: string[] = [];
  for (const e of recent) {
    if (e.type === 'task_completed') {
      const mins = typeof e.duration_minutes === 'number' ? `, ~${Math.round(e.duration_minutes * 10) / 10} min` : '';
      accomplishments.push(
        `Task ${String(e.task_id)}${e.task_description ? ` - ${String(e.task_description)}` : ''} (${String(e.spec)}${mins})`,
      );
    } else if (e.type === 'debug_resolved') {
      accomplishments.push(`Resolved: ${String(e.issue)} → ${String(e.resolution)}`);
    }
  }
  const unresolved: StartupSummary['progress']['unresolved_blockers'] = [];
  recent.forEach((e, i) => {
    if (e.type !== 'task_blocked') return;
    const later = recent.slice(i + 1);
    const resolved = later.some(
      (l) =>
        (l.type === 'task_completed' && l.task_id === e.task_id && l.spec === e.spec) ||
        (l.type === 'debug_resolved' && ((l.task_id !== undefined && l.task_id === e.task_id) || l.issue === e.issue)),
    );
    if (!resolved) unresolved.push({ spec: String(e.spec), task_id: String(e.task_id), issue: String(e.issue), since: e.timestamp });
  });
  const lastEnded = [...all].reverse().find((e) => e.type === 'session_ended');
  const nextSteps = Array.isArray(lastEnded?.next_steps) ? (lastEnded.next_steps as string[]) : [];
  return {
    status: unresolved.length ? 'warn' : 'ok',
    entries_read: recent.length,
    accomplishments,
    unresolved_blockers: unresolved,
    next_steps: nextSteps,
  };
}

async function gitStep(git: Git, root: string, toplevel: string, entries: readonly JournalEntry[]): Promise<StartupSummary['git']> {
  const warnings: string[] = [];
  const branch = (await git.currentBranch()) ?? null;
  if (!branch) warnings.push('HEAD is detached: check out the branch to work on');
  const statusOut = await git.run(['status', '--porcelain=v1', '--untracked-files=normal'], { allowFail: true });
  const statusLines = statusOut.stdout.split('\n').filter(Boolean);
  const log = await git.run(['log', '--oneline', '--no-decorate', '-5'], { allowFail: true });
  const commits = log.code === 0 ? log.stdout.split('\n').filter(Boolean) : [];
  if (!commits.length) warnings.push('the repository has no commits yet');
  // Launchpad's own files (the state files, the journal) are not a person's uncommitted work.
  const sub = relative(toplevel, root);
  const changed = (await git.trackedChanges()).filter((f) => !isOwnPath(f, sub));
  if (changed.length) {
    const shown = changed.slice(0, 10).join(', ') + (changed.length > 10 ? `, … (${changed.length} files)` : '');
    warnings.push(`uncommitted changes to tracked files: ${shown} (a run refuses to start until they are committed or stashed)`);
  }
  const lastStart = [...entries].reverse().find((e) => e.type === 'session_started' && typeof e.branch === 'string');
  const expected = (lastStart?.branch as string | undefined) ?? null;
  if (expected && branch && expected !== branch) warnings.push(`on branch ${branch}, but the last session started on ${expected}`);
  return {
    status: warnings.length ? 'warn' : 'ok',
    branch,
    expected_branch: expected,
    status_lines: statusLines,
    recent_commits: commits,
    warnings,
  };
}

export function harnessProgress(file: TaskFile): TaskProgress {
  const { states, blockedReasons } = analyzeTasks(file.tasks);
  const completed = file.tasks.filter((t) => t.status === 'completed').length;
  const next = eligibleTasks(file.tasks)[0] ?? file.tasks.find((t) => t.status !== 'completed');
  const label = (t: { id: string }) => specTaskRef(file.tasks.find((x) => x.id === t.id))?.id;
  return {
    total: file.tasks.length,
    completed,
    percent: file.tasks.length ? Math.floor((completed * 100) / file.tasks.length) : 0,
    next: next ? { id: next.id, title: next.title, ...(label(next) ? { reason: `spec subtask ${label(next)}` } : {}) } : null,
    blocked: file.tasks
      .filter((t) => states.get(t.id) === 'blocked' || states.get(t.id) === 'failed')
      .map((t) => ({ id: t.id, title: t.title, reason: blockedReasons.get(t.id) ?? t.error_log.at(-1) ?? 'failed' })),
  };
}

async function healthStep(
  paths: StatePaths,
  file: TaskFile | undefined,
  signal: AbortSignal | undefined,
): Promise<StartupSummary['health']> {
  const config = file?.session_config as (Record<string, unknown> & { health_check_timeout_seconds?: number }) | undefined;
  const timeoutS = config?.health_check_timeout_seconds ?? HEALTH_TIMEOUT_S;
  let source: string;
  let command: string | { file: string; args: string[] };
  if (existsSync(paths.initScript)) {
    source = 'harness-init.sh';
    command = isExecutable(paths.initScript) ? { file: paths.initScript, args: [] } : { file: '/bin/sh', args: [paths.initScript] };
  } else if (typeof config?.health_check === 'string' && config.health_check.trim()) {
    source = `session_config.health_check: ${config.health_check}`;
    command = config.health_check;
  } else {
    return { status: 'skipped', source: null, detail: 'no harness-init.sh and no session_config.health_check', duration_ms: null };
  }
  const r = await runProcess({
    command,
    cwd: paths.root,
    timeoutMs: timeoutS * 1000,
    captureBytes: 16 * 1024,
    ...(signal ? { signal } : {}),
  });
  const last = lastMeaningfulLine(r.tail);
  if (r.code === 0) return { status: 'pass', source, detail: last ?? 'exited 0', duration_ms: Math.round(r.durationMs) };
  const why = r.timedOut ? `timed out after ${timeoutS}s` : (r.spawnError ?? `exited with ${r.code ?? r.signal}`);
  return { status: 'fail', source, detail: `${why}${last ? `: ${last}` : ''}`, duration_ms: Math.round(r.durationMs) };
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
