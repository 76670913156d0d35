// The cross-milestone integration check (verification command, test suite and interfaces on the
// milestone branch merged with the base), its two targeted fixes, the escalation to a person, and
// the final E2E gate with its corrective milestones.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { assertExit, git, logOf, longRun, prompts } from './support';

const CHECK = `#!/bin/sh
# The project's verification: M2's output needs its adapter.
if [ -f src/m2/t1.txt ] && [ ! -f src/m2/adapter.txt ]; then
  echo "error: src/m2/t1.txt needs src/m2/adapter.txt"
  exit 1
fi
echo "check passed"
`;

describe('milestones: integration check, escalation and the final E2E gate', function () {
  this.timeout(300_000);

  it('a broken interface of a completed milestone is fixed by a targeted fix worker, reviewed again and merged', async () => {
    const f = await longRun({
      milestones: {
        M1: { interfaces: ['src/m1/t1.txt: M1-T1 attempt'] },
        M2: { deps: ['M1'], scope: ['src/m2/', 'src/m1/t1.txt'] },
      },
    });
    // M2's worker overwrites M1's contract; the first fix worker restores it.
    f.control('worker-M2-T1.sh', 'mkdir -p src/m1 && echo "rewritten by M2" > src/m1/t1.txt\n');
    f.control('worker-M2-FIX1.sh', 'echo "M1-T1 attempt 1 (restored)" > src/m1/t1.txt\n');
    assertExit(await f.ms('run'), 4);
    assertExit(await f.ms('approve', 'M1'), 0);
    assertExit(await f.ms('run'), 4, f.root);
    assertExit(await f.ms('approve', 'M2'), 0);
    assertExit(await f.ms('run'), 0, f.root);

    const m = f.milestone('M2');
    assert.equal(m.status, 'completed');
    assert.equal(m.integrationFixes, 1);
    assert.equal(m.attempts, 1, 'a fix is not an attempt');
    const log = logOf(f.state(), 'M2').join('\n');
    assert.match(
      log,
      /integration check failed: cross-milestone interfaces broken: M1: src\/m1\/t1\.txt no longer contains "M1-T1 attempt"; targeted fix 1 of 2 \(M2-FIX1\)/,
    );
    assert.match(log, /integration fix done; review-work again/);
    assert.match(
      prompts(f.ctl, 'worker-M2-FIX1-')[0]!,
      /cross-milestone integration check failed[\s\S]*no longer contains "M1-T1 attempt"/,
    );
    assert.equal(prompts(f.ctl, 'reviewer-M2-').length, 2, 'reviewed again after the fix');
    assert.match(readFileSync(join(f.root, 'src/m1/t1.txt'), 'utf8'), /restored/);
    assert.match(f.read(m.checkpoint!), /PASS interfaces: 1 of 1 contract hold/);
  });

  it('after two failed fixes a person decides; accepting merges it, and the final gate adds a corrective milestone that fixes it', async () => {
    const f = await longRun({
      milestones: { M1: {}, M2: { deps: ['M1'] } },
      files: { 'README.md': '# p\n', 'check.sh': CHECK },
      verify: 'sh check.sh',
    });
    assertExit(await f.ms('run'), 4);
    assertExit(await f.ms('approve', 'M1'), 0);
    assertExit(await f.ms('run'), 4, f.root);
    assertExit(await f.ms('approve', 'M2'), 0);

    let r = await f.ms('run');
    assertExit(r, 4, f.root);
    let m = f.milestone('M2');
    assert.equal(m.status, 'integrating');
    assert.equal(m.awaiting, 'integration');
    assert.equal(m.integrationFixes, 2);
    assert.match(m.reason!, /integration check failed after 2 targeted fixes; milestones involved: M2; `sh check\.sh` failed \(exit 1\)/);
    assert.match(
      r.stdout,
      /M2 \(Part M2\): integration decision awaited — .*options: add a corrective milestone .*roll back to a checkpoint .*accept and continue \("launchpad milestones approve M2"\)/,
    );
    assert.equal(prompts(f.ctl, 'worker-M2-FIX').length, 2);
    assert.equal(
      git(f.root, 'log', '--merges', '--first-parent', '--format=%s', 'main'),
      'Merge milestone M1: Part M1',
      'M2 is not merged',
    );

    // Accept and continue: logged, merged without the check; then the final gate fails on main.
    assertExit(await f.ms('approve', 'M2', '--reason', 'the adapter comes later'), 0);
    assert.ok(logOf(f.state(), 'M2').some((l) => /integration gap accepted by a person, continuing: the adapter comes later/.test(l)));
    r = await f.ms('run');
    assertExit(r, 4, f.root);
    m = f.milestone('M2');
    assert.equal(m.status, 'completed');
    assert.match(f.read(m.checkpoint!), /not verified: a person accepted the integration gap/);
    const corrective = f.milestone('M3');
    assert.equal(corrective.status, 'awaiting_approval');
    assert.equal(f.state().overall.e2eFixes, 1);
    const file = readdirSync(join(f.harness, 'milestones')).find((n) => n.startsWith('M3-'))!;
    const text = readFileSync(join(f.harness, 'milestones', file), 'utf8');
    assert.match(text, /# M3: Final E2E fix 1/);
    assert.match(text, /Likely cause: the output of M2\./);
    assert.match(text, /error: src\/m2\/t1\.txt needs src\/m2\/adapter\.txt/);
    assert.match(text, /## Dependencies\n- M1\n- M2/);
    assert.ok(
      logOf(f.state()).some((l) =>
        /final E2E gate failed: `sh check\.sh` failed .*corrective milestone M3 added \(1 of 2\), likely cause M2/.test(l),
      ),
    );

    // The corrective milestone goes through the whole pipeline and the final gate passes.
    f.control('worker-M3-T1.sh', 'mkdir -p src/m2 && echo ok > src/m2/adapter.txt\n');
    assertExit(await f.ms('approve', 'M3'), 0);
    assertExit(await f.ms('run'), 0, f.root);
    assert.equal(f.state().overall.status, 'completed');
    assert.ok(existsSync(join(f.root, 'src/m2/adapter.txt')));
  });

  it('parallel milestones whose work conflicts: the later one stops and asks; resolved by hand and accepted, it merges', async () => {
    const f = await longRun({ milestones: { M1: {}, M2: {} } });
    // Both workers also change README.md, outside their scopes.
    f.control('worker-M1-T1.sh', 'echo "M1 was here" > README.md\n');
    f.control('worker-M2-T1.sh', 'echo "M2 was here" > README.md\n');
    assertExit(await f.ms('run'), 4);
    assertExit(await f.ms('approve', 'M1'), 0);
    assertExit(await f.ms('approve', 'M2'), 0);
    const r = await f.ms('run');
    assertExit(r, 4, f.root);
    assert.equal(f.milestone('M1').status, 'completed');
    const m2 = f.milestone('M2');
    assert.deepEqual([m2.status, m2.awaiting, m2.integrationFixes], ['integrating', 'integration', 0]);
    assert.match(
      m2.reason!,
      /merging main into milestone-session-M2 conflicts in README\.md; resolve it in \S+milestone-session-M2 \(merge main there and commit\), then accept/,
    );
    assert.equal(prompts(f.ctl, 'worker-M2-FIX').length, 0, 'a conflict is not sent to a fix worker');

    // The person resolves it in the milestone's worktree and accepts.
    const wt = join(`${f.root}.launchpad-worktrees`, 'milestone-session-M2');
    assert.throws(() => git(wt, 'merge', '--no-edit', 'main'));
    writeFileSync(join(wt, 'README.md'), 'M1 and M2 were here\n');
    git(wt, 'commit', '-qam', 'Resolve README.md');
    assertExit(await f.ms('approve', 'M2'), 0);
    assertExit(await f.ms('run'), 0, f.root);
    assert.equal(readFileSync(join(f.root, 'README.md'), 'utf8'), 'M1 and M2 were here\n');
    assert.deepEqual(git(f.root, 'log', '--merges', '--first-parent', '--format=%s', 'main').split('\n').reverse(), [
      'Merge milestone M1: Part M1',
      'Merge milestone M2: Part M2',
    ]);
  });

  it('the final gate escalates after two corrective milestones; "approve final" accepts it', async () => {
    // Fails on the base branch after a milestone merge, passes in every integration check.
    const verify = 'test "$(git log -1 --format=%s | cut -c1-15)" != "Merge milestone"';
    const f = await longRun({ milestones: { M1: {} }, verify });
    assertExit(await f.ms('run'), 4);
    assertExit(await f.ms('approve', 'M1'), 0);
    for (const corrective of ['M2', 'M3']) {
      assertExit(await f.ms('run'), 4, f.root);
      assert.equal(f.milestone(corrective).status, 'awaiting_approval', `${corrective} is the corrective milestone`);
      assertExit(await f.ms('approve', corrective), 0);
    }
    const r = await f.ms('run');
    assertExit(r, 4, f.root);
    const state = f.state();
    assert.equal(state.overall.status, 'completing');
    assert.equal(state.overall.awaiting, 'e2e');
    assert.equal(state.overall.e2eFixes, 2);
    assert.deepEqual(
      state.milestones.map((m) => m.status),
      ['completed', 'completed', 'completed'],
    );
    assert.match(r.stdout, /the final end-to-end gate failed: final E2E gate still fails after 2 corrective milestones/);
    assert.match(r.stdout, /accept \("launchpad milestones approve final"\)/);

    // A corrective milestone added by hand answers the gate too: it runs, then the gate again.
    assertExit(
      await f.ms(
        'correct',
        'add',
        '--name',
        'By hand',
        '--goal',
        'Try once more.',
        '--scope',
        'src/m4/',
        '--criterion',
        'src/m4/t1.txt exists',
        '--depends-on',
        'M3',
      ),
      0,
    );
    assert.deepEqual([f.state().overall.status, f.state().overall.awaiting], ['running', null]);
    assertExit(await f.ms('run'), 4);
    assertExit(await f.ms('approve', 'M4'), 0);
    assertExit(await f.ms('run'), 4, f.root);
    assert.equal(f.milestone('M4').status, 'completed');
    assert.equal(f.state().overall.awaiting, 'e2e', 'the gate ran again and still fails');

    assertExit(await f.ms('approve', 'final', '--reason', 'known flake'), 0);
    assert.equal(f.state().overall.status, 'completed');
    assert.ok(logOf(f.state()).some((l) => /final end-to-end gate failure accepted by a person: known flake/.test(l)));
    assertExit(await f.ms('run'), 0);
  });
});
