// Recovery of what a dead (or stopped) session left, one test per row of the README's "Recovery"
// table, on state prepared by hand as a dead controller would have left it (a task in_progress,
// its worktree/branch made with git, its attempt folder with or without a verdict), then the rest
// of a session's clean-up: processes a dead controller left running, orphaned worktrees and
// branches, a half-done merge of ours, completions the log lost. The rule under all of them: an
// attempt without a recorded verdict of success is never merged, and no agent commit becomes
// unreachable.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { processIdentity } from '../../../src/core/processIdentity';
import {
  agentCmd,
  assertOrder,
  defaultWorktreeRoot,
  extraWorktrees,
  git,
  harness,
  harnessBranches,
  launchpadRefs,
  linesOf,
  logLines,
  ls,
  merges,
  patchTask,
  read,
  run,
  show,
  taskById,
  tempDir,
  treeFiles,
  unreachableAgentCommits,
  waitFor,
  writeFiles,
} from './support';

const DEAD_AGENT = 'agent_dead0001';

/** Marks the task in_progress as a dispatch would have (attempt 1, from the current head). */
function inProgress(root: string, id: string, extra: Record<string, unknown> = {}): void {
  patchTask(root, id, {
    status: 'in_progress',
    attempts: 1,
    agent_id: DEAD_AGENT,
    worktree_branch: `harness-${id}`,
    started_at_commit: git(root, 'rev-parse', 'HEAD'),
    ...extra,
  });
}

/** A worktree on harness-<id> where the controller puts it. */
function worktree(root: string, id: string): string {
  const path = join(defaultWorktreeRoot(root), id);
  git(root, 'worktree', 'add', '-q', '-b', `harness-${id}`, path, 'HEAD');
  return path;
}

/** The agent's work, committed in the worktree. */
function commitWork(wt: string, id: string, content = 'recovered\n', file = 'done.txt'): void {
  writeFiles(wt, { [`src/${id}/${file}`]: content });
  git(wt, 'add', '-A');
  git(wt, 'commit', '-q', '-m', `[${id}] work`);
}

/** The verdict the dead controller recorded for the dead agent as it ended (attempt-1/verdict). */
function verdict(root: string, id: string, line: 'success' | `fail [${string}] ${string}`, agentId = DEAD_AGENT): void {
  const dir = join(root, '.launchpad/runs', id, 'attempt-1');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'session'), '1\n');
  writeFileSync(join(dir, 'verdict'), `${line}\nagent=${agentId}\n`);
}

/** git without its chatter on the test's stderr ("Automatic merge went well; stopped …"). */
function quietGit(cwd: string, ...args: string[]): void {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
}

/** The agent must not be asked to redo anything: recovery alone decides. */
const NO_AGENT = agentCmd('fails.sh');

function assertCleared(root: string, id: string): void {
  const t = taskById(root, id);
  assert.equal(t.agent_id, null, 'agent_id not cleared');
  assert.equal(t.worktree_branch, null, 'worktree_branch not cleared');
  assert.deepEqual(harnessBranches(root), []);
  assert.deepEqual(extraWorktrees(root), []);
}

function recoveryOf(root: string, id: string): string[] {
  return linesOf(root, 'RECOVERY', id).map((l) => l.message);
}

describe('controller: recovery of a dead session, row by row', function () {
  this.timeout(120_000);

  describe('a recorded verdict of success (a crash during validation or merge): validated, merged or discarded', () => {
    it('worktree with commits → validated and merged ("validated orphaned worktree"), not dispatched again', async () => {
      const root = harness({ tasks: [{ id: 'task-001' }] });
      inProgress(root, 'task-001');
      commitWork(worktree(root, 'task-001'), 'task-001');
      verdict(root, 'task-001', 'success');
      const r = await run(root, NO_AGENT);
      assert.equal(r.code, 0, show(r, root));
      assert.deepEqual(recoveryOf(root, 'task-001'), [
        'action="validated orphaned worktree" reason="the agent reported success; the controller stopped before the merge"',
      ]);
      assertOrder(root, 'task-001', ['RECOVERY', 'VALIDATE', 'MERGE', 'Completed']);
      const t = taskById(root, 'task-001');
      assert.equal(t.status, 'completed');
      assert.equal(t.attempts, 1);
      assert.equal(linesOf(root, 'DISPATCH').length, 0);
      assert.deepEqual(
        merges(root).map((m) => m.subject),
        ['Merge [task-001] Task task-001'],
      );
      assert.equal(read(join(root, 'src/task-001/done.txt')), 'recovered\n');
      // The validation's output went to the attempt that recorded the verdict.
      assert.ok(existsSync(join(root, '.launchpad/runs/task-001/attempt-1/validation.log')));
      assertCleared(root, 'task-001');
    });

    it('worktree with commits that fail validation → discarded, failed [TEST_FAIL], its commits kept under refs/launchpad/attempts/', async () => {
      const root = harness({ tasks: [{ id: 'task-001', validate: 'grep -q right src/task-001/done.txt', maxAttempts: 1 }] });
      inProgress(root, 'task-001');
      commitWork(worktree(root, 'task-001'), 'task-001', 'wrong\n');
      const tip = git(root, 'rev-parse', 'harness-task-001');
      verdict(root, 'task-001', 'success');
      const base = git(root, 'rev-parse', 'HEAD');
      const r = await run(root, NO_AGENT);
      assert.equal(r.code, 1, show(r, root));
      assertOrder(root, 'task-001', ['RECOVERY', 'VALIDATE', 'DISCARD', 'ERROR']);
      const t = taskById(root, 'task-001');
      assert.equal(t.status, 'failed');
      assert.equal(t.attempts, 1);
      assert.equal(t.error_log.length, 1);
      assert.match(t.error_log[0]!, /^\[TEST_FAIL\] grep -q right src\/task-001\/done\.txt exited with 1/);
      assert.equal(git(root, 'rev-parse', 'HEAD'), base);
      assert.equal(
        linesOf(root, 'DISCARD', 'task-001')[0]!.message,
        'worktree=harness-task-001 reason="validation failed" kept=refs/launchpad/attempts/task-001/1',
      );
      assert.equal(git(root, 'rev-parse', 'refs/launchpad/attempts/task-001/1'), tip);
      assert.deepEqual(unreachableAgentCommits(root), []);
      assertCleared(root, 'task-001');
    });

    it('no worktree but a branch with commits → validated and merged ("validated orphaned branch")', async () => {
      const root = harness({ tasks: [{ id: 'task-001' }] });
      inProgress(root, 'task-001');
      const wt = worktree(root, 'task-001');
      commitWork(wt, 'task-001');
      git(root, 'worktree', 'remove', wt);
      verdict(root, 'task-001', 'success');
      assert.deepEqual(harnessBranches(root), ['harness-task-001']);
      const r = await run(root, NO_AGENT);
      assert.equal(r.code, 0, show(r, root));
      assert.match(recoveryOf(root, 'task-001')[0]!, /^action="validated orphaned branch" /);
      assert.equal(taskById(root, 'task-001').status, 'completed');
      assert.deepEqual(
        merges(root).map((m) => m.subject),
        ['Merge [task-001] Task task-001'],
      );
      assertCleared(root, 'task-001');
    });

    it('no worktree but a branch: the worktree made again gets the included files and worktree_setup before its validation', async () => {
      const root = harness({
        files: { 'README.md': '# project\n', '.gitignore': '.env\nsetup-out/\n' },
        tasks: [{ id: 'task-001', validate: 'test -f .env && test -f setup-out/ok && test -f src/task-001/done.txt' }],
        sessionConfig: { worktree_setup: 'mkdir -p setup-out && touch setup-out/ok' },
      });
      writeFileSync(join(root, '.env'), 'TOKEN=1\n');
      writeFileSync(join(root, '.worktreeinclude'), '.env\n');
      inProgress(root, 'task-001');
      const wt = worktree(root, 'task-001');
      commitWork(wt, 'task-001');
      git(root, 'worktree', 'remove', '--force', wt);
      verdict(root, 'task-001', 'success');
      const r = await run(root, NO_AGENT);
      assert.equal(r.code, 0, show(r, root));
      assert.equal(taskById(root, 'task-001').status, 'completed');
      assert.equal(taskById(root, 'task-001').error_log.length, 0, 'nothing charged');
      assert.match(read(join(root, 'harness-progress.txt')), / INIT \[task-001\] new worktree; \.worktreeinclude: 1 file copied/);
    });

    it('uncommitted changes of an agent that reported success → committed (WARN), validated and merged', async () => {
      const root = harness({ tasks: [{ id: 'task-001' }] });
      inProgress(root, 'task-001');
      const wt = worktree(root, 'task-001');
      writeFiles(wt, { 'src/task-001/done.txt': 'never committed\n' });
      verdict(root, 'task-001', 'success');
      const r = await run(root, NO_AGENT);
      assert.equal(r.code, 0, show(r, root));
      assert.match(linesOf(root, 'WARN', 'task-001')[0]!.message, /uncommitted change\(s\); committed them/);
      assert.equal(taskById(root, 'task-001').status, 'completed');
      assert.equal(read(join(root, 'src/task-001/done.txt')), 'never committed\n');
      assertCleared(root, 'task-001');
    });

    it("files a validation left in the worktree after the agent's work was committed are not merged (only the agent's commits are)", async () => {
      const root = harness({ tasks: [{ id: 'task-001' }] });
      inProgress(root, 'task-001');
      const wt = worktree(root, 'task-001');
      commitWork(wt, 'task-001');
      // The dead controller had committed the agent's work and started validating: its marker says so.
      const attempt = join(root, '.launchpad/runs/task-001/attempt-1');
      mkdirSync(attempt, { recursive: true });
      writeFileSync(join(attempt, 'work-committed'), `${DEAD_AGENT}\n`);
      writeFiles(wt, { 'coverage/report.txt': 'made by the validation\n', 'src/task-001/cache.tmp': 'x\n' });
      const r = await run(root, NO_AGENT);
      assert.equal(r.code, 0, show(r, root));
      assert.equal(taskById(root, 'task-001').status, 'completed');
      assert.equal(read(join(root, 'src/task-001/done.txt')), 'recovered\n');
      assert.ok(!existsSync(join(root, 'coverage/report.txt')), "the validation's output reached the base branch");
      assert.ok(!existsSync(join(root, 'src/task-001/cache.tmp')));
      assert.equal(linesOf(root, 'WARN', 'task-001').length, 0, 'nothing was committed as leftovers');
      assertCleared(root, 'task-001');
    });

    it('a verdict of another agent (an earlier attempt of the task) does not count: the attempt is resumed, not merged', async () => {
      const root = harness({ tasks: [{ id: 'task-001' }] });
      inProgress(root, 'task-001', { attempts: 2, agent_id: 'agent_dead0002' });
      commitWork(worktree(root, 'task-001'), 'task-001', 'half\n', 'part1.txt');
      verdict(root, 'task-001', 'success', 'agent_dead0001');
      const r = await run(root, agentCmd('fails.sh'));
      assert.match(recoveryOf(root, 'task-001')[0]!, /^action="resumed agent" /, show(r, root));
      assert.equal(linesOf(root, 'VALIDATE', 'task-001').length, 0);
      assert.equal(merges(root).length, 0);
    });
  });

  it('a recorded verdict of failure (a crash before it was acted on) → the failure recorded with its reason and output, nothing merged, commits kept', async () => {
    const root = harness({ tasks: [{ id: 'task-001', validate: 'true', maxAttempts: 1 }] });
    inProgress(root, 'task-001');
    commitWork(worktree(root, 'task-001'), 'task-001', 'half done\n');
    verdict(root, 'task-001', 'fail [AGENT_FAIL] could not resolve import errors');
    writeFileSync(join(root, '.launchpad/runs/task-001/attempt-1/transcript.log'), 'trying\nRESULT:FAIL could not resolve import errors\n');
    const base = git(root, 'rev-parse', 'HEAD');
    const r = await run(root, NO_AGENT);
    assert.equal(r.code, 1, show(r, root));
    assert.deepEqual(recoveryOf(root, 'task-001'), [
      'action="recorded failure" reason="the agent ended with a failure; the controller stopped before recording it"',
    ]);
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed');
    assert.deepEqual(t.error_log, ['[AGENT_FAIL] could not resolve import errors']);
    assert.match(String(t.error_tail), /RESULT:FAIL could not resolve import errors\n$/);
    assert.equal(git(root, 'rev-parse', 'HEAD'), base, 'a failed attempt reached main');
    assert.equal(linesOf(root, 'VALIDATE').length, 0);
    assert.equal(
      linesOf(root, 'DISCARD', 'task-001')[0]!.message,
      'worktree=harness-task-001 reason="agent reported failure" kept=refs/launchpad/attempts/task-001/1',
    );
    assert.deepEqual(unreachableAgentCommits(root), []);
    assertCleared(root, 'task-001');
  });

  describe('no verdict (the attempt was interrupted): resumed as the same attempt, or started afresh with the attempt given back', () => {
    it('commits carrying part of the work (which the validation would pass) → resumed in the kept worktree, merged only after its RESULT:SUCCESS', async () => {
      const root = harness({ tasks: [{ id: 'task-001', validate: 'test -f src/task-001/part1.txt' }] });
      inProgress(root, 'task-001', {
        checkpoints: [
          { step: 1, total: 2, description: 'part 1 committed', timestamp: '2025-07-01T10:00:00Z', attempt: 1, agent_id: DEAD_AGENT },
        ],
      });
      const wt = worktree(root, 'task-001');
      commitWork(wt, 'task-001', 'part1 by attempt 1\n', 'part1.txt');
      const prompt = join(tempDir(), 'prompt.md');
      const r = await run(root, agentCmd('finishes-work.sh'), [], { PROMPT_COPY: prompt });
      assert.equal(r.code, 0, show(r, root));
      assert.deepEqual(recoveryOf(root, 'task-001'), [
        'action="resumed agent" reason="interrupted without a verdict: 1 commit(s), 0 uncommitted change(s), 1 checkpoint(s)"',
      ]);
      assertOrder(root, 'task-001', ['RECOVERY', 'DISPATCH', 'AGENT_DONE', 'VALIDATE', 'MERGE', 'Completed']);
      assert.match(linesOf(root, 'DISPATCH', 'task-001')[0]!.message, /^agent=agent_\w+ worktree=harness-task-001 resuming=attempt-1$/);
      // The resumed agent found the first part where the interrupted one left it, and finished.
      assert.deepEqual(treeFiles(root, 'main', 'src/task-001'), {
        'src/task-001/part1.txt': 'part1 by attempt 1',
        'src/task-001/part2.txt': 'part2 by attempt 1',
      });
      const t = taskById(root, 'task-001');
      assert.equal(t.status, 'completed');
      assert.equal(t.attempts, 1, 'the resumed agent continues the same attempt: an interruption is not charged');
      assert.deepEqual(
        t.checkpoints?.map((c) => c.description),
        ['part 1 committed'],
        'checkpoints are kept across recoveries',
      );
      const text = read(prompt);
      assert.match(text, /## Resuming an Interrupted Attempt\nAttempt 1 of this task was interrupted before it reported a result/);
      assert.match(text, /Commits it made on harness-task-001 \(oldest first\):\n- [0-9a-f]{7,} \[task-001\] work\n/);
      assert.match(text, /- attempt 1, step 1\/2: "part 1 committed" \(2025-07-01T10:00:00Z\)/);
      assert.doesNotMatch(text, /Changes it left uncommitted/);
      assertCleared(root, 'task-001');
    });

    it('a resumed agent that fails → its failure recorded, the partial work never merged (though its validation passes), every commit kept', async () => {
      const root = harness({ tasks: [{ id: 'task-001', validate: 'test -f src/task-001/part1.txt', maxAttempts: 1 }] });
      inProgress(root, 'task-001');
      commitWork(worktree(root, 'task-001'), 'task-001', 'half\n', 'part1.txt');
      const base = git(root, 'rev-parse', 'HEAD');
      const r = await run(root, agentCmd('fails.sh'));
      assert.equal(r.code, 1, show(r, root));
      assert.equal(git(root, 'rev-parse', 'HEAD'), base, 'partial work was merged');
      assert.equal(linesOf(root, 'VALIDATE').length, 0);
      const t = taskById(root, 'task-001');
      assert.equal(t.status, 'failed');
      assert.equal(t.attempts, 1);
      assert.deepEqual(t.error_log, ['[AGENT_FAIL] could not resolve import errors']);
      assert.deepEqual(launchpadRefs(root), ['refs/launchpad/attempts/task-001/1']);
      assert.deepEqual(treeFiles(root, 'refs/launchpad/attempts/task-001/1', 'src/task-001'), { 'src/task-001/part1.txt': 'half' });
      assert.deepEqual(unreachableAgentCommits(root), []);
      assertCleared(root, 'task-001');
    });

    it('uncommitted changes only → kept as a commit at refs/launchpad/attempts/<id>/<attempt>, left in place, and the agent resumed with them', async () => {
      const root = harness({ tasks: [{ id: 'task-001', validate: 'test -f src/task-001/part2.txt' }] });
      inProgress(root, 'task-001');
      const wt = worktree(root, 'task-001');
      writeFiles(wt, { 'src/task-001/part1.txt': 'part1, never committed\n', 'README.md': '# project, edited\n' });
      const prompt = join(tempDir(), 'prompt.md');
      const r = await run(root, agentCmd('finishes-work.sh'), [], { PROMPT_COPY: prompt });
      assert.equal(r.code, 0, show(r, root));
      const ref = 'refs/launchpad/attempts/task-001/1';
      assert.deepEqual(recoveryOf(root, 'task-001'), [
        `action="resumed agent" reason="interrupted without a verdict: 0 commit(s), 2 uncommitted change(s), 0 checkpoint(s)" kept=${ref}`,
      ]);
      // The snapshot: the uncommitted work on top of the base, the untracked file included.
      assert.deepEqual(treeFiles(root, ref, 'src/task-001'), { 'src/task-001/part1.txt': 'part1, never committed' });
      assert.equal(git(root, 'show', `${ref}:README.md`), '# project, edited');
      assert.equal(git(root, 'rev-parse', `${ref}^`), taskById(root, 'task-001').started_at_commit);
      assert.match(
        read(prompt),
        /Changes it left uncommitted, still in the worktree as they were \(a copy is kept at refs\/launchpad\/attempts\/task-001\/1\):\n- README\.md\n- src\/task-001\/part1\.txt\n/,
      );
      assert.match(read(prompt), /It made no commits\./);
      // What the interrupted agent left was the resumed agent's to finish, and it reached main with it.
      assert.equal(read(join(root, 'src/task-001/part1.txt')), 'part1, never committed\n');
      assert.equal(read(join(root, 'README.md')), '# project, edited\n');
      assert.equal(taskById(root, 'task-001').status, 'completed');
      assertCleared(root, 'task-001');
    });

    it('checkpoints only (no commit, no change) → resumed with its checkpoints in the prompt', async () => {
      const root = harness({ tasks: [{ id: 'task-001', validate: 'test -f src/task-001/part2.txt' }] });
      inProgress(root, 'task-001', {
        checkpoints: [
          { step: 1, total: 3, description: 'read the code', timestamp: '2025-07-01T09:00:00Z', attempt: 1, agent_id: 'agent_old' },
          { step: 1, total: 3, description: 'read the code again', timestamp: '2025-07-01T10:00:00Z', attempt: 1, agent_id: DEAD_AGENT },
        ],
      });
      worktree(root, 'task-001');
      const prompt = join(tempDir(), 'prompt.md');
      const r = await run(root, agentCmd('finishes-work.sh'), [], { PROMPT_COPY: prompt });
      assert.equal(r.code, 0, show(r, root));
      assert.deepEqual(recoveryOf(root, 'task-001'), [
        'action="resumed agent" reason="interrupted without a verdict: 0 commit(s), 0 uncommitted change(s), 1 checkpoint(s)"',
      ]);
      assert.match(
        read(prompt),
        /- attempt 1, step 1\/3: "read the code" \(2025-07-01T09:00:00Z\)\n- attempt 1, step 1\/3: "read the code again"/,
      );
      assert.equal(taskById(root, 'task-001').status, 'completed');
    });

    it('nothing at all (worktree without commits, changes or checkpoints) → started afresh: no failure recorded, the attempt given back', async () => {
      const root = harness({ tasks: [{ id: 'task-001' }] });
      inProgress(root, 'task-001');
      worktree(root, 'task-001');
      const r = await run(root, agentCmd('writes-done.sh'));
      assert.equal(r.code, 0, show(r, root));
      assert.deepEqual(recoveryOf(root, 'task-001'), ['action="started afresh" reason="interrupted before any progress"']);
      assert.equal(linesOf(root, 'ERROR').length, 0);
      assertOrder(root, 'task-001', ['RECOVERY', 'DISPATCH', 'MERGE', 'Completed']);
      assert.match(
        linesOf(root, 'DISPATCH', 'task-001')[0]!.message,
        /^agent=agent_\w+ worktree=harness-task-001$/,
        'a fresh dispatch, not a resume',
      );
      assert.equal(linesOf(root, 'BATCH').length, 1);
      const t = taskById(root, 'task-001');
      assert.equal(t.status, 'completed');
      assert.deepEqual(t.error_log, []);
      assert.equal(t.attempts, 1);
      assert.doesNotMatch(read(join(root, '.launchpad/runs/task-001/attempt-1/prompt.md')), /Previous Attempt|Resuming/);
      assertCleared(root, 'task-001');
    });

    it('no worktree and no branch → started afresh (no failure recorded)', async () => {
      const root = harness({ tasks: [{ id: 'task-001' }] });
      inProgress(root, 'task-001');
      const r = await run(root, agentCmd('writes-done.sh'));
      assert.equal(r.code, 0, show(r, root));
      assert.deepEqual(recoveryOf(root, 'task-001'), ['action="started afresh" reason="no worktree or branch found"']);
      const t = taskById(root, 'task-001');
      assert.equal(t.status, 'completed');
      assert.equal(t.attempts, 1);
      assert.deepEqual(t.error_log, []);
      assert.equal(linesOf(root, 'ERROR').length, 0);
    });

    it('attempts used up, no worktree and no branch → started afresh all the same: the interrupted attempt is given back', async () => {
      const root = harness({ tasks: [{ id: 'task-001', maxAttempts: 1 }] });
      inProgress(root, 'task-001');
      const r = await run(root, agentCmd('writes-done.sh'));
      assert.equal(r.code, 0, show(r, root));
      assert.deepEqual(recoveryOf(root, 'task-001'), ['action="started afresh" reason="no worktree or branch found"']);
      const t = taskById(root, 'task-001');
      assert.equal(t.status, 'completed');
      assert.deepEqual([t.attempts, t.error_log], [1, []]);
      assertCleared(root, 'task-001');
    });

    it('attempts used up, worktree without progress → removed, then started afresh with the attempt given back', async () => {
      const root = harness({ tasks: [{ id: 'task-001', maxAttempts: 1 }] });
      inProgress(root, 'task-001');
      worktree(root, 'task-001');
      const r = await run(root, agentCmd('writes-done.sh'));
      assert.equal(r.code, 0, show(r, root));
      assert.deepEqual(recoveryOf(root, 'task-001'), ['action="started afresh" reason="interrupted before any progress"']);
      assertOrder(root, 'task-001', ['RECOVERY', 'DISPATCH', 'MERGE', 'Completed']);
      const t = taskById(root, 'task-001');
      assert.deepEqual([t.status, t.attempts, t.error_log], ['completed', 1, []]);
      assert.deepEqual(launchpadRefs(root), []);
      assertCleared(root, 'task-001');
    });

    it('attempts used up, with progress → resumed as the same attempt (not failed), its uncommitted work kept under a ref first', async () => {
      const root = harness({ tasks: [{ id: 'task-001', maxAttempts: 2, validate: 'test -f src/task-001/part2.txt' }] });
      inProgress(root, 'task-001', { attempts: 2 });
      const wt = worktree(root, 'task-001');
      commitWork(wt, 'task-001', 'part 1\n', 'part1.txt');
      writeFiles(wt, { 'src/task-001/notes.txt': 'unfinished\n' });
      const r = await run(root, agentCmd('finishes-work.sh'));
      assert.equal(r.code, 0, show(r, root));
      const ref = 'refs/launchpad/attempts/task-001/2';
      assert.deepEqual(recoveryOf(root, 'task-001'), [
        `action="resumed agent" reason="interrupted without a verdict: 1 commit(s), 1 uncommitted change(s), 0 checkpoint(s)" kept=${ref}`,
      ]);
      assert.match(linesOf(root, 'DISPATCH', 'task-001')[0]!.message, / resuming=attempt-2$/);
      const t = taskById(root, 'task-001');
      assert.deepEqual([t.status, t.attempts, t.error_log], ['completed', 2, []]);
      assert.deepEqual(treeFiles(root, ref, 'src/task-001'), {
        'src/task-001/notes.txt': 'unfinished',
        'src/task-001/part1.txt': 'part 1',
      });
      assert.equal(read(join(root, 'src/task-001/part2.txt')), 'part2 by attempt 2\n');
      assert.deepEqual(unreachableAgentCommits(root), []);
      assertCleared(root, 'task-001');
    });

    it('a git lock a killed commit left in the worktree (index.lock) is removed, so the resumed agent can commit', async () => {
      const root = harness({ tasks: [{ id: 'task-001', validate: 'test -f src/task-001/part2.txt' }] });
      inProgress(root, 'task-001');
      const wt = worktree(root, 'task-001');
      commitWork(wt, 'task-001', 'part1\n', 'part1.txt');
      // `git commit` killed half-way: the next part staged, the index locked.
      writeFiles(wt, { 'src/task-001/part2.txt': 'staged\n' });
      git(wt, 'add', '-A');
      const lock = git(wt, 'rev-parse', '--path-format=absolute', '--git-path', 'index.lock');
      writeFileSync(lock, read(git(wt, 'rev-parse', '--path-format=absolute', '--git-path', 'index')));
      const r = await run(root, agentCmd('finishes-work.sh'));
      assert.equal(r.code, 0, show(r, root));
      assert.deepEqual(recoveryOf(root, 'task-001'), [
        'action="removed stale git lock" reason="index.lock left by a git command killed half-way"',
        'action="resumed agent" reason="interrupted without a verdict: 1 commit(s), 1 uncommitted change(s), 0 checkpoint(s)" kept=refs/launchpad/attempts/task-001/1',
      ]);
      assert.equal(taskById(root, 'task-001').status, 'completed');
      assert.equal(read(join(root, 'src/task-001/part2.txt')), 'part2 by attempt 1\n');
    });
  });

  describe('merged already (a crash between the merge and the state write)', () => {
    it('→ completed without a second merge commit, and the MERGE line of the merge it found', async () => {
      const root = harness({ tasks: [{ id: 'task-001' }] });
      inProgress(root, 'task-001');
      commitWork(worktree(root, 'task-001'), 'task-001');
      git(root, 'merge', '-q', '--no-ff', '-m', 'Merge [task-001] Task task-001', 'harness-task-001');
      const head = git(root, 'rev-parse', 'HEAD');
      const short = head.slice(0, 7);
      const r = await run(root, NO_AGENT);
      assert.equal(r.code, 0, show(r, root));
      assert.equal(taskById(root, 'task-001').status, 'completed');
      assert.deepEqual(recoveryOf(root, 'task-001'), [`action="marked completed" reason="its branch was already merged (merge ${short})"`]);
      assert.deepEqual(
        linesOf(root, 'MERGE', 'task-001').map((l) => l.message),
        [`branch=harness-task-001 into=main (commit ${short})`],
      );
      assertOrder(root, 'task-001', ['RECOVERY', 'MERGE', 'Completed']);
      assert.equal(git(root, 'rev-parse', 'HEAD'), head, 'merged a second time');
      assert.equal(merges(root).length, 1);
      assertCleared(root, 'task-001');
    });

    it('the task file without started_at_commit (written by an older controller or by hand) → still completed', async () => {
      const root = harness({ tasks: [{ id: 'task-001' }] });
      inProgress(root, 'task-001', { started_at_commit: undefined });
      commitWork(worktree(root, 'task-001'), 'task-001');
      git(root, 'merge', '-q', '--no-ff', '-m', 'Merge [task-001] Task task-001', 'harness-task-001');
      const head = git(root, 'rev-parse', 'HEAD');
      const r = await run(root, NO_AGENT);
      assert.equal(taskById(root, 'task-001').status, 'completed', show(r, root));
      assert.equal(r.code, 0, show(r, root));
      assert.equal(git(root, 'rev-parse', 'HEAD'), head);
      assertCleared(root, 'task-001');
    });
  });
});

describe('controller: the rest of a session start after a crash', function () {
  this.timeout(120_000);

  it('a completed task whose log lost its MERGE and Completed lines (a kill between the state write and the log) gets them back, said by a RECOVERY line', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }, { id: 'task-002' }] });
    const r1 = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r1.code, 0, show(r1, root));
    // Cut the log back to just after task-001's DISPATCH's session lines, as a kill would have.
    const lines = read(join(root, 'harness-progress.txt')).split('\n');
    const kept = lines.filter((l) => !/ (MERGE|Completed) \[task-001\]/.test(l));
    writeFileSync(join(root, 'harness-progress.txt'), kept.join('\n'));
    const merge = git(root, 'log', '--first-parent', '--merges', '--format=%h %s', 'main')
      .split('\n')
      .find((l) => l.includes('Merge [task-001]'))!
      .split(' ')[0]!;
    const r2 = await run(root, NO_AGENT);
    assert.equal(r2.code, 0, show(r2, root));
    const session2 = logLines(root).filter((l) => l.session === 2 && l.task === 'task-001');
    assert.deepEqual(
      session2.map((l) => [l.type, l.message]),
      [
        ['RECOVERY', `action="logged completion" reason="task file says completed (merge ${merge}) but the log had no Completed line"`],
        ['MERGE', `branch=harness-task-001 into=main (commit ${merge})`],
        ['Completed', `(commit ${merge})`],
      ],
    );
    // task-002's lines were all there: nothing written for it, and nothing more the next time.
    assert.equal(logLines(root).filter((l) => l.session === 2 && l.task === 'task-002').length, 0);
    await run(root, NO_AGENT);
    assert.equal(linesOf(root, 'RECOVERY').length, 1);
  });

  it('a recorded process of a dead controller that still runs is ended; a reused pid (other identity) is left alone', async () => {
    const root = harness({ tasks: [] });
    const orphan = spawn('sleep', ['120'], { detached: true, stdio: 'ignore' });
    const stranger = spawn('sleep', ['120'], { detached: true, stdio: 'ignore' });
    const orphanExit = new Promise<NodeJS.Signals | null>((resolve) => orphan.on('exit', (_c, s) => resolve(s)));
    try {
      await waitFor('the sleeps to start', () => processIdentity(orphan.pid!) && processIdentity(stranger.pid!));
      const procs = join(root, '.launchpad/procs');
      mkdirSync(procs, { recursive: true });
      const record = (pid: number, identity: string | undefined, label: string) =>
        JSON.stringify({ pid, identity, label, started_at: '2025-07-01T10:00:00Z' });
      writeFileSync(join(procs, 'task-001.agent.json'), record(orphan.pid!, processIdentity(orphan.pid!), 'agent of task-001'));
      writeFileSync(join(procs, 'task-002.validation.json'), record(stranger.pid!, 'someone-else:123', 'validation of task-002'));
      const r = await run(root, NO_AGENT);
      assert.equal(r.code, 0, show(r, root));
      assert.equal(await orphanExit, 'SIGKILL');
      assert.deepEqual(
        linesOf(root, 'RECOVERY').map((l) => l.message),
        ['action="ended orphaned process" reason="agent of task-001 outlived its controller"'],
      );
      assert.equal(stranger.exitCode, null);
      assert.equal(stranger.signalCode, null, 'a process that only reuses a recorded pid was killed');
      assert.deepEqual(ls(procs), []);
    } finally {
      orphan.kill('SIGKILL');
      stranger.kill('SIGKILL');
    }
  });

  it('orphaned worktrees and branches of completed, failed, pending and removed tasks are removed, their unmerged commits kept; other branches are not touched', async () => {
    const root = harness({
      tasks: [
        { id: 'task-001', status: 'completed', attempts: 1 },
        { id: 'task-002', status: 'failed', attempts: 3, error_log: ['[TEST_FAIL] x', '[TEST_FAIL] x', '[TEST_FAIL] x'] },
        { id: 'task-003' },
      ],
    });
    worktree(root, 'task-001');
    const wt2 = worktree(root, 'task-002');
    commitWork(wt2, 'task-002');
    git(root, 'worktree', 'remove', wt2);
    commitWork(worktree(root, 'task-003'), 'task-003', 'stale\n');
    git(root, 'branch', 'harness-not-a-task');
    git(root, 'branch', 'topic');
    // A worktree of a task a person removed from the file since.
    commitWork(worktree(root, 'task-009'), 'task-009', 'removed task\n');
    // A folder in the worktree root that git does not know (a crash inside `git worktree add`).
    mkdirSync(join(defaultWorktreeRoot(root), 'task-002', 'src'), { recursive: true });

    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 1, show(r, root));
    assert.deepEqual(
      linesOf(root, 'RECOVERY')
        .map((l) => [l.task, l.message])
        .sort(),
      [
        ['task-001', 'action="removed orphaned worktree" reason="task is completed"'],
        ['task-002', 'action="removed orphaned worktree" reason="task is failed" kept=refs/launchpad/attempts/task-002/3'],
        ['task-003', 'action="removed orphaned worktree" reason="task is pending" kept=refs/launchpad/attempts/task-003/0'],
        [
          'task-009',
          'action="removed orphaned worktree" reason="no such task in harness-tasks.json" kept=refs/launchpad/attempts/task-009/0',
        ],
      ],
    );
    // task-003 then ran from a fresh worktree, not from the stale one.
    assert.equal(taskById(root, 'task-003').status, 'completed');
    assert.equal(read(join(root, 'src/task-003/done.txt')), 'done by task-003 attempt 1\n');
    assert.deepEqual(harnessBranches(root), ['harness-not-a-task']);
    assert.match(git(root, 'branch', '--list', 'topic'), /topic/);
    assert.deepEqual(extraWorktrees(root), []);
    assert.deepEqual(ls(defaultWorktreeRoot(root)), []);
    assert.deepEqual(unreachableAgentCommits(root), []);
  });

  it('a half-done merge of ours (MERGE_HEAD, "Merge [id]" message) is aborted, then the task recovered with one merge', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    inProgress(root, 'task-001');
    commitWork(worktree(root, 'task-001'), 'task-001');
    verdict(root, 'task-001', 'success');
    quietGit(root, 'merge', '-q', '--no-ff', '--no-commit', '-m', 'Merge [task-001] Task task-001', 'harness-task-001');
    assert.ok(existsSync(join(root, '.git/MERGE_HEAD')));
    const r = await run(root, NO_AGENT);
    assert.equal(r.code, 0, show(r, root));
    assert.deepEqual(
      linesOf(root, 'ROLLBACK').map((l) => l.message),
      ['git merge --abort (interrupted: Merge [task-001] Task task-001)'],
    );
    assert.equal(taskById(root, 'task-001').status, 'completed');
    assert.equal(merges(root).length, 1);
    assert.ok(!existsSync(join(root, '.git/MERGE_HEAD')));
    assertCleared(root, 'task-001');
  });

  it("a person's own merge in progress is not ours to abort: the run refuses (exit 2) and leaves it", async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    git(root, 'checkout', '-q', '-b', 'topic');
    writeFiles(root, { 'topic.txt': 'topic\n' });
    git(root, 'add', 'topic.txt');
    git(root, 'commit', '-q', '-m', 'topic');
    git(root, 'checkout', '-q', 'main');
    quietGit(root, 'merge', '-q', '--no-ff', '--no-commit', 'topic');
    const r = await run(root, NO_AGENT);
    assert.equal(r.code, 2, show(r, root));
    assert.match(r.stderr, /uncommitted changes/);
    assert.ok(existsSync(join(root, '.git/MERGE_HEAD')), "the person's merge was aborted");
    assert.equal(taskById(root, 'task-001').status, 'pending');
  });

  it('a worktree left in the middle of a rebase (a crash inside the merge protocol) is brought back and handled, not committed mid-rebase', async () => {
    const root = harness({ files: { 'README.md': '# p\n', 'src/task-001/f.txt': 'orig\n' }, tasks: [{ id: 'task-001', maxAttempts: 1 }] });
    inProgress(root, 'task-001');
    const wt = worktree(root, 'task-001');
    writeFiles(wt, { 'src/task-001/f.txt': 'branch\n', 'src/task-001/done.txt': 'done\n' });
    git(wt, 'add', '-A');
    git(wt, 'commit', '-q', '-m', '[task-001] work');
    verdict(root, 'task-001', 'success');
    writeFiles(root, { 'src/task-001/f.txt': 'main\n' });
    git(root, 'commit', '-q', '-am', 'main moved on');
    assert.notEqual(spawnSync('git', ['rebase', 'main'], { cwd: wt, stdio: 'ignore' }).status, 0, 'the rebase should stop on its conflict');
    const r = await run(root, NO_AGENT);
    assert.equal(r.code, 1, show(r, root));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed', show(r, root));
    assert.deepEqual(t.error_log, ['[MERGE_CONFLICT] conflicts with main in src/task-001/f.txt; rebase failed']);
    assert.equal(git(root, 'log', '-1', '--format=%s', 'main'), 'main moved on');
    assert.deepEqual(unreachableAgentCommits(root), []);
    assertCleared(root, 'task-001');
  });
});
