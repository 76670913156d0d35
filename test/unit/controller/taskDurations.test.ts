// The durations the pool order weighs chains by: a task's last earlier attempt, from the times of
// its attempt folder, and each attempt a session runs, from dispatch to its recorded result.
import assert from 'node:assert/strict';
import { utimesSync, writeFileSync } from 'node:fs';

import { TaskDurations } from '../../../src/core/controller/taskDurations';
import { StatePaths } from '../../../src/core/statePaths';
import { task } from '../core/fixtures';
import { tempDir } from '../helpers/tmp';

/** An attempt folder made at `start` (s since the epoch) whose last file was written at `end`. */
function attempt(paths: StatePaths, id: string, n: number, start: number, end: number): void {
  const a = paths.createAttempt(id, n, 1);
  utimesSync(a.sessionFile, start, start);
  writeFileSync(a.transcript, 'output\n');
  utimesSync(a.transcript, end, end);
}

describe('controller/taskDurations', () => {
  it("reads each unfinished task's last attempt from its folder; completed tasks and tasks without one are left out", () => {
    const paths = new StatePaths(tempDir('launchpad-durations-'));
    const t0 = 1_750_000_000;
    attempt(paths, 'retry', 1, t0, t0 + 600);
    attempt(paths, 'retry', 2, t0 + 1000, t0 + 1090); // the last one counts
    attempt(paths, 'done', 1, t0, t0 + 50);
    const a = paths.createAttempt('empty', 1, 1); // begun, nothing written since: no estimate
    utimesSync(a.sessionFile, t0, t0);
    const d = TaskDurations.fromHistory(paths, [
      task('retry', { status: 'failed', attempts: 2 }),
      task('done', { status: 'completed' }),
      task('empty', { status: 'failed', attempts: 1 }),
      task('new'),
    ]);
    assert.deepEqual([...d.estimates], [['retry', 90_000]]);
    assert.deepEqual(paths.attemptsOf('retry').at(-1)!.span(), { start: (t0 + 1000) * 1000, end: (t0 + 1090) * 1000 });
    assert.equal(paths.attemptsOf('nothing').at(-1)?.span(), undefined);
  });

  it("this session's attempts: from dispatch to the recorded result, the latest replacing an earlier estimate", () => {
    const d = new TaskDurations();
    d.dispatched('a', 1000);
    d.ended('a', 4000);
    d.dispatched('a', 5000);
    d.ended('a', 5500);
    d.ended('never-dispatched', 9000);
    assert.deepEqual([...d.estimates], [['a', 500]]);
  });
});
