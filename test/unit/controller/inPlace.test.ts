// In-place mode on real repositories: one task at a time in the main working tree, no merge
// commit; a failed attempt is kept under a Launchpad ref and rolled back to its base.
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { agentCmd, git, harness, readLog, run, show, taskById } from './support';

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
});
