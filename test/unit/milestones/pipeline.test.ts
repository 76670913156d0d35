// A long run end to end with the scripted agents on a real repository: three milestones (M1 and M2
// independent, M3 after both) through plan → approve → run → review → integrate → checkpoint →
// merge, then the final E2E gate and the completion summary.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { assertExit, git, HARNESS_REL, logOf, longRun, planOf, prompts } from './support';

const RUNS_AT_THE_SAME_TIME = (me: string, other: string) => `touch "$MS_DIR/running-${me}"
i=0
while [ ! -e "$MS_DIR/running-${other}" ]; do
  sleep 0.1; i=$((i + 1))
  if [ $i -gt 900 ]; then echo "RESULT:FAIL ${other} never ran at the same time"; exit 0; fi
done
`;

describe('milestones: a three-milestone DAG, two of them in parallel', function () {
  this.timeout(240_000);

  it('plans M1 and M2 first, runs them concurrently, merges M1 before M2, then M3, and completes with every file', async () => {
    const f = await longRun({
      milestones: { M1: { interfaces: ['src/m1/t1.txt: M1-T1 attempt'] }, M2: {}, M3: { deps: ['M1', 'M2'] } },
      verify: 'test -f README.md',
      testSuite: 'git status --short >/dev/null',
    });
    assert.ok(existsSync(join(f.harness, 'milestones', '_example.md')), 'init leaves a commented example milestone');
    f.control(
      'plan-M1.md',
      planOf('M1', 2, (k) => (k === 2 ? ['  - Depends: T1'] : [])),
    );
    f.control('worker-M1-T1.sh', RUNS_AT_THE_SAME_TIME('M1', 'M2'));
    f.control('worker-M2-T1.sh', RUNS_AT_THE_SAME_TIME('M2', 'M1'));

    // 1. Both ready milestones are planned before anything runs; the run stops at their approval gates.
    let r = await f.ms('run');
    assertExit(r, 4, f.root);
    assert.match(r.stdout, /Long Run Status: session/);
    assert.match(r.stdout, /Recovery plan:/);
    assert.match(
      r.stdout,
      /M1 \(Part M1\): plan docs\/engineering-discipline\/plans\/\d{4}-\d\d-\d\d-m1-part-m1\.md awaits approval \(2 tasks\)/,
    );
    assert.match(r.stdout, /launchpad milestones approve M2/);
    assert.deepEqual(
      ['M1', 'M2', 'M3'].map((id) => f.milestone(id).status),
      ['awaiting_approval', 'awaiting_approval', 'pending'],
    );
    assert.equal(f.milestone('M1').attempts, 0);
    const brief = prompts(f.ctl, 'planner-M1-')[0]!;
    assert.match(brief, /# Context Brief: M1 — Part M1/);
    assert.match(brief, /## Scope\n- src\/m1\//);
    assert.match(brief, /## Success Criteria\n- src\/m1\/t1\.txt exists/);

    // 2. Approved individually; both run at once (each worker waits for the other), then M1 merges first.
    assertExit(await f.ms('approve', 'M1'), 0);
    assertExit(await f.ms('approve', 'M2'), 0);
    assert.equal(f.milestone('M1').attempts, 1, 'approval starts attempt 1');
    r = await f.ms('run');
    assertExit(r, 4, f.root);
    assert.deepEqual(
      ['M1', 'M2', 'M3'].map((id) => f.milestone(id).status),
      ['completed', 'completed', 'awaiting_approval'],
    );
    const started = readFileSync(join(f.ctl, 'started'), 'utf8').split('\n').filter(Boolean);
    assert.deepEqual([...started].sort(), ['M1-T1', 'M1-T2', 'M2-T1']);
    const merged = git(f.root, 'log', '--first-parent', '--merges', '--format=%s', 'main').split('\n').reverse();
    assert.deepEqual(merged, ['Merge milestone M1: Part M1', 'Merge milestone M2: Part M2']);

    // Every file of a completed milestone: plan with ticked boxes, review with a verdict, checkpoint.
    for (const id of ['M1', 'M2']) {
      const m = f.milestone(id);
      assert.match(
        m.plan!,
        new RegExp(`^docs/engineering-discipline/plans/\\d{4}-\\d\\d-\\d\\d-${id.toLowerCase()}-part-${id.toLowerCase()}\\.md$`),
      );
      assert.match(
        m.review!,
        new RegExp(`^docs/engineering-discipline/reviews/\\d{4}-\\d\\d-\\d\\d-${id.toLowerCase()}-part-${id.toLowerCase()}-review\\.md$`),
      );
      assert.equal(m.checkpoint, `${HARNESS_REL}/checkpoints/${id}-checkpoint.md`);
      assert.doesNotMatch(f.read(m.plan!), /- \[ \]/, `${id}'s plan has every box ticked`);
      assert.match(f.read(m.review!), /^VERDICT: PASS$/m);
      const checkpoint = f.read(m.checkpoint!);
      for (const section of [
        '**Completed:**',
        '**Duration:**',
        '**Attempts:** 1',
        '## Plan File',
        '## Review File',
        '## Test Results',
        '## Files Changed',
        '## State After Milestone',
      ]) {
        assert.ok(checkpoint.includes(section), `${id}'s checkpoint has ${section}`);
      }
      assert.match(checkpoint, /PASS `test -f README\.md`/);
      // Files Changed is the milestone's real diff: what its merge brought to main.
      const mergeCommit = git(f.root, 'log', '--first-parent', '--merges', '--format=%H', `--grep=Merge milestone ${id}:`, 'main');
      const diff = git(f.root, 'diff', '--name-only', `${mergeCommit}^1`, mergeCommit).split('\n').sort();
      const listed = [
        ...checkpoint
          .split('## Files Changed')[1]!
          .split('##')[0]!
          .matchAll(/^- (\S+) \(added\)$/gm),
      ]
        .map((x) => x[1]!)
        .sort();
      assert.deepEqual(listed, diff);
    }
    assert.match(f.read(f.milestone('M1').checkpoint!), /PASS interfaces: 1 of 1 contract hold/);

    // M3's Context Brief carries only the predecessors' files, interfaces and verified criteria.
    const brief3 = prompts(f.ctl, 'planner-M3-')[0]!;
    assert.match(
      brief3,
      /## Completed predecessor M1 — Part M1\n### Files created or modified\n- src\/m1\/t1\.txt \(added\)\n- src\/m1\/t2\.txt \(added\)/,
    );
    assert.match(brief3, /### Interface contracts established\n- src\/m1\/t1\.txt: M1-T1 attempt/);
    assert.match(brief3, /### Success criteria verified as met\n- src\/m1\/t1\.txt exists/);
    assert.match(brief3, /## Completed predecessor M2 — Part M2/);
    for (const leak of ['VERDICT', 'Execution Log', 'review', 'transcript', 'RESULT:', 'Test Results'])
      assert.ok(!brief3.includes(leak), `the brief does not carry "${leak}"`);

    // The reviewer saw the plan and the diff, not the workers.
    const review1 = prompts(f.ctl, 'reviewer-M1-')[0]!;
    assert.match(review1, /- \[ \] T1 Write file 1|- \[x\] T1 Write file 1/);
    const diffFile = /The full diff of the milestone is in (\S+)\. Summary:/.exec(review1)![1]!;
    assert.match(readFileSync(diffFile, 'utf8'), /\+\+\+ b\/src\/m1\/t2\.txt/);
    const reviewerCwd = readFileSync(join(f.ctl, 'prompts', 'reviewer-M1-1.cwd'), 'utf8').trim();
    assert.ok(!existsSync(join(reviewerCwd, '.launchpad-milestone')), 'no controller state (transcripts) where the reviewer ran');

    // 3. M3 completes; the final gate passes; the summary is written; nothing is left behind.
    assertExit(await f.ms('approve', 'M3'), 0);
    r = await f.ms('run');
    assertExit(r, 0, f.root);
    const state = f.state();
    assert.equal(state.overall.status, 'completed');
    assert.deepEqual(
      state.milestones.map((m) => [m.id, m.status, m.attempts]),
      [
        ['M1', 'completed', 1],
        ['M2', 'completed', 1],
        ['M3', 'completed', 1],
      ],
    );
    const summary = readFileSync(join(f.harness, 'summary.md'), 'utf8');
    assert.match(summary, /# Long Run Complete: session/);
    assert.match(summary, /\*\*Total milestones:\*\* 3\n\*\*Total attempts:\*\* 3/);
    assert.match(summary, /\| M3: Part M3 \| ✓ completed \| 1 \| /);
    assert.match(summary, /## Files Changed \(Total\)\n- src\/m1\/t1\.txt \(added\)/);
    assert.match(r.stdout, /Long Run Complete: session/);
    assert.ok(logOf(state).some((l) => /final E2E gate passed/.test(l)));
    assert.equal(git(f.root, 'worktree', 'list', '--porcelain').match(/^worktree /gm)!.length, 1, 'only the main checkout is left');
    assert.equal(git(f.root, 'branch', '--list', 'milestone-*', 'harness-*'), '');
    assert.equal(git(f.root, 'status', '--porcelain', '--untracked-files=no'), '', 'the main checkout has no tracked change');
    assert.deepEqual(readdirSync(join(f.root, 'src')).sort(), ['m1', 'm2', 'm3']);

    // status is read-only and says it is done; --json carries the same rows.
    const st = await f.ms('status', '--json');
    assertExit(st, 0);
    const json = JSON.parse(st.stdout);
    assert.equal(json.progress.completed, 3);
    assert.deepEqual(
      json.milestones.map((m: { id: string; recovery: string }) => [m.id, m.recovery]),
      [
        ['M1', 'skip (already checkpointed)'],
        ['M2', 'skip (already checkpointed)'],
        ['M3', 'skip (already checkpointed)'],
      ],
    );
  });
});
