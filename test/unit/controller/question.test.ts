// An agent that ends its turn with `QUESTION: …` leaves its task awaiting a person's answer: its
// worktree, branch and commits kept, its attempt given back, its slot freed for the other tasks;
// the run ends with exit 8 and lists the question. `launchpad answer` makes it the first task of
// the next run, which resumes the same worktree with the question and the answer in its prompt.
// A kill -9 while it waits loses nothing; a QUESTION printed by a validation is not a question.
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
  readTasks,
  run,
  show,
  startRun,
  taskById,
  tempDir,
  unreachableAgentCommits,
  waitFor,
  waitForLog,
} from './support';

const ASKS = { id: 'task-001', validate: 'test -f src/task-001/part1.txt && test -f src/task-001/port.txt' };
const OTHER = { id: 'task-002' };
const AGENT = byTask({ 'task-001': agentCmd('asks-question.sh') }, agentCmd('writes-done.sh'));

/** The prompts asks-question.sh copied (PROMPT_COPY=<dir>/prompt), oldest first. */
function prompts(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.startsWith('prompt.'))
    .sort()
    .map((f) => read(join(dir, f)));
}

/** A first run in which task-001's agent asks and task-002 merges: exit 8. */
async function asked(root: string, env: NodeJS.ProcessEnv = {}) {
  const r = await run(root, AGENT, [], env);
  assert.equal(r.code, 8, show(r, root));
  return r;
}

describe('controller: an agent asks a question, a person answers', function () {
  this.timeout(120_000);

  it('QUESTION: the task awaits an answer, its work kept and not charged; another task merges meanwhile; exit 8 lists the question', async () => {
    const root = harness({ tasks: [ASKS, OTHER] });
    const r = await asked(root);

    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'awaiting_answer');
    assert.equal(t.attempts, 0, 'the asking attempt is given back');
    assert.equal(t.question?.text, 'Which port?');
    assert.equal(t.question?.attempt, 1);
    assert.equal(t.question?.answer, undefined);
    assert.equal(taskById(root, 'task-002').status, 'completed');
    assert.deepEqual(
      merges(root).map((m) => m.subject),
      ['Merge [task-002] Task task-002'],
    );

    // The worktree stays, its leftovers committed, its commits kept under a ref of ours.
    const wt = join(defaultWorktreeRoot(root), 'task-001');
    assert.ok(existsSync(join(wt, 'src/task-001/part1.txt')));
    assert.equal(git(wt, 'status', '--porcelain'), '');
    assert.match(git(root, 'log', '--format=%s', 'harness-task-001'), /\[task-001\] part 1/);
    const question = linesOf(root, 'QUESTION', 'task-001');
    assert.deepEqual(
      question.map((l) => l.message),
      ['"Which port?" kept=refs/launchpad/attempts/task-001/1'],
    );
    assert.equal(git(root, 'rev-parse', 'refs/launchpad/attempts/task-001/1'), git(root, 'rev-parse', 'harness-task-001'));
    assert.deepEqual(linesOf(root, 'ERROR'), []);

    // The summary lists it with the command that answers it.
    assert.match(r.stdout, /^ {2}asks {5}task-001 {2}Task task-001\n {11}Which port\?\n {11}answer: .* answer task-001 "…"$/m);
    assert.match(r.stdout, /^waiting for people: task-001 asked a question/m);

    // status and its --json; the run's event stream.
    const status = await launchpad(root, ['status', '--json']);
    const report = JSON.parse(status.stdout);
    assert.equal(report.awaiting_answer, 1);
    const row = report.tasks.find((x: { id: string }) => x.id === 'task-001');
    assert.deepEqual([row.state, row.question.text], ['awaiting_answer', 'Which port?']);
    const events = readdirSync(join(root, '.launchpad/events')).flatMap((f) =>
      readFileSync(join(root, '.launchpad/events', f), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    );
    assert.ok(events.some((e) => e.type === 'task' && e.task === 'task-001' && e.event === 'question' && e.question === 'Which port?'));
    assert.equal(events.at(-1).outcome.exit_code, 8);
  });

  it('launchpad answer, then a run: the agent resumes the same worktree with the question and the answer, succeeds, merges once', async () => {
    const root = harness({ tasks: [ASKS, OTHER] });
    const copies = tempDir();
    const prompt = join(copies, 'prompt');
    await asked(root, { PROMPT_COPY: prompt });
    const firstCommit = git(root, 'rev-parse', 'harness-task-001');

    const answered = await launchpad(root, ['answer', 'task-001', '8080']);
    assert.equal(answered.code, 0, show(answered, root));
    const t = taskById(root, 'task-001');
    assert.deepEqual([t.status, t.question?.answer], ['pending', '8080']);

    const r = await run(root, AGENT, [], { PROMPT_COPY: prompt });
    assert.equal(r.code, 0, show(r, root));
    const [, second] = prompts(copies);
    assert.ok(second, 'the answered attempt copied its prompt');
    assert.match(second, /Attempt 1 of this task stopped to ask:\n> Which port\?\nA person answered:\n> 8080\n/);
    assert.match(second, /## Continuing After the Answer/);
    assert.match(second, /\[task-001\] part 1/);

    const done = taskById(root, 'task-001');
    assert.deepEqual([done.status, done.attempts, done.question], ['completed', 1, undefined]);
    assert.match(linesOf(root, 'DISPATCH', 'task-001').at(-1)!.message, / answered=attempt-1$/);
    // The same branch went on from the question's commit: it is in the merged work's history.
    assert.equal(git(root, 'merge-base', '--is-ancestor', firstCommit, 'main'), '');
    assert.equal(read(join(root, 'src/task-001/port.txt')).trim(), '8080');
    assert.equal(merges(root).filter((m) => m.subject.startsWith('Merge [task-001]')).length, 1);
    assert.deepEqual(unreachableAgentCommits(root), []);
  });

  it('answered tasks go first in the next run', async () => {
    const root = harness({ tasks: [ASKS, OTHER], sessionConfig: { max_parallel_agents: 1 } });
    await asked(root);
    // A new task the pool would otherwise start first: higher priority.
    const added = await launchpad(root, ['add', 'Urgent', '--priority', 'P0', '--validate', 'test -f src/task-003/done.txt']);
    assert.equal(added.code, 0, show(added, root));
    assert.equal((await launchpad(root, ['answer', 'task-001', '8080'])).code, 0);
    const r = await run(root, AGENT);
    assert.equal(r.code, 0, show(r, root));
    const session2 = linesOf(root, 'DISPATCH').filter((l) => l.session === 2);
    assert.deepEqual(
      session2.map((l) => l.task),
      ['task-001', 'task-003'],
    );
  });

  it('answer: an unknown id, or a task not awaiting an answer → exit 2, nothing changed', async () => {
    const root = harness({ tasks: [ASKS, OTHER] });
    const before = read(join(root, 'harness-tasks.json'));
    const unknown = await launchpad(root, ['answer', 'task-009', '8080']);
    assert.equal(unknown.code, 2, show(unknown));
    assert.match(unknown.stderr, /no task "task-009" in harness-tasks.json/);
    const pending = await launchpad(root, ['answer', 'task-001', '8080']);
    assert.equal(pending.code, 2, show(pending));
    assert.match(pending.stderr, /task "task-001" is pending, not awaiting an answer/);
    assert.equal(read(join(root, 'harness-tasks.json')), before);
    assert.deepEqual(linesOf(root, 'RECOVERY'), []);
  });

  it('kill -9 of the run while a task awaits an answer: the question, the worktree and the commit survive, and answering works', async () => {
    const g = gates();
    const root = harness({ tasks: [ASKS, OTHER] });
    const agentLine = byTask({ 'task-001': agentCmd('asks-question.sh') }, agentCmd('gate.sh', agentCmd('writes-done.sh')));
    // task-002 has its own files but runs after task-001 asked: max_parallel_agents 1 would
    // hold it back, so it is gated instead, and the run is alive while task-001 waits.
    const started = startRun(root, agentLine, [], { GATE_DIR: g.dir });
    await waitForLog(root, /QUESTION \[task-001\]/);
    await waitFor('task-002 at its gate', () => g.waiting('task-002'));
    started.child.kill('SIGKILL');
    await started.done;

    const t = taskById(root, 'task-001');
    assert.deepEqual([t.status, t.question?.text, t.attempts], ['awaiting_answer', 'Which port?', 0]);
    const wt = join(defaultWorktreeRoot(root), 'task-001');
    assert.ok(existsSync(join(wt, 'src/task-001/part1.txt')));
    const commit = git(root, 'rev-parse', 'harness-task-001');

    // A run before the answer: the recovery of task-002 leaves task-001's worktree alone.
    g.open('task-002');
    const r1 = await run(root, agentLine, [], { GATE_DIR: g.dir });
    assert.equal(r1.code, 8, show(r1, root));
    assert.equal(git(root, 'rev-parse', 'harness-task-001'), commit);
    assert.ok(existsSync(join(wt, 'src/task-001/part1.txt')));
    assert.deepEqual(
      linesOf(root, 'RECOVERY', 'task-001').map((l) => l.message),
      [],
    );

    assert.equal((await launchpad(root, ['answer', 'task-001', '8080'])).code, 0);
    const r2 = await run(root, agentLine, [], { GATE_DIR: g.dir });
    assert.equal(r2.code, 0, show(r2, root));
    assert.equal(git(root, 'merge-base', '--is-ancestor', commit, 'main'), '');
    assert.deepEqual(
      readTasks(root).tasks.map((x) => x.status),
      ['completed', 'completed'],
    );
    assert.deepEqual(unreachableAgentCommits(root), []);
  });

  it('in place: the work stays on the branch uncharged, nothing else starts until the answer, then it goes on first', async () => {
    const root = harness({ tasks: [ASKS, OTHER] });
    const r = await run(root, AGENT, ['--in-place']);
    assert.equal(r.code, 8, show(r, root));
    const t = taskById(root, 'task-001');
    assert.deepEqual([t.status, t.attempts, t.question?.text], ['awaiting_answer', 0, 'Which port?']);
    assert.equal(taskById(root, 'task-002').status, 'pending', 'nothing else started on top of the question');
    // Its work, leftovers included, is committed where it was made, and kept under a ref of ours.
    assert.equal(git(root, 'status', '--porcelain', '--', 'src'), '');
    assert.ok(existsSync(join(root, 'src/task-001/draft.txt')));
    assert.match(linesOf(root, 'QUESTION', 'task-001')[0]!.message, /^"Which port\?" kept=refs\/launchpad\/attempts\/task-001\/1$/);

    // Without an answer a run starts nothing and says why.
    const again = await run(root, AGENT, ['--in-place']);
    assert.equal(again.code, 8, show(again, root));
    assert.equal(linesOf(root, 'Starting').length, 1, 'only the first run started something');

    assert.equal((await launchpad(root, ['answer', 'task-001', '8080'])).code, 0);
    const done = await run(root, AGENT, ['--in-place']);
    assert.equal(done.code, 0, show(done, root));
    assert.deepEqual(
      linesOf(root, 'Starting').map((l) => l.task),
      ['task-001', 'task-001', 'task-002'],
    );
    assert.deepEqual([taskById(root, 'task-001').status, taskById(root, 'task-001').attempts], ['completed', 1]);
    assert.equal(read(join(root, 'src/task-001/port.txt')).trim(), '8080');
    assert.equal(taskById(root, 'task-002').status, 'completed');
  });

  it("a QUESTION line in a validation's output is not a question: the agent's words are", async () => {
    const root = harness({
      tasks: [{ id: 'task-001', validate: 'echo "QUESTION: Which port?"; test -f src/task-001/done.txt' }],
    });
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 0, show(r, root));
    assert.equal(taskById(root, 'task-001').status, 'completed');
    assert.deepEqual(linesOf(root, 'QUESTION'), []);
  });
});
