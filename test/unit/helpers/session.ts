// A controller Session over a repository that holds a task file, made as a run's start makes one
// (its settings resolved from the file, the base branch's head read): for tests of one step of a
// run without the run around it.
import { headlessTerminals } from '../../../src/core/controller/headlessTerminals';
import { resolveRunConfig } from '../../../src/core/controller/runConfig';
import { Session } from '../../../src/core/controller/session';
import { Git } from '../../../src/core/git/git';
import { ProgressLog } from '../../../src/core/log/progressLog';
import { silentLogger } from '../../../src/core/logger';
import { StatePaths } from '../../../src/core/statePaths';
import { StateStore } from '../../../src/core/taskFile/store';

export async function testSession(
  root: string,
  opts: { number?: number; worktreeDir?: string } = {},
): Promise<{ s: Session; paths: StatePaths; store: StateStore }> {
  const paths = new StatePaths(root);
  const store = new StateStore(paths, 'test');
  const git = new Git(root);
  const toplevel = (await git.toplevel())!;
  const settings = { env: {}, ...(opts.worktreeDir ? { worktreeDir: opts.worktreeDir } : {}) };
  const config = resolveRunConfig(settings, store.load().file, paths, toplevel);
  const s = new Session(opts.number ?? 1, {
    git,
    store,
    config,
    paths,
    logger: silentLogger,
    progress: new ProgressLog(paths.progress),
    toplevel,
    baseBranch: 'main',
    terminals: headlessTerminals(),
  });
  s.state.head = (await git.head())!;
  return { s, paths, store };
}
