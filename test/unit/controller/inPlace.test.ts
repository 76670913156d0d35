// In-place mode on real repositories: one task at a time in the main working tree, no merge
// commit; a failed attempt is kept under a Launchpad ref and rolled back to its base.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  agentCmd,
  alive,
  gates,
  git,
  harness,
  linesOf,
  readLog,
  run,
  show,
  shq,
  startRun,
  taskById,
  tempDir,
  waitFor,
  waitForLog,
} from './support';

const headOf = (root: string) => git(root, 'rev-parse', 'HEAD').trim();

describe('controller: in-place mode', function () {
  this.timeout(120_000);

  it("a success completes at the agent's commit in the main working tree: no worktree, no merge commit, STATS at the end", async () => {
    const root = harness({ tasks: [{ id: 'a' }, { id: 'b', dependsOn: ['a'] }] });
    const base = headOf(root);
    const r = await run(root, agentCmd('writes-done.sh'), ['--in-place']);
    assert.equal(r.code, 0, show(r, root));
    const log = readLog(root);
    assert.ok(
      log.some((l) => new RegExp(`Starting \\[a\\] Task a \\(base=${base.slice(0, 7)}\\)`).test(l)),
      log.join('\n'),
    );
    const head = headOf(root);
    assert.ok(
      log.some((l) => l.includes(`Completed [b] (commit ${head})`)),
      log.join('\n'),
    );
    assert.equal(git(root, 'rev-list', '--merges', 'HEAD').trim(), '', 'no merge commit');
    assert.equal(git(root, 'worktree', 'list').trim().split('\n').length, 1, 'no worktree');
    assert.ok(existsSync(join(root, 'src/a/done.txt')));
    assert.equal(git(root, 'status', '--porcelain').trim(), '', "the state files are not the agent's to commit");
    assert.match(log.at(-2)!, /STATS /);
    assert.equal(taskById(root, 'b').status, 'completed');
  });

  it('a failing validation rolls back to the base (no untracked files), keeps the attempt under a Launchpad ref, logs ROLLBACK then ERROR', async () => {
    // The agent commits once, then leaves an untracked and a modified file behind; validation fails.
    const agent = `${agentCmd('writes-done.sh')} >/dev/null; echo extra > stray.txt; echo changed >> README.md; echo RESULT:SUCCESS`;
    const root = harness({ tasks: [{ id: 'a', validate: 'false', maxAttempts: 1, cleanup: 'echo cleaned > cleanup-ran.txt' }] });
    const base = headOf(root);
    const r = await run(root, agent, ['--in-place']);
    assert.equal(r.code, 1, show(r, root));
    assert.equal(headOf(root), base, 'HEAD back at the base');
    assert.equal(
      git(root, 'status', '--porcelain', '--untracked-files=all').trim(),
      '?? cleanup-ran.txt',
      'nothing left but what on_failure.cleanup wrote after the rollback',
    );
    const log = readLog(root);
    const rollback = log.findIndex((l) => l.includes(`ROLLBACK [a] git reset --hard ${base}`));
    assert.ok(rollback >= 0, log.join('\n'));
    assert.match(log[rollback + 1]!, /ERROR \[a\] \[TEST_FAIL\]/);
    // The attempt's commit and its uncommitted work are reachable from the ref, nothing dangles.
    const kept = git(root, 'rev-parse', 'refs/launchpad/attempts/a/1').trim();
    assert.match(git(root, 'log', '--format=%s', kept), /\[a\] Task a/);
    assert.equal(git(root, 'show', `${kept}:stray.txt`).trim(), 'extra');
    const unreachable = git(root, 'fsck', '--unreachable', '--no-reflogs')
      .split('\n')
      .filter((l) => l.startsWith('unreachable commit'));
    assert.deepEqual(unreachable, []);
    assert.equal(taskById(root, 'a').status, 'failed');
  });

  it("an agent's `git add -A` never commits the journal's folder: its temp file mid-write and its archives stay Launchpad's", async () => {
    // The journal writes progress.json.tmp, then renames it; an archive appears once a month.
    // The agent here finds both, as it would when its `git add -A` meets the journal mid-write.
    const journal = '.agent-os/progress';
    const agent = `mkdir -p ${journal}/archive && echo '{}' > ${journal}/progress.json.tmp && echo '[]' > ${journal}/archive/2026-10.json && ${agentCmd('writes-done.sh')}`;
    const root = harness({ tasks: [{ id: 'a' }] });
    const r = await run(root, agent, ['--in-place']);
    assert.equal(r.code, 0, show(r, root));
    assert.equal(git(root, 'log', '-1', '--format=%s').trim(), '[a] Task a');
    assert.deepEqual(git(root, 'ls-files', '--', '.agent-os').trim(), '', 'nothing of the journal committed');
    assert.equal(git(root, 'show', '--name-only', '--format=', 'HEAD').trim(), 'src/a/done.txt');
  });

  it("the copy of a broken task file kept beside it (harness-tasks.json.corrupt-<time>) is Launchpad's: the run starts and the agent does not commit it", async () => {
    const root = harness({ tasks: [{ id: 'a' }] });
    const copy = 'harness-tasks.json.corrupt-2026-11-27T03-00-00-000Z';
    writeFileSync(join(root, copy), '{ broken\n');
    const r = await run(root, agentCmd('writes-done.sh'), ['--in-place']);
    assert.equal(r.code, 0, show(r, root));
    assert.equal(git(root, 'ls-files', '--', copy).trim(), '', 'not committed');
    assert.equal(readFileSync(join(root, copy), 'utf8'), '{ broken\n');
  });

  it('refuses to start with uncommitted changes that are not its own', async () => {
    const root = harness({ tasks: [{ id: 'a' }] });
    appendFileSync(join(root, 'README.md'), 'local edit\n');
    const r = await run(root, agentCmd('writes-done.sh'), ['--in-place']);
    assert.equal(r.code, 2, show(r, root));
    assert.match(r.stderr, /uncommitted changes to tracked files: README\.md/);
  });

  it("refuses to start with a person's untracked files (a success would commit them, a rollback clean them away); ignored files are fine", async () => {
    const root = harness({ tasks: [{ id: 'a' }] });
    writeFileSync(join(root, 'notes.txt'), 'my notes\n');
    mkdirSync(join(root, 'drafts'));
    writeFileSync(join(root, 'drafts/plan.md'), 'draft\n');
    const head = git(root, 'rev-parse', 'HEAD');
    const r = await run(root, agentCmd('writes-done.sh'), ['--in-place']);
    assert.equal(r.code, 2, show(r, root));
    assert.match(
      r.stderr,
      /no untracked files but Launchpad's own: (drafts\/plan\.md, notes\.txt|notes\.txt, drafts\/plan\.md); commit, ignore or move them first/,
    );
    assert.equal(git(root, 'rev-parse', 'HEAD'), head, 'nothing committed');
    assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'my notes\n');
    assert.equal(taskById(root, 'a').status, 'pending');

    // Ignored, they stay out of its way: the run works and leaves them as they were.
    appendFileSync(join(root, '.git/info/exclude'), 'notes.txt\ndrafts/\n');
    const ok = await run(root, agentCmd('writes-done.sh'), ['--in-place']);
    assert.equal(ok.code, 0, show(ok, root));
    assert.equal(readFileSync(join(root, 'drafts/plan.md'), 'utf8'), 'draft\n');
    assert.doesNotMatch(git(root, 'show', '--stat', 'HEAD'), /notes\.txt|plan\.md/);
  });

  describe("a person's edits during an attempt", () => {
    // The agent waits at a gate, then commits only its own file; meanwhile a person edits a
    // tracked file, adds one and deletes one in the same checkout.
    const agent = agentCmd(
      'gate.sh',
      'sh',
      '-c',
      shq('mkdir -p src/a && echo work > src/a/done.txt && git add src/a && git commit -qm "[a] Task a" && echo RESULT:SUCCESS'),
    );
    async function runWithEdits(validate: string) {
      const root = harness({ files: { 'README.md': '# project\n', 'old.txt': 'old\n' }, tasks: [{ id: 'a', validate, maxAttempts: 1 }] });
      const g = gates();
      const running = startRun(root, agent, ['--in-place', '--json'], { GATE_DIR: g.dir });
      await waitFor('the agent at its gate', () => g.waiting('a'));
      appendFileSync(join(root, 'README.md'), "a person's line\n");
      writeFileSync(join(root, 'notes.md'), "a person's notes\n");
      rmSync(join(root, 'old.txt'));
      g.open('a');
      const r = await running.done;
      return { root, r, outcome: JSON.parse(r.stdout) as { notes: string[] } };
    }

    it('a rollback names them with the command that restores them, in a WARN line and the end summary; the command restores them', async () => {
      const { root, r, outcome } = await runWithEdits('false');
      assert.equal(r.code, 1, show(r, root));
      // Rolled back with the attempt: the tree is at the base.
      assert.equal(readFileSync(join(root, 'README.md'), 'utf8'), '# project\n');
      assert.ok(!existsSync(join(root, 'notes.md')));
      const warn = linesOf(root, 'WARN', 'a').find((l) => l.message.includes('not committed'));
      assert.ok(warn, show(r, root));
      assert.match(
        warn.message,
        /^3 files changed and not committed during attempt 1 \(by its agent, or by a person meanwhile\): README\.md, notes\.md, old\.txt; the rollback moved them to refs\/launchpad\/attempts\/a\/1; restore them: (git restore .*)$/,
      );
      assert.deepEqual(outcome.notes, [`a: ${warn.message}`]);
      const restore = /restore them: (.*)$/.exec(warn.message)![1]!;
      execFileSync('/bin/sh', ['-c', restore], { cwd: root });
      assert.equal(readFileSync(join(root, 'README.md'), 'utf8'), "# project\na person's line\n");
      assert.equal(readFileSync(join(root, 'notes.md'), 'utf8'), "a person's notes\n");
      assert.ok(!existsSync(join(root, 'old.txt')), 'deleted again');
      assert.ok(!existsSync(join(root, 'src/a/done.txt')), "the agent's committed work stays in the kept ref");
    });

    it("a success names them as committed with the task's work", async () => {
      const { root, r, outcome } = await runWithEdits('test -f src/a/done.txt');
      assert.equal(r.code, 0, show(r, root));
      const head = git(root, 'rev-parse', 'HEAD');
      const warn = linesOf(root, 'WARN', 'a').find((l) => l.message.includes('not committed'));
      assert.ok(warn, show(r, root));
      assert.equal(
        warn.message,
        `3 files changed and not committed during attempt 1 (by its agent, or by a person meanwhile): README.md, notes.md, old.txt; committed with the task's work in ${head.slice(0, 7)}`,
      );
      assert.deepEqual(outcome.notes, [`a: ${warn.message}`]);
      assert.equal(readFileSync(join(root, 'notes.md'), 'utf8'), "a person's notes\n", 'left where the person put it');
    });

    it('the end summary on a terminal shows the notes', async () => {
      const root = harness({ tasks: [{ id: 'a', validate: 'false', maxAttempts: 1 }] });
      const r = await run(root, `${agentCmd('writes-done.sh')} >/dev/null; echo mine > notes.md; echo RESULT:SUCCESS`, ['--in-place']);
      assert.equal(r.code, 1, show(r, root));
      assert.match(
        r.stdout,
        /\nnote: a: 1 file changed and not committed during attempt 1 .*: notes\.md; the rollback moved them to refs\/launchpad\/attempts\/a\/1; restore them: git restore --source=refs\/launchpad\/attempts\/a\/1 -- notes\.md\n/,
      );
    });
  });

  it('more files than a line names: the count, the first ten, and a command that restores them all', async () => {
    const root = harness({ tasks: [{ id: 'a', validate: 'false', maxAttempts: 1 }] });
    const agent = `for i in 01 02 03 04 05 06 07 08 09 10 11 12; do echo "n $i" > "note $i.md"; done; echo RESULT:SUCCESS`;
    const r = await run(root, agent, ['--in-place']);
    assert.equal(r.code, 1, show(r, root));
    const warn = linesOf(root, 'WARN', 'a').find((l) => l.message.includes('not committed'));
    assert.ok(warn, show(r, root));
    assert.match(warn.message, /^12 files changed .*: note 01\.md, .*, note 10\.md, …; the rollback moved them/);
    assert.ok(!existsSync(join(root, 'note 12.md')));
    execFileSync('/bin/sh', ['-c', /restore them: (.*)$/.exec(warn.message)![1]!], { cwd: root });
    for (const i of ['01', '12']) assert.equal(readFileSync(join(root, `note ${i}.md`), 'utf8'), `n ${i}\n`);
  });

  it('an in-place agent does not outlive its controller: a kill -9 of the run ends it at once, and the next run starts it afresh uncharged', async () => {
    const root = harness({ tasks: [{ id: 'a' }] });
    const dir = tempDir('launchpad-inplace-kill-');
    // It would commit on the base branch as soon as it is let go.
    const agent = `echo $$ > ${shq(join(dir, 'agent.pid'))}; while [ ! -e ${shq(join(dir, 'go'))} ]; do sleep 0.1; done; git commit -q --allow-empty -m late; echo RESULT:SUCCESS`;
    const running = startRun(root, agent, ['--in-place', '--agent-timeout', '3600']);
    const pid = await waitFor(
      'the agent',
      () => existsSync(join(dir, 'agent.pid')) && Number(readFileSync(join(dir, 'agent.pid'), 'utf8')),
    );
    running.child.kill('SIGKILL');
    await running.done;
    await waitFor('the agent to end', () => !alive(pid), 15_000).catch((err: Error) => {
      process.kill(-pid, 'SIGKILL');
      throw err;
    });
    writeFileSync(join(dir, 'go'), '');
    assert.doesNotMatch(git(root, 'log', '--format=%s'), /late/);

    const r = await run(root, agentCmd('writes-done.sh'), ['--in-place']);
    assert.equal(r.code, 0, show(r, root));
    // It was ended before any progress: the attempt is given back and the task starts afresh.
    assert.ok(readLog(root).some((l) => /RECOVERY \[a\] action="started afresh" reason="interrupted before any progress"/.test(l)));
    assert.equal(taskById(root, 'a').attempts, 1);
  });

  describe('a base commit that is gone', () => {
    /** Rewrites the branch's last commit and lets git forget the old one, as a person's amend and gc do. */
    function rewriteAway(root: string, commit: string): void {
      git(root, 'commit', '-q', '--amend', '--allow-empty', '-m', 'rewritten');
      git(root, 'reflog', 'expire', '--expire=now', '--all');
      git(root, 'gc', '-q', '--prune=now');
      assert.throws(() => execFileSync('git', ['cat-file', '-t', commit], { cwd: root, stdio: 'pipe' }), 'the commit is gone');
    }

    it('at resume: no agent runs, nothing is charged, the tree is left as it is, the task is pending again, the run stops with exit 2', async () => {
      const root = harness({ tasks: [{ id: 'a' }] });
      const dir = tempDir('launchpad-inplace-base-');
      const base = git(root, 'rev-parse', 'HEAD');
      // The first run's agent changes the tree, then the run is killed.
      const first = startRun(root, `echo work > work.txt; echo more >> README.md; echo $$ > ${shq(join(dir, 'agent.pid'))}; sleep 600`, [
        '--in-place',
      ]);
      const pid = await waitFor(
        'the agent',
        () => existsSync(join(dir, 'agent.pid')) && Number(readFileSync(join(dir, 'agent.pid'), 'utf8')),
      );
      first.child.kill('SIGKILL');
      await first.done;
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // ended already
      }
      // While the run is down a person rewrites the branch.
      rewriteAway(root, base);
      const status = git(root, 'status', '--porcelain', '--untracked-files=all', '--', '.', ':!harness-*', ':!.launchpad');
      const head = git(root, 'rev-parse', 'HEAD');

      const marker = join(dir, 'ran');
      const r = await run(root, `touch ${shq(marker)}; ${agentCmd('writes-done.sh')}`, ['--in-place']);
      assert.equal(r.code, 2, show(r, root));
      assert.ok(!existsSync(marker), 'no agent ran');
      const error = linesOf(root, 'ERROR', 'a');
      assert.equal(error.length, 1, show(r, root));
      assert.equal(error[0]!.category, 'ENV_SETUP');
      assert.equal(error[0]!.message, `the base commit ${base} of a is gone (main was rewritten while the run was down) (not charged)`);
      assert.match(
        r.stdout + r.stderr,
        /to fix: the main working tree is as the attempt left it: commit or stash its changes \(git stash -u\), then run again/,
      );
      assert.ok(!readLog(root).some((l) => /DISCARD|TASK_EXEC|RECOVERY \[a\]/.test(l)), show(r, root));
      assert.equal(git(root, 'status', '--porcelain', '--untracked-files=all', '--', '.', ':!harness-*', ':!.launchpad'), status);
      assert.equal(readFileSync(join(root, 'work.txt'), 'utf8'), 'work\n');
      assert.equal(git(root, 'rev-parse', 'HEAD'), head);
      const task = taskById(root, 'a');
      assert.equal(task.status, 'pending');
      assert.equal(task.attempts, 0, 'the interrupted attempt given back');
      assert.equal(task.started_at_commit ?? null, null);
      assert.deepEqual(task.error_log, []);

      // What the "to fix" says is enough.
      git(root, 'stash', '-u');
      const again = await run(root, agentCmd('writes-done.sh'), ['--in-place']);
      assert.equal(again.code, 0, show(again, root));
    });

    it('at a rollback (rewritten during the attempt): nothing is charged or cleaned away, the run stops with exit 2', async () => {
      const root = harness({ tasks: [{ id: 'a', maxAttempts: 1 }] });
      const base = git(root, 'rev-parse', 'HEAD');
      const agent = [
        'echo mine > work.txt',
        'git commit -q --amend --allow-empty -m rewritten',
        'git reflog expire --expire=now --all',
        'git gc -q --prune=now',
        'echo "RESULT:FAIL could not finish"',
      ].join('; ');
      const r = await run(root, agent, ['--in-place']);
      assert.equal(r.code, 2, show(r, root));
      const error = linesOf(root, 'ERROR', 'a');
      assert.equal(error.length, 1, show(r, root));
      assert.equal(error[0]!.message, `the base commit ${base} of a is gone (main was rewritten during the attempt) (not charged)`);
      assert.ok(!readLog(root).some((l) => /ROLLBACK|DISCARD/.test(l)), show(r, root));
      assert.equal(readFileSync(join(root, 'work.txt'), 'utf8'), 'mine\n', 'nothing cleaned away');
      assert.equal(git(root, 'log', '-1', '--format=%s'), 'rewritten');
      const task = taskById(root, 'a');
      assert.equal(task.status, 'pending');
      assert.equal(task.attempts, 0);
      assert.deepEqual(task.error_log, []);
      await waitForLog(root, /STATS /);
    });
  });
});
