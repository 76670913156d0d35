// Where a long run keeps everything. The harness directory (state.md, milestones/, checkpoints/)
// and the plans and reviews live in the repository's main checkout; each milestone works in its
// own git worktree beside the repository, on its own branch, with its own Launchpad state root
// inside that worktree's ignored `.launchpad-milestone/` folder.
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

import { slugify } from './names';

/** Where `milestones init` creates harness directories, relative to the repository's top. */
export const HARNESS_PARENT = 'docs/engineering-discipline/harness';
export const PLANS_DIR = 'docs/engineering-discipline/plans';
export const REVIEWS_DIR = 'docs/engineering-discipline/reviews';
/** The milestone's Launchpad state root inside its worktree (listed in .git/info/exclude). */
export const MILESTONE_STATE_DIR = '.launchpad-milestone';
/** Run artefacts of the long run itself (lock, prompts, transcripts, process records). */
export const ARTEFACT_DIR = '.launchpad';

export class HarnessPaths {
  readonly dir: string;

  constructor(
    dir: string,
    /** The top of the repository's main checkout. */
    readonly repoTop: string,
  ) {
    this.dir = resolve(dir);
  }

  get state(): string {
    return join(this.dir, 'state.md');
  }
  get milestonesDir(): string {
    return join(this.dir, 'milestones');
  }
  get checkpointsDir(): string {
    return join(this.dir, 'checkpoints');
  }
  checkpoint(id: string): string {
    return join(this.checkpointsDir, `${id}-checkpoint.md`);
  }
  get summary(): string {
    return join(this.dir, 'summary.md');
  }
  get plansDir(): string {
    return join(this.repoTop, PLANS_DIR);
  }
  get reviewsDir(): string {
    return join(this.repoTop, REVIEWS_DIR);
  }
  get artefacts(): string {
    return join(this.dir, ARTEFACT_DIR);
  }
  /** Held by `milestones run` for its whole run, and by each decision command while it writes. */
  get lock(): string {
    return join(this.artefacts, 'run.lock');
  }
  get processRecords(): string {
    return join(this.artefacts, 'procs');
  }
  runsOf(id: string): string {
    return join(this.artefacts, 'runs', id);
  }

  /** The session slug: the harness directory's name, usable in a branch name. */
  get slug(): string {
    return slugify(basename(this.dir), 40);
  }
  branchOf(id: string): string {
    return `milestone-${this.slug}-${id}`;
  }
  /** Beside the repository, as the controller's task worktrees are: tools walking the project never see them. */
  get worktreeRoot(): string {
    return join(dirname(this.repoTop), `${basename(this.repoTop)}.launchpad-worktrees`);
  }
  worktreeOf(id: string): string {
    return join(this.worktreeRoot, this.branchOf(id));
  }
  /** Where the controller puts the task worktrees of a milestone. */
  taskWorktreesOf(id: string): string {
    return `${this.worktreeOf(id)}.tasks`;
  }
  stateRootOf(id: string): string {
    return join(this.worktreeOf(id), MILESTONE_STATE_DIR);
  }

  /** A path as state.md and checkpoints record it: relative to the repository's top. */
  rel(path: string): string {
    return relative(this.repoTop, path).split(sep).join('/');
  }
  abs(path: string): string {
    return isAbsolute(path) ? path : resolve(this.repoTop, path);
  }
  /** For messages: relative to the harness directory's parent when inside it. */
  show(path: string): string {
    return this.rel(path);
  }
}

/** The harness directories under HARNESS_PARENT of a repository (those holding a state.md). */
export function listHarnessDirs(repoTop: string): string[] {
  const parent = join(repoTop, HARNESS_PARENT);
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return [];
  }
  return names
    .map((n) => join(parent, n))
    .filter((d) => existsSync(join(d, 'state.md')))
    .sort();
}

/** The repository top of `start`: the nearest directory upward holding `.git` (a folder or a worktree's file). */
export function findRepoTop(start: string): string | undefined {
  let dir = resolve(start);
  for (;;) {
    if (existsSync(join(dir, '.git'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
