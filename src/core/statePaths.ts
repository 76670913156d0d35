// Where everything lives, relative to the state root (the directory holding harness-tasks.json).
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

export const TASKS_FILE = 'harness-tasks.json';
export const PROGRESS_FILE = 'harness-progress.txt';
export const ACTIVE_MARKER = '.harness-active';
export const INIT_SCRIPT = 'harness-init.sh';
/** Run artefacts (prompts, transcripts, locks, process records): one ignored folder. */
export const ARTEFACT_DIR = '.launchpad';
/** The journal a person reads at the start of a session (src/core/journal/): source and its Markdown. */
export const JOURNAL_FILE = '.agent-os/progress/progress.json';
export const JOURNAL_MARKDOWN = '.agent-os/progress/progress.md';

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
  /** Held by a `run` for its whole session. */
  get sessionLock(): string {
    return join(this.artefacts, 'session.lock');
  }
  /** Held for one read-modify-write of harness-tasks.json (by the controller, `add`, `retry`). */
  get stateLock(): string {
    return join(this.artefacts, 'state.lock');
  }
  /** One folder per task; one subfolder per attempt with its prompt and transcripts. */
  runsOf(taskId: string): string {
    return join(this.artefacts, 'runs', taskId);
  }
  /** Records of live process groups, so a session after a crash can end them. */
  get processRecords(): string {
    return join(this.artefacts, 'procs');
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
