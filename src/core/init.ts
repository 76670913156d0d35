// Creating the state files (`init`, a first `run`, the extension's Initialize). Idempotent:
// an existing file is never touched.
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

import { Git } from './git/git';
import { logTimestamp } from './log/logLine';
import { ProgressLog } from './log/progressLog';
import { ACTIVE_MARKER, ARTEFACT_DIR, PROGRESS_FILE, StatePaths, TASKS_FILE } from './statePaths';
import { taskFileSchema } from './taskFile/schema';
import { StateStore } from './taskFile/store';

export interface InitOptions {
  /** Add the state files to the root's .gitignore. */
  gitignore?: boolean;
  /** Write a harness-init.sh template (executable) when there is none. */
  initScript?: boolean;
  /** The session the INIT line belongs to (a first `run` inits inside session 1). */
  session?: number;
}

export interface InitResult {
  created: string[];
  existing: string[];
  /** Entries appended to .gitignore. */
  ignored: string[];
}

/** What `init --gitignore` adds: the state files and the artefact folder. */
export const GITIGNORE_ENTRIES = [
  TASKS_FILE,
  `${TASKS_FILE}.bak`,
  `${TASKS_FILE}.tmp`,
  `${TASKS_FILE}.corrupt-*`,
  PROGRESS_FILE,
  ACTIVE_MARKER,
  `${ARTEFACT_DIR}/`,
];

const INIT_SCRIPT_TEMPLATE = `#!/bin/sh
# Launchpad runs this health check at the start of every session; a non-zero exit is an
# ENV_SETUP error (run once more, then the session stops). Keep it idempotent and quick.
set -e
git --version >/dev/null
echo "Environment health check complete"
`;

export async function initStateFiles(paths: StatePaths, opts: InitOptions = {}): Promise<InitResult> {
  const result: InitResult = { created: [], existing: [], ignored: [] };
  mkdirSync(paths.root, { recursive: true });
  const store = new StateStore(paths, 'launchpad init');
  const session = opts.session ?? 0;

  const file = taskFileSchema.parse({ version: 3, created: logTimestamp(), tasks: [] });
  file.last_session = null;
  if (store.create(file)) {
    result.created.push(TASKS_FILE);
    if (!existsSync(paths.progress)) result.created.push(PROGRESS_FILE);
    new ProgressLog(paths.progress).append(session, { type: 'INIT', message: `Launchpad runner initialized for project ${paths.root}` });
  } else {
    result.existing.push(TASKS_FILE);
    if (existsSync(paths.progress)) result.existing.push(PROGRESS_FILE);
    else {
      writeFileSync(paths.progress, '', { flag: 'a' });
      result.created.push(PROGRESS_FILE);
    }
  }

  if (!existsSync(paths.activeMarker)) {
    writeFileSync(paths.activeMarker, '');
    result.created.push(ACTIVE_MARKER);
  }
  if (opts.initScript) {
    if (existsSync(paths.initScript)) result.existing.push('harness-init.sh');
    else {
      writeFileSync(paths.initScript, INIT_SCRIPT_TEMPLATE, { mode: 0o755 });
      result.created.push('harness-init.sh');
    }
  }

  await excludeArtefacts(paths);
  if (opts.gitignore) result.ignored = addToGitignore(join(paths.root, '.gitignore'), GITIGNORE_ENTRIES);
  return result;
}

/**
 * The artefact folder never belongs in a commit: list it in .git/info/exclude, which is local
 * to the clone, so no tracked file changes (a changed .gitignore would make the next run refuse).
 */
export async function excludeArtefacts(paths: StatePaths): Promise<void> {
  const git = new Git(paths.root);
  const top = await git.toplevel();
  if (!top) return;
  const exclude = await git.gitPath('info/exclude');
  const rel = relative(top, paths.artefacts).split('\\').join('/');
  addToGitignore(exclude, [`/${rel}/`]);
}

/**
 * In-place mode: the state files sit in the working tree the agent commits from, so an agent's
 * `git add -A` must not pick them up (untracked ones; tracked ones a person chose to commit).
 */
export async function excludeStateFiles(paths: StatePaths, names: readonly string[]): Promise<void> {
  const git = new Git(paths.root);
  const top = await git.toplevel();
  if (!top) return;
  const rel = relative(top, paths.root).split('\\').join('/');
  addToGitignore(
    await git.gitPath('info/exclude'),
    names.map((n) => `/${rel ? `${rel}/` : ''}${n}`),
  );
}

function addToGitignore(file: string, entries: string[]): string[] {
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const have = new Set(current.split(/\r?\n/).map((l) => l.trim()));
  const missing = entries.filter((e) => !have.has(e));
  if (!missing.length) return [];
  mkdirSync(dirname(file), { recursive: true });
  const prefix = current && !current.endsWith('\n') ? '\n' : '';
  appendFileSync(file, `${prefix}${missing.join('\n')}\n`);
  return missing;
}
