// A person's decisions and the run's own stops: skip and unblock, corrective milestones and
// rollback, abort, rate limits (nothing charged), the duration guard, the lock, and the gates asked
// on a terminal.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { main } from '../../../src/cli/main';
import { assertExit, HARNESS_REL, logOf, longRun, prompts, waitFor } from './support';

describe('milestones: decisions, rate limits and the duration guard', function () {
  this.timeout(240_000);

  it('skip blocks dependents; unblock logs the override and tells the planner what is missing; a skip cannot be undone', async () => {
    const f = await longRun({ milestones: { M1: { criteria: ['the parser exists', 'errors name the line'] }, M2: { deps: ['M1'] } } });
    assertExit(await f.ms('run'), 4);
    assertExit(await f.ms('skip', 'M1'), 2);
    assertExit(await f.ms('skip', 'M1', '--reason', 'done by hand'), 0);
    assert.equal(f.milestone('M1').status, 'skipped');
    assert.ok(logOf(f.state(), 'M1').some((l) => /skipped: done by hand \(blocks M2\)/.test(l)));

    let r = await f.ms('run');
    assertExit(r, 1, f.root);
    assert.match(r.stdout, /M2 is blocked by M1; "launchpad milestones unblock M2 --despite M1" lets it start anyway/);
    assert.deepEqual(prompts(f.ctl, 'planner-M2-'), []);

    assertExit(await f.ms('unblock', 'M2', '--despite', 'M2'), 2);
    assertExit(await f.ms('unblock', 'M2', '--despite', 'M1'), 0);
    assert.deepEqual(f.milestone('M2').unblockedDespite, ['M1']);
    assert.ok(logOf(f.state(), 'M2').some((l) => /override by a person: proceed with M2 despite M1 being skipped/.test(l)));
    r = await f.ms('run');
    assertExit(r, 4, f.root);
    assert.match(
      prompts(f.ctl, 'planner-M2-')[0]!,
      /Prerequisite M1 was skipped\. The following outputs are missing:\n- the parser exists\n- errors name the line/,
    );

    // Not un-skippable: not by retry, not by editing state.md.
    r = await f.ms('retry', 'M1');
    assertExit(r, 2);
    assert.match(r.stderr, /M1 was skipped and cannot be un-skipped; to attempt it again, add a new milestone with the same goal/);
    const statePath = join(f.harness, 'state.md');
    const text = readFileSync(statePath, 'utf8');
    writeFileSync(statePath, text.replace(/(### M1[^\n]*\n- Status: )skipped/, '$1pending'));
    r = await f.ms('status');
    assertExit(r, 2);
    const line = text.split('\n').findIndex((l) => l === '- Status: skipped') + 1;
    assert.match(
      r.stderr,
      new RegExp(`state\\.md:${line}: M1 Status: "pending", but the execution log \\(line \\d+\\) records that it was skipped`),
    );
  });

  it('a corrective milestone is inserted into the DAG; re-plan from a checkpoint resets the later milestones; completed ones are never changed', async () => {
    const f = await longRun({ milestones: { M1: {}, M2: { deps: ['M1'] }, M3: { deps: ['M2'] } } });
    assertExit(await f.ms('run'), 4);
    assertExit(await f.ms('approve', 'M1'), 0);
    assertExit(await f.ms('run'), 4, f.root);
    assert.deepEqual(
      ['M1', 'M2', 'M3'].map((id) => f.milestone(id).status),
      ['completed', 'awaiting_approval', 'pending'],
    );
    const m1 = f.milestone('M1');

    let r = await f.ms(
      'correct',
      'add',
      '--name',
      'Shared fixtures',
      '--goal',
      'Fixtures both need.',
      '--scope',
      'src/fix/',
      '--criterion',
      'src/fix exists',
      '--depends-on',
      'M1',
      '--blocks',
      'M2',
    );
    assertExit(r, 2);
    assert.match(r.stderr, /M2 is "awaiting_approval": a corrective milestone can only be put before milestones that have not started/);
    r = await f.ms(
      'correct',
      'add',
      '--name',
      'Shared fixtures',
      '--goal',
      'Fixtures both need.',
      '--scope',
      'src/fix/',
      '--criterion',
      'src/fix exists',
      '--depends-on',
      'M1',
      '--blocks',
      'M3',
      '--reason',
      'M2 review found a gap',
    );
    assertExit(r, 0);
    assert.match(r.stdout, /M4 \(Shared fixtures\) added as pending/);
    const files = readdirSync(join(f.harness, 'milestones'));
    assert.ok(files.includes('M4-shared-fixtures.md'));
    assert.match(
      readFileSync(
        join(
          f.harness,
          'milestones',
          files.find((n) => n.startsWith('M3'))!,
        ),
        'utf8',
      ),
      /## Dependencies\n- M2\n- M4\n/,
    );
    assert.equal(f.milestone('M4').status, 'pending');
    assert.ok(
      logOf(f.state(), 'M4').some((l) =>
        /corrective milestone added by a person: M2 review found a gap \(depends on M1; M3 now wait/.test(l),
      ),
    );
    r = await f.ms('run');
    assertExit(r, 4, f.root);
    assert.equal(f.milestone('M4').status, 'awaiting_approval', 'the corrective milestone goes through plan-crafting like any other');

    // Re-plan from M1's checkpoint: M2, M3, M4 back to pending with Attempts 0; M1 untouched.
    assertExit(await f.ms('correct', 'rollback', 'M2'), 2);
    assertExit(await f.ms('correct', 'rollback', 'M1'), 0);
    for (const id of ['M2', 'M3', 'M4']) {
      const m = f.milestone(id);
      assert.deepEqual([m.status, m.attempts, m.plan], ['pending', 0, null], id);
    }
    assert.deepEqual(f.milestone('M1'), m1);
    assert.ok(logOf(f.state()).some((l) => /rolled back to the checkpoint of M1 .* M2, M3, M4 back to pending with Attempts 0/.test(l)));
    assert.ok(!existsSync(join(`${f.root}.launchpad-worktrees`, 'milestone-session-M2')), "M2's worktree is gone");
  });

  it('abort stops the long run for good', async () => {
    const f = await longRun({ milestones: { M1: {} } });
    assertExit(await f.ms('abort', '--reason', 'the direction changed'), 0);
    assert.equal(f.state().overall.status, 'failed');
    const r = await f.ms('run');
    assertExit(r, 1);
    assert.match(r.stdout, /aborted: the direction changed/);
    assert.deepEqual(prompts(f.ctl, 'planner-'), []);
  });

  it('a usage limit of any agent saves the state, exits 5, charges nothing, and the next run goes on', async () => {
    const f = await longRun({ milestones: { M1: {} } });
    // Planner.
    f.control('ratelimit-planner-M1');
    let r = await f.ms('run');
    assertExit(r, 5, f.root);
    assert.match(r.stdout, /rate limit hit by the planner of M1\. State saved\. Resume with "launchpad milestones run" when ready\./);
    assert.deepEqual([f.milestone('M1').status, f.milestone('M1').attempts], ['planning', 0]);
    assert.ok(logOf(f.state()).some((l) => /rate limit: the planner of M1 hit a persistent usage limit; state saved/.test(l)));
    rmSync(join(f.ctl, 'ratelimit-planner-M1'));
    assertExit(await f.ms('run'), 4);
    assertExit(await f.ms('approve', 'M1'), 0);

    // Worker: its task gets its attempt back and the milestone keeps Attempts 1.
    f.control(
      'worker-M1-T1.sh',
      'if [ ! -e "$MS_DIR/limited" ]; then touch "$MS_DIR/limited"; echo "Claude usage limit reached. Your limit will reset at 5pm"; echo "RESULT:FAIL usage limit"; exit 0; fi\n',
    );
    f.control('ratelimit-reviewer-M1');
    r = await f.ms('run');
    assertExit(r, 5, f.root);
    assert.match(r.stdout, /rate limit hit by the worker of M1-T1/);
    assert.deepEqual([f.milestone('M1').status, f.milestone('M1').attempts], ['executing', 1]);
    const tasks = JSON.parse(
      readFileSync(join(`${f.root}.launchpad-worktrees`, 'milestone-session-M1', '.launchpad-milestone', 'harness-tasks.json'), 'utf8'),
    );
    assert.deepEqual([tasks.tasks[0].status, tasks.tasks[0].attempts, tasks.tasks[0].error_log], ['pending', 0, []]);

    // Reviewer.
    r = await f.ms('run');
    assertExit(r, 5, f.root);
    assert.match(r.stdout, /rate limit hit by the reviewer of M1/);
    assert.deepEqual([f.milestone('M1').status, f.milestone('M1').attempts], ['validating', 1]);
    rmSync(join(f.ctl, 'ratelimit-reviewer-M1'));
    assertExit(await f.ms('run'), 0, f.root);
    assert.deepEqual([f.milestone('M1').status, f.milestone('M1').attempts], ['completed', 1]);
  });

  it('the duration guard stops a milestone that runs longer than its share and asks; approve continues', async () => {
    const f = await longRun({ milestones: { M1: {} } });
    assertExit(await f.ms('run'), 4);
    const statePath = join(f.harness, 'state.md');
    const setGuard = (v: string) =>
      writeFileSync(statePath, readFileSync(statePath, 'utf8').replace(/^- Duration Guard: .*$/m, `- Duration Guard: ${v}`));
    setGuard('1s');
    assertExit(await f.ms('approve', 'M1'), 0);
    f.control(
      'worker-M1-T1.sh',
      'if [ ! -e "$MS_DIR/slow.once" ]; then touch "$MS_DIR/slow.once"; while [ ! -e "$MS_DIR/never" ]; do sleep 0.1; done; fi\n',
    );
    const r = await f.ms('run');
    assertExit(r, 4, f.root);
    const m = f.milestone('M1');
    assert.deepEqual([m.status, m.awaiting, m.attempts], ['executing', 'duration', 1]);
    assert.match(
      m.reason!,
      /has been executing for \d+s, longer than its share \(1s: the greater of the Duration Guard and Duration Guard Factor × the mean duration of the completed milestones\)/,
    );
    assert.match(r.stdout, /M1 \(Part M1\) has been executing .*continue \("launchpad milestones approve M1"\), re-scope .*or abort/);

    setGuard('2h');
    assertExit(await f.ms('approve', 'M1'), 0);
    assert.equal(f.milestone('M1').awaiting, null);
    assertExit(await f.ms('run'), 0, f.root);
    assert.deepEqual([f.milestone('M1').status, f.milestone('M1').attempts], ['completed', 1]);
  });

  it('one run at a time: a second run or a decision while a run holds the harness exits 3', async () => {
    const f = await longRun({ milestones: { M1: {} } });
    f.control('block-planner-M1');
    const first = f.start('run');
    await waitFor('the planner to start', () => existsSync(join(f.ctl, 'block-planner-M1.waiting')));
    const second = await f.ms('run');
    assertExit(second, 3);
    assert.match(second.stderr, /launchpad milestones run \(pid=\d+/);
    assertExit(await f.ms('abort', '--reason', 'x'), 3);
    f.control('block-planner-M1.release');
    assertExit(await first.done, 4);
  });

  it('on a terminal, run asks at the gates and goes on with the answers', async () => {
    const f = await longRun({ milestones: { M1: {} } });
    const questions: string[] = [];
    let out = '';
    const answers = ['', 'n', 'one more time please', 'y'];
    const code = await main(['milestones', 'run', join(f.root, HARNESS_REL)], {
      cwd: f.root,
      env: { ...process.env, MS_DIR: f.ctl, LAUNCHPAD_AGENT: '', HARNESS_STATE_ROOT: '' },
      out: (t) => void (out += t),
      stdoutTTY: false,
      columns: () => undefined,
      err: (t) => void (out += t),
      interactive: true,
      ask: async (q) => {
        questions.push(q);
        return answers.shift() ?? '';
      },
    });
    assert.equal(code, 0, out);
    assert.match(questions[0]!, /Continue, pause or abort\?/);
    assert.match(questions[1]!, /Approve M1's plan\?/);
    assert.match(questions[2]!, /Reason/);
    assert.match(questions[3]!, /Approve M1's plan\?/);
    assert.equal(questions.length, 4);
    assert.match(prompts(f.ctl, 'planner-M1-')[1]!, /one more time please/);
    assert.equal(f.state().overall.status, 'completed');
    assert.ok(readFileSync(join(f.harness, 'summary.md'), 'utf8').includes('| M1: Part M1 | ✓ completed | 1 |'));
  });
});
