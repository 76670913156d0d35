// Where the journal and the spec task lists live: `.agent-os/` in the project root (the state
// root, the folder holding harness-tasks.json). Its lock is with Launchpad's other locks.
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

import { InputError } from '../inputError';
import { JOURNAL_FILE, JOURNAL_MARKDOWN, StatePaths, TASKS_FILE } from '../statePaths';

export { JOURNAL_FILE, JOURNAL_MARKDOWN };
export const AGENT_OS_DIR = '.agent-os';

export class JournalPaths {
  constructor(readonly state: StatePaths) {}

  get root(): string {
    return this.state.root;
  }
  get agentOs(): string {
    return join(this.root, AGENT_OS_DIR);
  }
  get progressDir(): string {
    return join(this.agentOs, 'progress');
  }
  /** The source of truth. */
  get json(): string {
    return join(this.root, JOURNAL_FILE);
  }
  /** Regenerated from progress.json after every append. */
  get markdown(): string {
    return join(this.root, JOURNAL_MARKDOWN);
  }
  get archiveDir(): string {
    return join(this.progressDir, 'archive');
  }
  archiveFile(month: string): string {
    return join(this.archiveDir, `${month}.json`);
  }
  /** Held for one read-modify-write of anything under .agent-os/ (journal, tasks.md, tasks.json). */
  get lock(): string {
    return join(this.state.artefacts, 'journal.lock');
  }
  get specTasksDir(): string {
    return join(this.agentOs, 'tasks');
  }
  specTasksMd(spec: string): string {
    return join(this.specTasksDir, spec, 'tasks.md');
  }
  specTasksJson(spec: string): string {
    return join(this.specTasksDir, spec, 'tasks.json');
  }
  /** As written into tasks.json's spec_path. */
  specPath(spec: string): string {
    return `${AGENT_OS_DIR}/specs/${spec}/`;
  }
}

const SPEC_NAME = /^(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export function checkSpecName(spec: string): void {
  if (!SPEC_NAME.test(spec))
    throw new InputError(`--spec: "${spec}" is not a spec name (letters, digits, ".", "_" and "-", starting with a letter or digit)`);
}

/** Specs with a tasks.md, by name. */
export function listSpecs(paths: JournalPaths): string[] {
  try {
    return readdirSync(paths.specTasksDir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && SPEC_NAME.test(d.name) && existsSync(paths.specTasksMd(d.name)))
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
}

/**
 * The project root for the journal and `start`: --dir or $HARNESS_STATE_ROOT when given, else
 * the nearest directory at or above `start` holding harness-tasks.json or .agent-os/.
 */
export function findProjectRoot(start: string, explicit?: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const given = explicit ? resolve(start, explicit) : env.HARNESS_STATE_ROOT ? resolve(start, env.HARNESS_STATE_ROOT) : undefined;
  if (given) return isProjectRoot(given) ? given : undefined;
  let dir = resolve(start);
  for (;;) {
    if (isProjectRoot(dir)) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

export function isProjectRoot(dir: string): boolean {
  return existsSync(join(dir, TASKS_FILE)) || existsSync(join(dir, AGENT_OS_DIR));
}
