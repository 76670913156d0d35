// kill -9 of `launchpad milestones run` in every status a milestone can be in while a run works on
// it; the next run shows the recovery plan, acts by the recovery table, ends what the dead run left
// running, and never changes the Attempts counter.
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { assertExit, git, logOf, longRun, type LongRunFixture, planOf, prompts, waitFor } from './support';

/** Starts a run, waits until `ready` holds, kills it with SIGKILL, and waits for it to be gone. */
async function killWhen(f: LongRunFixture, what: string, ready: () => boolean): Promise<void> {
  const run = f.start('run');
  try {
    await waitFor(what, () => ready() || run.child.exitCode !== null, 90_000);
  } finally {
    run.child.kill('SIGKILL');
  }
  const r = await run.done;
  assert.equal(r.signal, 'SIGKILL', `the run was still going when ${what}:\n${r.stdout}\n${r.stderr}`);
}

const BLOCK = (name: string) => `if [ ! -e "$MS_DIR/${name}.once" ]; then
  touch "$MS_DIR/${name}.once" "$MS_DIR/${name}.waiting"
  while [ ! -e "$MS_DIR/${name}.release" ]; do sleep 0.1; done
fi
`;

describe('milestones: kill -9 in each status, then resume by the recovery table', function () {
  this.timeout(300_000);

  it('planning, awaiting_approval, executing, validating and integrating each resume as the table says, Attempts unchanged', async () => {
    const verify = `if [ -e "$MS_DIR/block-verify" ]; then rm "$MS_DIR/block-verify"; touch "$MS_DIR/verify.waiting"; while [ ! -e "$MS_DIR/verify.release" ]; do sleep 0.1; done; fi`;
    const f = await longRun({ milestones: { M1: {}, M2: {} }, verify });
    f.control(
      'plan-M1.md',
      planOf('M1', 2, (k) => (k === 2 ? ['  - Depends: T1'] : [])),
    );
    const ctl = (name: string) => existsSync(join(f.ctl, name));

    // planning (M1), then awaiting_approval (M1) while M2 is planning.
    f.control('block-planner-M1');
    await killWhen(f, 'M1 planning', () => ctl('block-planner-M1.waiting') && f.milestone('M1').status === 'planning');
    assert.deepEqual([f.milestone('M1').status, f.milestone('M1').attempts], ['planning', 0]);
    rmSync(join(f.ctl, 'block-planner-M1'));
    f.control('block-planner-M2');
    await killWhen(
      f,
      'M1 awaiting approval while M2 plans',
      () => ctl('block-planner-M2.waiting') && f.milestone('M1').status === 'awaiting_approval',
    );
    let log = logOf(f.state()).join('\n');
    assert.match(log, /recovery: ended planner of M1, left running by an interrupted run/);
    assert.match(log, /\[M1\] plan-crafting restarted \(the plan file may be incomplete\)/);
    assert.deepEqual([f.milestone('M1').status, f.milestone('M1').attempts], ['awaiting_approval', 0]);
    assert.equal(f.milestone('M2').status, 'planning');
    rmSync(join(f.ctl, 'block-planner-M2'));
    let r = await f.ms('run');
    assertExit(r, 4, f.root);
    assert.match(r.stdout, /- M1 \(awaiting_approval\): ask for approval of its plan/);
    assert.match(r.stdout, /- M2 \(planning\): restart plan-crafting \(the plan file may be incomplete\)/);
    assert.equal(prompts(f.ctl, 'planner-M1-').length, 2, 'M1 was planned twice (the first plan was cut off), not a third time');

    // executing: T1 is done and ticked, T2's worker hangs.
    assertExit(await f.ms('skip', 'M2', '--reason', 'not needed for this test'), 0);
    assertExit(await f.ms('approve', 'M1'), 0);
    f.control('worker-M1-T2.sh', BLOCK('worker-T2'));
    await killWhen(f, 'T2 running', () => ctl('worker-T2.waiting'));
    assert.deepEqual([f.milestone('M1').status, f.milestone('M1').attempts], ['executing', 1]);
    assert.match(f.read(f.milestone('M1').plan!), /- \[x\] T1 Write file 1\n[\s\S]*- \[ \] T2 Write file 2/);
    r = await f.ms('status');
    assert.match(r.stdout, /- M1 \(executing\): resume run-plan from the first unfinished task \(1 of 2 done\); Attempts stays 1/);

    // validating: the resumed run finishes T2 (T1 is not run again), then the reviewer hangs.
    f.control('block-reviewer-M1');
    await killWhen(f, 'M1 in review', () => ctl('block-reviewer-M1.waiting') && f.milestone('M1').status === 'validating');
    assert.equal(prompts(f.ctl, 'worker-M1-T1-').length, 1, 'T1 was not run again');
    assert.deepEqual([f.milestone('M1').status, f.milestone('M1').attempts], ['validating', 1]);
    rmSync(join(f.ctl, 'block-reviewer-M1'));

    // integrating: the review is restarted and passes; the verification command hangs.
    f.control('block-verify');
    await killWhen(f, 'M1 integrating', () => ctl('verify.waiting') && f.milestone('M1').status === 'integrating');
    log = logOf(f.state(), 'M1').join('\n');
    assert.match(log, /review-work restarted \(the review may be incomplete\)/);
    assert.deepEqual([f.milestone('M1').status, f.milestone('M1').attempts], ['integrating', 1]);
    r = await f.ms('status');
    assert.match(r.stdout, /- M1 \(integrating\): restart the integration check, then checkpoint and merge/);

    // The last resume completes the run; Attempts is still 1 and nothing was merged twice.
    r = await f.ms('run');
    assertExit(r, 0, f.root);
    assert.deepEqual([f.milestone('M1').status, f.milestone('M1').attempts], ['completed', 1]);
    assert.equal(git(f.root, 'log', '--merges', '--first-parent', '--format=%s', 'main'), 'Merge milestone M1: Part M1');
    log = logOf(f.state()).join('\n');
    assert.match(log, /recovery: ended (reviewer of M1|verification)/);
    assert.equal(git(f.root, 'worktree', 'list', '--porcelain').match(/^worktree /gm)!.length, 1);
  });

  it('kill -9 during the final E2E gate: the next run ends the gate it left, runs it again and completes', async () => {
    // The verification command hangs once, in the final gate's throwaway worktree only.
    const verify = `case "$PWD" in *-final*) if [ ! -e "$MS_DIR/final.once" ]; then touch "$MS_DIR/final.once" "$MS_DIR/final.waiting"; while [ ! -e "$MS_DIR/final.release" ]; do sleep 0.1; done; fi;; esac`;
    const f = await longRun({ milestones: { M1: {} }, verify });
    f.control('plan-M1.md', planOf('M1', 1));
    assertExit(await f.ms('run'), 4, f.root);
    assertExit(await f.ms('approve', 'M1'), 0);
    await killWhen(f, 'the final gate', () => existsSync(join(f.ctl, 'final.waiting')) && f.state().overall.status === 'completing');
    assert.deepEqual([f.milestone('M1').status, f.milestone('M1').attempts], ['completed', 1]);
    assert.equal(git(f.root, 'log', '--merges', '--first-parent', '--format=%s', 'main'), 'Merge milestone M1: Part M1');

    const r = await f.ms('run');
    assertExit(r, 0, f.root);
    const state = f.state();
    assert.equal(state.overall.status, 'completed');
    assert.deepEqual([f.milestone('M1').status, f.milestone('M1').attempts], ['completed', 1], 'a completed milestone is not run again');
    assert.equal(git(f.root, 'log', '--merges', '--first-parent', '--format=%s', 'main'), 'Merge milestone M1: Part M1', 'merged once');
    const log = logOf(state).join('\n');
    assert.match(log, /recovery: ended verification/);
    assert.equal(log.match(/final E2E gate passed/g)?.length, 1);
    assert.equal(git(f.root, 'worktree', 'list', '--porcelain').match(/^worktree /gm)!.length, 1, 'no worktree left behind');
  });
});
