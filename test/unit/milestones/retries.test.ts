// The retry matrix after a failed review (by the persisted Attempts counter), plan rejection, the
// split question for a large plan, and a task that fails the milestone.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { launchpad } from '../controller/support';
import { assertExit, git, logOf, longRun, planOf, prompts } from './support';

describe('milestones: retries and gates', function () {
  this.timeout(240_000);

  it('a FAIL review walks the retry matrix: run again with the findings, plan again with them, then failed; dependents never start', async () => {
    const f = await longRun({ milestones: { M1: {}, M2: { deps: ['M1'] } } });
    f.control('verdicts-M1', 'FAIL\nFAIL\nFAIL\n');
    assertExit(await f.ms('run'), 4);
    assertExit(await f.ms('approve', 'M1'), 0);
    const firstPlan = f.milestone('M1').plan!;

    // Attempt 1 fails review → attempt 2 runs the same plan with the findings → fails → plan again.
    let r = await f.ms('run');
    assertExit(r, 4, f.root);
    let m = f.milestone('M1');
    assert.equal(m.status, 'awaiting_approval');
    assert.equal(m.attempts, 2);
    assert.notEqual(m.plan, firstPlan, 'the new plan is a new file');
    assert.ok(existsSync(join(f.root, firstPlan)), 'the old plan is kept');
    const workers = prompts(f.ctl, 'worker-M1-T1-');
    assert.equal(workers.length, 2);
    assert.doesNotMatch(workers[0]!, /Findings to address/);
    assert.match(workers[1]!, /A review of the previous attempt failed\. Findings to address:[\s\S]*finding-M1-1/);
    const planners = prompts(f.ctl, 'planner-M1-');
    assert.equal(planners.length, 2);
    assert.match(planners[1]!, /## Constraints from the failed review of the previous attempt\n[\s\S]*finding-M1-2/);
    const log = logOf(f.state(), 'M1').join('\n');
    assert.match(log, /review-work: FAIL .* after attempt 1/);
    assert.match(log, /retry: run-plan again with the review's findings \(attempt 2\)/);
    assert.match(log, /retry: plan-crafting again with the review's findings as constraints/);

    // Attempt 3 fails review → failed; M2 is blocked and never planned.
    assertExit(await f.ms('approve', 'M1'), 0);
    r = await f.ms('run');
    assertExit(r, 1, f.root);
    m = f.milestone('M1');
    assert.equal(m.status, 'failed');
    assert.equal(m.attempts, 3);
    assert.match(m.reason!, /review-work failed after 3 attempts/);
    assert.match(r.stdout, /M1 \(Part M1\) failed: review-work failed after 3 attempts/);
    assert.match(r.stdout, /M2 is blocked by M1/);
    assert.equal(f.milestone('M2').status, 'pending');
    assert.deepEqual(prompts(f.ctl, 'planner-M2-'), []);
    assert.equal(git(f.root, 'log', '--merges', '--format=%s', 'main'), '', 'nothing was merged');

    // Retry plans it again and keeps Attempts.
    assertExit(await f.ms('retry', 'M1'), 0);
    m = f.milestone('M1');
    assert.equal(m.status, 'planning');
    assert.equal(m.attempts, 3);
  });

  it('a FAIL then a PASS completes on attempt 2 with the fix the findings asked for', async () => {
    const f = await longRun({ milestones: { M1: {} } });
    f.control('verdicts-M1', 'FAIL\nPASS\n');
    assertExit(await f.ms('run'), 4);
    assertExit(await f.ms('approve', 'M1'), 0);
    assertExit(await f.ms('run'), 0, f.root);
    const m = f.milestone('M1');
    assert.equal(m.status, 'completed');
    assert.equal(m.attempts, 2);
    assert.match(m.review!, /-review-2\.md$/);
    assert.ok(existsSync(join(f.root, 'src/m1/fixed.txt')));
    assert.match(f.read(m.checkpoint!), /\*\*Attempts:\*\* 2/);
  });

  it('a rejected plan is planned again with the reason as a constraint', async () => {
    const f = await longRun({ milestones: { M1: {} } });
    assertExit(await f.ms('run'), 4);
    const first = f.milestone('M1').plan!;
    assertExit(await f.ms('reject', 'M1'), 2, undefined);
    assertExit(await f.ms('reject', 'M1', '--reason', 'split the writing into two tasks'), 0);
    assert.equal(f.milestone('M1').status, 'planning');
    assert.equal(f.milestone('M1').rejection, 'split the writing into two tasks');
    assertExit(await f.ms('run'), 4);
    const m = f.milestone('M1');
    assert.equal(m.status, 'awaiting_approval');
    assert.equal(m.attempts, 0, 'a rejection costs no attempt');
    assert.notEqual(m.plan, first);
    assert.match(prompts(f.ctl, 'planner-M1-')[1]!, /## Constraint from a person\nsplit the writing into two tasks/);
    assert.ok(logOf(f.state(), 'M1').some((l) => /plan .* rejected: split the writing into two tasks; planning again/.test(l)));
  });

  it('a plan of more than 15 tasks asks whether to split the milestone', async () => {
    const f = await longRun({ milestones: { M1: {} } });
    f.control('plan-M1.md', planOf('M1', 16));
    const r = await f.ms('run');
    assertExit(r, 4);
    assert.match(
      r.stdout,
      /awaits approval \(16 tasks\) — This milestone's plan has 16 tasks \(more than 15\): it may be too large for a single milestone\. Consider splitting it/,
    );
    const st = JSON.parse((await f.ms('status', '--json')).stdout);
    assert.equal(st.gates[0].kind, 'plan');
    assert.equal(st.gates[0].tasks, 16);
  });

  it('a task that fails after its attempts fails the milestone; a plan file outside the scope is flagged', async () => {
    const f = await longRun({ milestones: { M1: {}, M2: { deps: ['M1'] } } });
    f.control('plan-M1.md', planOf('M1', 1).replace('  - Files: src/m1/', '  - Files: src/m1/, lib/elsewhere.ts'));
    f.control('worker-M1-T1.sh', 'echo "RESULT:FAIL the fixture refuses"; exit 0\n');
    const gate = await f.ms('run');
    assertExit(gate, 4);
    assert.match(gate.stdout, /The plan touches files outside the milestone's scope: lib\/elsewhere\.ts/);
    assertExit(await f.ms('approve', 'M1'), 0);
    const r = await f.ms('run');
    assertExit(r, 1, f.root);
    const m = f.milestone('M1');
    assert.equal(m.status, 'failed');
    assert.equal(m.attempts, 1);
    assert.match(m.reason!, /M1-T1 failed after 3 attempts: \[AGENT_FAIL\] the fixture refuses/);
    assert.equal(prompts(f.ctl, 'worker-M1-T1-').length, 3);
    assert.equal(f.milestone('M2').status, 'pending');
    assert.deepEqual(prompts(f.ctl, 'planner-M2-'), []);
  });

  it("a task's question stops the run with exit 4 and the command that answers it; after the answer the milestone goes on", async () => {
    const f = await longRun({ milestones: { M1: {} } });
    // The worker asks until its prompt holds a person's answer.
    f.control('worker-M1-T1.sh', 'grep -q "^A person answered:" "$LAUNCHPAD_PROMPT_FILE" || { echo "QUESTION: Which port?"; exit 0; }\n');
    assertExit(await f.ms('run'), 4);
    assertExit(await f.ms('approve', 'M1'), 0);
    const asked = await f.ms('run');
    assertExit(asked, 4, f.root);
    assert.match(asked.stdout, /waiting for a person:\n- M1: waiting for people: M1-T1 asked a question/);
    assert.equal(f.milestone('M1').status, 'executing');
    const dir = /launchpad --dir (\S+) …/.exec(asked.stdout)?.[1];
    assert.ok(dir, asked.stdout);
    assertExit(await launchpad(f.root, ['answer', 'M1-T1', '8080', '--dir', dir]), 0);
    const done = await f.ms('run');
    assertExit(done, 0, f.root);
    assert.equal(f.milestone('M1').status, 'completed');
    assert.equal(git(f.root, 'show', 'main:src/m1/t1.txt'), 'M1-T1 attempt 1');
    const workers = prompts(f.ctl, 'worker-M1-T1-');
    assert.equal(workers.length, 2);
    assert.match(workers[1]!, /A person answered:\n> 8080/);
  });
});
