// launchpad prune-attempts [ID…] [--older-than DAYS] [--dry-run]: deletes the refs keeping failed
// or interrupted attempts (refs/launchpad/attempts/<id>/<n>) and says what it deleted.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';

import { git, makeRepo, writeFiles } from '../helpers/gitRepo';
import { tempDir } from '../helpers/tmp';
import { cli, rawTask, stateRoot } from './util';

/** A repository with a harness of three tasks and kept attempts for each (one ref per attempt number). */
function repoWithKept(): string {
  const repo = makeRepo();
  stateRoot(
    {
      version: 3,
      tasks: [rawTask('done', { status: 'completed' }), rawTask('failed', { status: 'failed', attempts: 1 }), rawTask('other')],
    },
    repo,
  );
  for (const [task, n] of [
    ['done', 1],
    ['done', 2],
    ['failed', 1],
  ] as const) {
    git(repo, 'checkout', '-q', '-b', `tmp-${task}-${n}`, 'main');
    writeFiles(repo, { [`${task}-${n}.txt`]: 'work\n' });
    git(repo, 'add', `${task}-${n}.txt`);
    git(repo, 'commit', '-q', '-m', `[${task}] work`);
    git(repo, 'update-ref', `refs/launchpad/attempts/${task}/${n}`, 'HEAD');
    git(repo, 'checkout', '-q', 'main');
    git(repo, 'branch', '-q', '-D', `tmp-${task}-${n}`);
  }
  return repo;
}

const refs = (repo: string) => git(repo, 'for-each-ref', '--format=%(refname)', 'refs/launchpad/').split('\n').filter(Boolean);

describe('launchpad prune-attempts', () => {
  it('without ids: deletes the kept attempts of completed tasks and says which', () => {
    const repo = repoWithKept();
    const r = cli(['prune-attempts'], { cwd: repo });
    const lines = r.stdout.trim().split('\n');
    assert.match(lines[0]!, /^deleted refs\/launchpad\/attempts\/done\/1 \(done, completed, commit [0-9a-f]{7} of \d{4}-\d\d-\d\dT.*\)$/);
    assert.match(lines[1]!, /^deleted refs\/launchpad\/attempts\/done\/2 \(done, completed, /);
    assert.equal(lines[2], '2 kept attempt(s) of completed tasks deleted');
    assert.deepEqual(refs(repo), ['refs/launchpad/attempts/failed/1']);
    assert.equal(cli(['prune-attempts'], { cwd: repo }).stdout, 'nothing to prune: no kept attempts of completed tasks\n');
  });

  it('with ids, --older-than and --dry-run', () => {
    const repo = repoWithKept();
    const dry = cli(['prune-attempts', 'failed', '--dry-run'], { cwd: repo });
    assert.match(dry.stdout, /^would delete refs\/launchpad\/attempts\/failed\/1 \(failed, failed, commit /);
    assert.match(dry.stdout, /\n1 kept attempt\(s\) of failed would be deleted \(dry run\)\n$/);
    assert.equal(refs(repo).length, 3);
    assert.equal(
      cli(['prune-attempts', 'failed', '--older-than', '30'], { cwd: repo }).stdout,
      'nothing to prune: no kept attempts of failed older than 30 day(s)\n',
    );
    assert.match(
      cli(['prune-attempts', 'failed', '--older-than', '0'], { cwd: repo }).stdout,
      /^deleted refs\/launchpad\/attempts\/failed\/1 /,
    );
    assert.deepEqual(refs(repo), ['refs/launchpad/attempts/done/1', 'refs/launchpad/attempts/done/2']);
  });

  it('bad input exits 2 and deletes nothing: an unknown id, a bad --older-than', () => {
    const repo = repoWithKept();
    assert.match(
      cli(['prune-attempts', 'done', 'nope'], { cwd: repo }, 2).stderr,
      /no task "nope" in harness-tasks.json and no kept attempts of it/,
    );
    assert.match(
      cli(['prune-attempts', '--older-than', 'soon'], { cwd: repo }, 2).stderr,
      /--older-than: expected a number of at least 0, got "soon"/,
    );
    assert.equal(refs(repo).length, 3);
  });

  it('--help names the refs and every option, touching nothing', () => {
    const empty = tempDir();
    const r = cli(['prune-attempts', '--help'], { cwd: empty });
    assert.match(r.stdout, /^usage: launchpad prune-attempts \[ID…\] \[--older-than DAYS\] \[--dry-run\]/);
    for (const option of ['--older-than DAYS', '--dry-run', '--dir', 'refs/launchpad/attempts/'])
      assert.ok(r.stdout.includes(option), option);
    assert.deepEqual(readdirSync(empty), []);
    assert.match(
      cli(['--help'], { cwd: empty }).stdout,
      /^ {2}prune-attempts {2,}Delete the refs keeping the commits of failed or interrupted attempts/m,
    );
  });
});
