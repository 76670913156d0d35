// Review before merge: a task under review "manual" passes its validation and waits instead of
// merging, its worktree, branch and commits kept, its attempt counted once; the run goes on with
// the other tasks and ends with exit 8. `launchpad request-changes` sends comments on lines back:
// the next run resumes the same worktree with each comment (file, line, the line's text) in the
// prompt, and the task is reviewed again (round 2) without being charged. `launchpad approve`
// makes the next run validate and merge the reviewed commit, with no agent. A kill -9 while a
// task awaits review loses nothing.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  agentCmd,
  byTask,
  defaultWorktreeRoot,
  gates,
  git,
  harness,
  launchpad,
  linesOf,
  merges,
  read,
  run,
  show,
  startRun,
  taskById,
  tempDir,
  unreachableAgentCommits,
  waitFor,
  waitForLog,
} from './support';

const REVIEWED = { id: 'task-001', validate: 'test -f src/task-001/a.txt && test -f src/task-001/b.txt', review: 'manual' };
const OTHER = { id: 'task-002' };
const AGENT = byTask({ 'task-001': agentCmd('addresses-review.sh') }, agentCmd('writes-done.sh'));

/** The prompts addresses-review.sh copied (PROMPT_COPY=<dir>/prompt), oldest first. */
function prompts(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.startsWith('prompt.'))
    .sort()
    .map((f) => read(join(dir, f)));
}

async function inReview(root: string, env: NodeJS.ProcessEnv = {}) {
  const r = await run(root, AGENT, [], env);
  assert.equal(r.code, 8, show(r, root));
  return r;
}

describe('controller: review before merge', function () {
  this.timeout(120_000);

  it('review "manual": validated, the task awaits review with its work kept, counted once; another task merges; exit 8 lists it', async () => {
    const root = harness({ tasks: [REVIEWED, OTHER] });
    const r = await inReview(root);

    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'awaiting_review');
    assert.equal(t.attempts, 1, 'the attempt that passed stays counted');
    const commit = git(root, 'rev-parse', 'harness-task-001');
    assert.equal(t.review_round?.number, 1);
    assert.equal(t.review_round?.commit, commit);
    assert.equal(t.review_round?.base, git(root, 'rev-parse', 'main~1'));
    assert.deepEqual(
      merges(root).map((m) => m.subject),
      ['Merge [task-002] Task task-002'],
    );
    const wt = join(defaultWorktreeRoot(root), 'task-001');
    assert.ok(existsSync(join(wt, 'src/task-001/a.txt')), 'its worktree is kept');
    assert.deepEqual(
      linesOf(root, 'REVIEW', 'task-001').map((l) => l.message),
      [`awaiting review round=1 commit=${commit.slice(0, 7)} kept=refs/launchpad/attempts/task-001/1`],
    );
    assert.match(r.stdout, /^ {2}review {3}task-001 {2}Task task-001 {2}\(round 1, [0-9a-f]{7}\)$/m);
    assert.match(r.stdout, /^waiting for people: task-001 awaits review \(launchpad review ID, then approve or request-changes\)/m);

    const status = JSON.parse((await launchpad(root, ['status', '--json'])).stdout);
    assert.equal(status.awaiting_review, 1);
    const row = status.tasks.find((x: { id: string }) => x.id === 'task-001');
    assert.deepEqual([row.state, row.review.number, row.review.commit], ['awaiting_review', 1, commit]);
    const text = (await launchpad(root, ['status'])).stdout;
    assert.match(
      text,
      new RegExp(`^ {4}review round 1: ${commit.slice(0, 7)} \\(launchpad review task-001, then approve or request-changes\\)$`, 'm'),
    );
    const events = readdirSync(join(root, '.launchpad/events')).flatMap((f) =>
      readFileSync(join(root, '.launchpad/events', f), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    );
    assert.ok(events.some((e) => e.type === 'task' && e.task === 'task-001' && e.event === 'review'));
    assert.equal(events.at(-1).outcome.exit_code, 8);

    // What a person reviews: the files and the diff since the branch started.
    const view = JSON.parse((await launchpad(root, ['review', 'task-001', '--json'])).stdout);
    assert.deepEqual(
      [view.round, view.commit, view.worktree, view.files],
      [
        1,
        commit,
        wt,
        [
          { path: 'src/task-001/a.txt', status: 'A' },
          { path: 'src/task-001/b.txt', status: 'A' },
        ],
      ],
    );
    const diff = await launchpad(root, ['review', 'task-001']);
    assert.equal(diff.code, 0, show(diff));
    assert.match(diff.stdout, /^\+gamma$/m);
    assert.match(diff.stdout, /^next: launchpad approve task-001 {3}or {3}launchpad request-changes task-001/m);
  });

  it('request-changes, then approve: the agent gets both comments in the same worktree, is reviewed again uncharged, and merges once', async () => {
    const root = harness({ tasks: [REVIEWED, OTHER] });
    const copies = tempDir();
    const prompt = join(copies, 'prompt');
    await inReview(root, { PROMPT_COPY: prompt });
    const first = git(root, 'rev-parse', 'harness-task-001');

    const asked = await launchpad(root, [
      'request-changes',
      'task-001',
      '--comment',
      'src/task-001/a.txt:2 say more than beta',
      '--comment',
      'src/task-001/b.txt:1 count from zero',
      '--json',
    ]);
    assert.equal(asked.code, 0, show(asked, root));
    assert.deepEqual(JSON.parse(asked.stdout).comments, [
      { file: 'src/task-001/a.txt', line: 2, text: 'beta', comment: 'say more than beta' },
      { file: 'src/task-001/b.txt', line: 1, text: 'one', comment: 'count from zero' },
    ]);
    assert.deepEqual([taskById(root, 'task-001').status, taskById(root, 'task-001').attempts], ['pending', 0]);

    const r = await run(root, AGENT, [], { PROMPT_COPY: prompt });
    assert.equal(r.code, 8, show(r, root));
    const [, second] = prompts(copies);
    assert.ok(second, 'the review turn copied its prompt');
    assert.match(second, /## Requested Changes \(review round 1\)\n/);
    assert.match(second, /^- `src\/task-001\/a.txt` line 2: `beta`\n {2}> say more than beta$/m);
    assert.match(second, /^- `src\/task-001\/b.txt` line 1: `one`\n {2}> count from zero$/m);
    assert.match(second, /## Continuing After the Review/);
    assert.match(linesOf(root, 'DISPATCH', 'task-001').at(-1)!.message, / review=round-1$/);

    const t = taskById(root, 'task-001');
    assert.deepEqual([t.status, t.attempts, t.review_round?.number], ['awaiting_review', 1, 2], 'round 2, the attempt not charged again');
    // The same branch went on: the first draft is under the addressed commit.
    assert.equal(git(root, 'merge-base', '--is-ancestor', first, 'harness-task-001'), '');

    const approved = await launchpad(root, ['approve', 'task-001']);
    assert.equal(approved.code, 0, show(approved, root));
    assert.match(approved.stdout, /^task-001: approved \([0-9a-f]{7}\); the next run merges it first$/m);
    assert.match((await launchpad(root, ['status'])).stdout, /^ {4}review round 2 approved: the next run merges it$/m);
    const done = await run(root, AGENT, [], { PROMPT_COPY: prompt });
    assert.equal(done.code, 0, show(done, root));
    assert.equal(prompts(copies).length, 2, 'no agent ran for the approved change');
    assert.match(linesOf(root, 'DISPATCH', 'task-001').at(-1)!.message, / approved=round-2$/);
    assert.deepEqual([taskById(root, 'task-001').status, taskById(root, 'task-001').attempts], ['completed', 1]);
    assert.equal(merges(root).filter((m) => m.subject.startsWith('Merge [task-001]')).length, 1);
    assert.equal(read(join(root, 'src/task-001/a.txt')), 'alpha\nbeta\ngamma\naddressed round 1\n');
    assert.deepEqual(
      linesOf(root, 'REVIEW', 'task-001').map((l) => l.message.replace(/[0-9a-f]{7}/g, 'C')),
      [
        'awaiting review round=1 commit=C kept=refs/launchpad/attempts/task-001/1',
        'changes requested round=1 comments=2',
        'awaiting review round=2 commit=C kept=refs/launchpad/attempts/task-001/1.2',
        'approved round=2 commit=C',
      ],
    );
    assert.deepEqual(unreachableAgentCommits(root), []);
  });

  it('session_config.review "manual" holds every task; approve merges each', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }, { id: 'task-002' }], sessionConfig: { review: 'manual' } });
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 8, show(r, root));
    assert.deepEqual(merges(root), []);
    for (const id of ['task-001', 'task-002']) assert.equal((await launchpad(root, ['approve', id])).code, 0);
    const done = await run(root, agentCmd('writes-done.sh'));
    assert.equal(done.code, 0, show(done, root));
    assert.equal(merges(root).length, 2);
  });

  it('add and edit set a task\'s review: --review manual, --review "" back to the session\'s, anything else refused', async () => {
    const root = harness({ tasks: [] });
    const added = await launchpad(root, ['add', 'Reviewed', '--review', 'manual', '--validate', 'true']);
    assert.equal(added.code, 0, show(added));
    assert.equal(taskById(root, 'task-001').review, 'manual');
    assert.match(linesOf(root, 'INIT', 'task-001')[0]!.message, / review=manual /);
    const bad = await launchpad(root, ['edit', 'task-001', '--review', 'later']);
    assert.equal(bad.code, 2, show(bad));
    assert.match(bad.stderr, /--review: expected manual or auto, got "later"/);
    const cleared = await launchpad(root, ['edit', 'task-001', '--review', '']);
    assert.equal(cleared.code, 0, show(cleared));
    assert.equal(taskById(root, 'task-001').review, undefined);
  });

  it('refuses with exit 2 and changes nothing: a task not awaiting review, a line not in the commit, a round past the cap', async () => {
    const root = harness({ tasks: [REVIEWED], sessionConfig: { max_review_rounds: 1 } });
    const before = read(join(root, 'harness-tasks.json'));
    const pending = await launchpad(root, ['approve', 'task-001']);
    assert.equal(pending.code, 2, show(pending));
    assert.match(pending.stderr, /task "task-001" is pending, not awaiting review/);
    assert.equal(read(join(root, 'harness-tasks.json')), before);

    await inReview(root);
    const reviewed = read(join(root, 'harness-tasks.json'));
    const pastEnd = await launchpad(root, ['request-changes', 'task-001', '--comment', 'src/task-001/b.txt:3 what line?']);
    assert.equal(pastEnd.code, 2, show(pastEnd));
    assert.match(pastEnd.stderr, /comment 1 \(src\/task-001\/b.txt:3\): src\/task-001\/b.txt has 2 line\(s\) in the reviewed commit/);
    const noFile = await launchpad(root, ['request-changes', 'task-001', '--comment', 'src/nope.txt:1 where?']);
    assert.equal(noFile.code, 2, show(noFile));
    assert.match(noFile.stderr, /src\/nope.txt is not in the reviewed commit/);
    const badForm = await launchpad(root, ['request-changes', 'task-001', '--comment', 'no line here']);
    assert.equal(badForm.code, 2, show(badForm));
    assert.match(badForm.stderr, /expected "path:line text"/);
    assert.equal(read(join(root, 'harness-tasks.json')), reviewed);

    assert.equal((await launchpad(root, ['request-changes', 'task-001', '--comment', 'src/task-001/a.txt:1 again'])).code, 0);
    assert.equal((await run(root, AGENT)).code, 8);
    const capped = await launchpad(root, ['request-changes', 'task-001', '--comment', 'src/task-001/a.txt:1 once more']);
    assert.equal(capped.code, 2, show(capped));
    assert.match(
      capped.stderr,
      /changes requested 1 times, the most session_config.max_review_rounds \(1\) allows: approve it, or `launchpad retry task-001`/,
    );
  });

  it('kill -9 of the run while a task awaits review: the review, the worktree and the commit survive; approving merges it', async () => {
    const g = gates();
    const root = harness({ tasks: [REVIEWED, OTHER] });
    const agentLine = byTask({ 'task-001': agentCmd('addresses-review.sh') }, agentCmd('gate.sh', agentCmd('writes-done.sh')));
    const started = startRun(root, agentLine, [], { GATE_DIR: g.dir });
    await waitForLog(root, /REVIEW \[task-001\] awaiting review/);
    await waitFor('task-002 at its gate', () => g.waiting('task-002'));
    started.child.kill('SIGKILL');
    await started.done;

    const t = taskById(root, 'task-001');
    assert.deepEqual([t.status, t.review_round?.number], ['awaiting_review', 1]);
    const commit = git(root, 'rev-parse', 'harness-task-001');
    const wt = join(defaultWorktreeRoot(root), 'task-001');

    // A run before the decision recovers task-002 and leaves the change under review alone.
    g.open('task-002');
    const r1 = await run(root, agentLine, [], { GATE_DIR: g.dir });
    assert.equal(r1.code, 8, show(r1, root));
    assert.equal(git(root, 'rev-parse', 'harness-task-001'), commit);
    assert.ok(existsSync(join(wt, 'src/task-001/a.txt')));

    assert.equal((await launchpad(root, ['approve', 'task-001'])).code, 0);
    const r2 = await run(root, agentLine, [], { GATE_DIR: g.dir });
    assert.equal(r2.code, 0, show(r2, root));
    assert.equal(git(root, 'merge-base', '--is-ancestor', commit, 'main'), '');
    assert.equal(merges(root).filter((m) => m.subject.startsWith('Merge [task-001]')).length, 1);
    assert.deepEqual(unreachableAgentCommits(root), []);
  });

  it('concurrent workers: each review waits once, one worker takes each turn, and the approved changes merge once', async () => {
    const root = harness({
      tasks: [REVIEWED, { ...REVIEWED, id: 'task-002', validate: 'test -f src/task-002/a.txt' }],
      sessionConfig: { concurrency_mode: 'concurrent', lease_seconds: 5, max_parallel_agents: 1 },
    });
    const agent = agentCmd('addresses-review.sh');
    const workers = async () => {
      const runs = ['w1', 'w2'].map((id) => startRun(root, agent, [], { HARNESS_WORKER_ID: id }));
      return Promise.all(runs.map((r) => r.done));
    };
    for (const r of await workers()) assert.ok(r.code === 8 || r.code === 1, show(r, root));
    assert.deepEqual(
      ['task-001', 'task-002'].map((id) => taskById(root, id).status),
      ['awaiting_review', 'awaiting_review'],
    );
    assert.equal((await launchpad(root, ['request-changes', 'task-001', '--comment', 'src/task-001/a.txt:3 not gamma'])).code, 0);
    assert.equal((await launchpad(root, ['approve', 'task-002'])).code, 0);
    for (const r of await workers()) assert.ok(r.code === 8 || r.code === 1, show(r, root));
    assert.equal(linesOf(root, 'DISPATCH', 'task-001').filter((l) => / review=round-1 /.test(l.message + ' ')).length, 1);
    assert.deepEqual([taskById(root, 'task-001').status, taskById(root, 'task-002').status], ['awaiting_review', 'completed']);
    assert.equal((await launchpad(root, ['approve', 'task-001'])).code, 0);
    for (const r of await workers()) assert.ok(r.code === 0 || r.code === 1, show(r, root));
    for (const id of ['task-001', 'task-002']) {
      assert.equal(taskById(root, id).status, 'completed');
      assert.equal(merges(root).filter((m) => m.subject.startsWith(`Merge [${id}]`)).length, 1, `${id} merged once`);
    }
    assert.deepEqual(unreachableAgentCommits(root), []);
  });

  it('in place, where nothing waits before it lands, review "manual" refuses to start', async () => {
    const root = harness({ tasks: [REVIEWED] });
    const r = await run(root, agentCmd('addresses-review.sh'), ['--in-place']);
    assert.equal(r.code, 2, show(r, root));
    assert.match(
      r.stderr + r.stdout,
      /task task-001's review is "manual", but an in-place run commits each task on the checked-out branch/,
    );
    assert.equal(taskById(root, 'task-001').status, 'pending');
  });
});
