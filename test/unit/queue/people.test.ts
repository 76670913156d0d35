// Questions and reviews with the queue executor: they travel back from a worker like a result.
// A worker's agent that asks a question sends its work so far with it; the controller keeps it and
// the task awaits an answer, uncharged. After the answer (or a request for changes) the next job
// continues that work on a worker with the answer (or the comments) in its prompt. An approved
// change needs no worker: the controller validates and merges it.
import * as assert from 'node:assert/strict';

import { agentCmd, byTask, launchpad, show } from '../controller/support';
import type { CliResult } from '../helpers/cli';
import { startCli } from '../helpers/cli';
import { git } from '../helpers/gitRepo';
import { readLog, readTasks } from '../helpers/harness';
import { useQueueRig } from './queueRig';

/** What a run printed, for a failed assertion. */
const said = (r: CliResult) => `${r.stdout}\n${r.stderr}`;
const task = (root: string, id: string) => readTasks(root).tasks.find((t) => t.id === id)!;

describe('queue executor: questions and reviews', function () {
  this.timeout(120_000);
  const q = useQueueRig();

  function queueRun(root: string, agent: string, env: NodeJS.ProcessEnv) {
    const run = startCli(['run', '--agent', agent, '--executor', 'queue'], { cwd: root, env });
    q.rig.procs.push(run);
    return run.done;
  }

  it("a worker's question comes back with its work; after the answer a worker continues it, and it merges once", async () => {
    const tasks = [
      { id: 'task-001', validate: 'test -f src/task-001/part1.txt && test -f src/task-001/port.txt' },
      { id: 'task-002', validate: 'test -f src/task-002/done.txt' },
    ];
    const { root, env } = q.rig.setup(tasks, 2);
    q.rig.worker('w1', env);
    const agent = byTask({ 'task-001': agentCmd('asks-question.sh') }, agentCmd('writes-done.sh'));

    const first = await queueRun(root, agent, env);
    assert.equal(first.code, 8, said(first));
    const asked = task(root, 'task-001');
    assert.deepEqual([asked.status, asked.attempts, asked.question?.text], ['awaiting_answer', 0, 'Which port?']);
    assert.equal(task(root, 'task-002').status, 'completed');
    // The worker's commit and what it left uncommitted are here, kept.
    assert.match(git(root, 'log', '--format=%s', 'harness-task-001'), /\[task-001\] part 1/);
    assert.ok(git(root, 'show', '--name-only', '--format=', 'harness-task-001').includes('src/task-001/draft.txt'));
    assert.ok(readLog(root).some((l) => /AGENT_DONE \[task-001\] agent=\S+ result=question worker=w1/.test(l)));

    assert.equal((await launchpad(root, ['answer', 'task-001', '8080'])).code, 0);
    const second = await queueRun(root, agent, env);
    assert.equal(second.code, 0, said(second));
    assert.ok(readLog(root).some((l) => /DISPATCH \[task-001\] .*executor=queue job=\S+ answered=attempt-1$/.test(l)));
    assert.equal(git(root, 'show', 'main:src/task-001/port.txt').trim(), '8080');
    assert.deepEqual([task(root, 'task-001').status, task(root, 'task-001').attempts], ['completed', 1]);
    assert.equal(git(root, 'log', '--merges', '--format=%s', 'main').match(/^Merge \[task-001\]/gm)?.length, 1);
  });

  it('review "manual": a worker addresses the comments on the kept work; the approved change merges with no worker', async () => {
    const tasks = [{ id: 'task-001', validate: 'test -f src/task-001/a.txt && test -f src/task-001/b.txt', review: 'manual' }];
    const { root, env } = q.rig.setup(tasks, 1);
    const worker = q.rig.worker('w1', env);
    const agent = agentCmd('addresses-review.sh');

    assert.equal((await queueRun(root, agent, env)).code, 8);
    assert.equal(task(root, 'task-001').status, 'awaiting_review');
    const changes = await launchpad(root, [
      'request-changes',
      'task-001',
      '--comment',
      'src/task-001/a.txt:1 not alpha',
      '--comment',
      'src/task-001/b.txt:2 not two',
    ]);
    assert.equal(changes.code, 0, show(changes, root));

    const second = await queueRun(root, agent, env);
    assert.equal(second.code, 8, said(second));
    assert.ok(readLog(root).some((l) => /DISPATCH \[task-001\] .*executor=queue job=\S+ review=round-1$/.test(l)));
    const t = task(root, 'task-001');
    assert.deepEqual([t.status, t.attempts, t.review_round?.number], ['awaiting_review', 1, 2]);
    assert.equal(git(root, 'show', 'harness-task-001:src/task-001/b.txt'), 'one\ntwo\naddressed round 1');

    assert.equal((await launchpad(root, ['approve', 'task-001'])).code, 0);
    // No worker: the controller needs none for an approved change.
    worker.child.kill('SIGTERM');
    await worker.done;
    const third = await queueRun(root, agent, env);
    assert.equal(third.code, 0, said(third));
    assert.ok(readLog(root).some((l) => /DISPATCH \[task-001\] agent=\S+ worktree=harness-task-001 approved=round-2$/.test(l)));
    assert.equal(git(root, 'show', 'main:src/task-001/a.txt'), 'alpha\nbeta\ngamma\naddressed round 1');
    assert.equal(git(root, 'log', '--merges', '--format=%s', 'main').match(/^Merge \[task-001\]/gm)?.length, 1);
  });
});
