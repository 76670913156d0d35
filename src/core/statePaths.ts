// Where everything lives, relative to the state root (the directory holding harness-tasks.json).
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

import { replaceFile } from './atomicFile';
import { type Category, isCategory } from './log/logLine';

export const TASKS_FILE = 'harness-tasks.json';
export const PROGRESS_FILE = 'harness-progress.txt';
export const ACTIVE_MARKER = '.harness-active';
export const INIT_SCRIPT = 'harness-init.sh';
/** Run artefacts (prompts, transcripts, locks, process records): one ignored folder. */
export const ARTEFACT_DIR = '.launchpad';
/** The journal a person reads at the start of a session (src/core/journal/): source and its Markdown. */
export const JOURNAL_FILE = '.agent-os/progress/progress.json';
export const JOURNAL_MARKDOWN = '.agent-os/progress/progress.md';

/** The journal's folder: progress.json, progress.md, their temp files while written, the monthly archives. */
export const JOURNAL_DIR = '.agent-os/progress';

/** Files the controller owns; they never count as a user's uncommitted work. */
export const STATE_FILE_NAMES = [
  TASKS_FILE,
  `${TASKS_FILE}.bak`,
  `${TASKS_FILE}.tmp`,
  PROGRESS_FILE,
  ACTIVE_MARKER,
  JOURNAL_FILE,
  JOURNAL_MARKDOWN,
] as const;

/**
 * Everything under the state root that is Launchpad's own, as paths relative to it (a trailing
 * '/' is a whole folder, a trailing '*' any name that starts so in that folder): never a person's
 * uncommitted work, never an agent's to commit or change, spared by an in-place rollback. The
 * folders matter as much as the files: the journal writes a temporary file before renaming it,
 * and an in-place agent's `git add -A` at that moment must not commit it; a broken task file
 * restored from its backup is kept beside it as `harness-tasks.json.corrupt-<time>`.
 */
export const OWN_PATHS: readonly string[] = [...STATE_FILE_NAMES, `${TASKS_FILE}.corrupt-*`, `${ARTEFACT_DIR}/`, `${JOURNAL_DIR}/`];

/** OWN_PATHS relative to the repository's top level, for a state root at `sub` below it ('' at the top). */
export function ownPathsAt(sub: string): string[] {
  const prefix = sub && sub !== '.' ? `${sub.split('\\').join('/').replace(/\/$/, '')}/` : '';
  return OWN_PATHS.map((p) => prefix + p);
}

/** Whether a path git printed (relative to the top level, '/'-separated) is one of Launchpad's own. */
export function isOwnPath(path: string, sub: string): boolean {
  return ownPathsAt(sub).some((own) => {
    if (own.endsWith('/')) return path.startsWith(own);
    if (!own.endsWith('*')) return path === own;
    const prefix = own.slice(0, -1);
    return path.startsWith(prefix) && !path.includes('/', prefix.length);
  });
}

export class StatePaths {
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  get tasks(): string {
    return join(this.root, TASKS_FILE);
  }
  get backup(): string {
    return `${this.tasks}.bak`;
  }
  get tmp(): string {
    return `${this.tasks}.tmp`;
  }
  get progress(): string {
    return join(this.root, PROGRESS_FILE);
  }
  get activeMarker(): string {
    return join(this.root, ACTIVE_MARKER);
  }
  get initScript(): string {
    return join(this.root, INIT_SCRIPT);
  }
  get artefacts(): string {
    return join(this.root, ARTEFACT_DIR);
  }
  /** The sha256 of what Launchpad last wrote to harness-tasks.json: its own write, or a person's edit. */
  get taskFileRecord(): string {
    return join(this.artefacts, 'task-file-written.json');
  }
  /** The integration gate's state: the base branch's last check, flaky results, reverted tasks (core/integration). */
  get integrationState(): string {
    return join(this.artefacts, 'integration.json');
  }
  /** Held by a `run` for its whole session. */
  get sessionLock(): string {
    return join(this.artefacts, 'session.lock');
  }
  /** Held for one read-modify-write of harness-tasks.json (by the controller, `add`, `retry`). */
  get stateLock(): string {
    return join(this.artefacts, 'state.lock');
  }
  /** One folder per task that has run; one subfolder per attempt (AttemptPaths). */
  get runs(): string {
    return join(this.artefacts, 'runs');
  }
  runsOf(taskId: string): string {
    return join(this.runs, taskId);
  }
  /** Ids of the tasks that have attempt folders. */
  tasksWithAttempts(): string[] {
    return listDir(this.runs);
  }
  /** A task's attempt folders, oldest first (the order they were made in). */
  attemptsOf(taskId: string): AttemptPaths[] {
    const base = this.runsOf(taskId);
    const found: Array<{ attempt: AttemptPaths; key: number[] }> = [];
    for (const name of listDir(base)) {
      const m = ATTEMPT_NAME.exec(name);
      if (!m) continue;
      const attempt = new AttemptPaths(join(base, name));
      // Attempt numbers are not the order (a retry starts again from 1): the session that made
      // it, then when (its session file is written once, at creation), then the name.
      const made = mtimeOf(attempt.sessionFile) ?? mtimeOf(attempt.dir);
      if (made === undefined) continue; // removed meanwhile
      found.push({ attempt, key: [attempt.session() ?? 0, made, Number(m[1]), Number(m[2] ?? 1)] });
    }
    found.sort((a, b) => compareKeys(a.key, b.key));
    return found.map((f) => f.attempt);
  }
  /**
   * A new folder for attempt `attempt` of a task, made by session `session` for agent `agentId`:
   * attempt-N, or attempt-N.2, attempt-N.3 … when that number has a folder already (after a
   * retry or a recovery).
   */
  createAttempt(taskId: string, attempt: number, session: number, agentId?: string): AttemptPaths {
    const base = this.runsOf(taskId);
    mkdirSync(base, { recursive: true });
    let n = 1;
    const name = () => `attempt-${attempt}${n > 1 ? `.${n}` : ''}`;
    while (existsSync(join(base, name()))) n++;
    const created = new AttemptPaths(join(base, name()));
    mkdirSync(created.dir);
    writeFileSync(created.sessionFile, `${session}\n`);
    if (agentId) writeFileSync(created.agentFile, `${agentId}\n`);
    return created;
  }
  /** Records of live process groups, so a session after a crash can end them. */
  get processRecords(): string {
    return join(this.artefacts, 'procs');
  }
  /** One file per session: its event stream (runEvents/writer.ts, docs/events.md). */
  get events(): string {
    return join(this.artefacts, 'events');
  }
  /** A person's requests to stop one task's agent (controller/taskStops.ts), one file per task. */
  get stopRequests(): string {
    return join(this.artefacts, 'stop');
  }
}

const ATTEMPT_NAME = /^attempt-(\d+)(?:\.(\d+))?$/;

function compareKeys(a: number[], b: number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

/** One attempt's folder: what the agent was given, what it and the validation printed. */
export class AttemptPaths {
  constructor(readonly dir: string) {}

  get name(): string {
    return basename(this.dir);
  }
  /** The attempt's number (N of attempt-N or attempt-N.2). */
  get number(): number {
    return Number(ATTEMPT_NAME.exec(this.name)?.[1] ?? 0);
  }
  /** The prompt, as the agent got it on stdin. */
  get prompt(): string {
    return join(this.dir, 'prompt.md');
  }
  /** Everything the agent printed. */
  get transcript(): string {
    return join(this.dir, 'transcript.log');
  }
  /** Everything the validation printed (the last run of it, after a rebase). */
  get validationLog(): string {
    return join(this.dir, 'validation.log');
  }
  /** Everything session_config.worktree_setup printed in the attempt's worktree, before the agent. */
  get setupLog(): string {
    return join(this.dir, 'setup.log');
  }
  /** What the agent's tool reported about the attempt (cost, tokens, a usage limit), as JSON. */
  get agentReport(): string {
    return join(this.dir, 'agent.json');
  }
  /** The number of the session that made the attempt. */
  get sessionFile(): string {
    return join(this.dir, 'session');
  }
  /** The id of the agent that ran it (a recovery finds an interrupted attempt's folder by it). */
  get agentFile(): string {
    return join(this.dir, 'agent');
  }
  /**
   * The agent's id, written once its work is committed in the worktree and before validation
   * runs: a recovery that finds it knows uncommitted files came after (a validation's build
   * output, caches) and are not the agent's work.
   */
  get workCommittedFile(): string {
    return join(this.dir, 'work-committed');
  }

  /**
   * The agent's verdict, written the moment the agent ends and before anything else is done
   * about it: `success` or `fail [CATEGORY] reason` on the first line, `agent=<id>` on the
   * second. A recovery merges only an attempt whose verdict says success; an attempt without
   * one was interrupted and is resumed, never merged.
   */
  get verdictFile(): string {
    return join(this.dir, 'verdict');
  }

  session(): number | undefined {
    const n = Number(readOr(this.sessionFile, '').trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  }
  /**
   * When the attempt began (its session file is written once, at creation) and when a file in
   * its folder was last written (prompt, transcripts, reports), in ms since the epoch.
   */
  span(): { start: number; end: number } | undefined {
    const start = mtimeOf(this.sessionFile);
    if (start === undefined) return undefined;
    let end = start;
    for (const name of listDir(this.dir)) end = Math.max(end, mtimeOf(join(this.dir, name)) ?? end);
    return { start, end };
  }
  agent(): string | undefined {
    return readOr(this.agentFile, '').trim() || undefined;
  }
  markWorkCommitted(agentId: string): void {
    writeFileSync(this.workCommittedFile, `${agentId}\n`);
  }
  /** The agent whose work was committed in this attempt, if any was. */
  workCommittedBy(): string | undefined {
    return readOr(this.workCommittedFile, '').trim() || undefined;
  }
  /** Records the verdict durably (flushed, then renamed into place: never half written). */
  recordVerdict(agentId: string, verdict: AttemptVerdict): void {
    const first =
      verdict.kind === 'success'
        ? 'success'
        : verdict.kind === 'question'
          ? `question ${verdict.text.replace(/\s*\n\s*/g, ' ')}`
          : `fail [${verdict.category}] ${verdict.reason.replace(/\s*\n\s*/g, ' ')}`;
    replaceFile(this.verdictFile, `${first}\nagent=${agentId}\n`);
  }
  /** The recorded verdict, with the agent that earned it; undefined when none (or unreadable). */
  verdict(): (AttemptVerdict & { agentId: string }) | undefined {
    const [first = '', second = ''] = readOr(this.verdictFile, '').split('\n');
    const agentId = /^agent=(\S+)$/.exec(second.trim())?.[1];
    if (!agentId) return undefined;
    if (first === 'success') return { kind: 'success', agentId };
    if (first.startsWith('question ')) return { kind: 'question', text: first.slice('question '.length), agentId };
    const m = /^fail \[([A-Z_]+)\] (.*)$/.exec(first);
    return m && isCategory(m[1]!) ? { kind: 'fail', category: m[1], reason: m[2]!, agentId } : undefined;
  }
}

/** What an agent's end decided: success (its work goes on to validation), a failure, or a question for a person. */
export type AttemptVerdict =
  { kind: 'success' } | { kind: 'fail'; category: Category; reason: string } | { kind: 'question'; text: string };

function readOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return fallback;
  }
}

function mtimeOf(path: string): number | undefined {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * The state root: `explicit` (--dir) or HARNESS_STATE_ROOT when given, else the nearest
 * directory at or above `start` that holds harness-tasks.json, else undefined.
 */
export function findStateRoot(start: string, explicit?: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (explicit) return resolve(start, explicit);
  if (env.HARNESS_STATE_ROOT) return resolve(start, env.HARNESS_STATE_ROOT);
  let dir = resolve(start);
  for (;;) {
    if (existsSync(join(dir, TASKS_FILE))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
