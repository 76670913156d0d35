// Concurrent mode: several `launchpad run` processes (workers) on one task DAG. Every task is
// completed exactly once, no task is claimed twice at once, and a killed worker's task is left
// alone until its lease lapses, then recovered by another worker.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  agentCmd,
  gates,
  git,
  harness,
  linesOf,
  readLog,
  show,
  shq,
  type Started,
  startRun,
  taskById,
  waitFor,
  waitForLog,
} from './support';

/** ~12 tasks: three chains of four, crossing once, each task in its own folder. */
function dagTasks(): Array<{ id: string; dependsOn?: string[] }> {
  const tasks: Array<{ id: string; dependsOn?: string[] }> = [];
  for (const chain of ['a', 'b', 'c']) {
    for (let i = 1; i <= 4; i++) tasks.push({ id: `${chain}${i}`, dependsOn: i > 1 ? [`${chain}${i - 1}`] : [] });
  }
  tasks.find((t) => t.id === 'c3')!.dependsOn!.push('a2');
  return tasks;
}

/** The checks every concurrent run must pass: one merge, one Completed and one DISPATCH per task. */
function assertEachOnce(root: string, ids: string[], opts: { dispatches: 'once' | 'at-least-once' }): void {
  const log = readLog(root);
  const merges = git(root, 'log', '--merges', '--format=%s').split('\n').filter(Boolean);
  for (const id of ids) {
    assert.equal(merges.filter((m) => m.startsWith(`Merge [${id}] `)).length, 1, `one merge commit of ${id}\n${merges.join('\n')}`);
    assert.equal(
      log.filter((l) => l.includes(` Completed [${id}] `) || l.endsWith(` Completed [${id}]`)).length,
      1,
      `one Completed line of ${id}`,
    );
    const dispatches = log.filter((l) => l.includes(` DISPATCH [${id}] `)).length;
    if (opts.dispatches === 'once') assert.equal(dispatches, 1, `one DISPATCH of ${id}`);
    assert.equal(taskById(root, id).status, 'completed');
  }
}

function workers(root: string, n: number, agent: string): Started[] {
  return Array.from({ length: n }, (_, i) => startRun(root, agent, [], { HARNESS_WORKER_ID: `w${i + 1}` }));
}

describe('controller: concurrent workers', function () {
  this.timeout(240_000);

  for (const n of [2, 4]) {
    it(`${n} workers on one DAG of 12 tasks: every task completed exactly once, by claims that never overlap`, async () => {
      const tasks = dagTasks();
      const root = harness({ tasks, sessionConfig: { concurrency_mode: 'concurrent', lease_seconds: 5, max_parallel_agents: 2 } });
      const runs = workers(root, n, agentCmd('writes-done.sh'));
      const results = await Promise.all(runs.map((r) => r.done));
      for (const r of results) assert.ok(r.code === 0 || r.code === 1, show(r, root));
      assert.ok(
        results.some((r) => r.code === 0),
        results.map((r) => show(r)).join('\n'),
      );
      assertEachOnce(
        root,
        tasks.map((t) => t.id),
        { dispatches: 'once' },
      );
      // Every worker logged as itself, with a session of its own.
      const log = readLog(root);
      const sessions = new Set(log.filter((l) => / LOCK concurrent worker=/.test(l)).map((l) => /\[SESSION-(\d+)\]/.exec(l)![1]));
      assert.equal(sessions.size, n);
      assert.equal(git(root, 'status', '--porcelain', '--untracked-files=no').trim(), '');
    });
  }

  it('a worker killed mid-attempt: its task is left alone until its lease lapses, then another worker recovers it', async () => {
    const g = gates();
    // w1's agent on task a hangs (and says so); everyone else's does the task.
    const agent = `if [ "$HARNESS_WORKER_ID" = w1 ] && [ "$LAUNCHPAD_TASK_ID" = a ]; then touch ${g.dir}/a.waiting; exec sleep 120; fi; ${agentCmd('writes-done.sh')}`;
    const root = harness({
      tasks: [{ id: 'a' }, { id: 'b', dependsOn: ['a'] }],
      sessionConfig: { concurrency_mode: 'concurrent', lease_seconds: 3 },
    });
    const w1 = startRun(root, agent, [], { HARNESS_WORKER_ID: 'w1' });
    await waitFor('w1 running task a', () => g.waiting('a'));
    w1.child.kill('SIGKILL');
    await w1.done;
    const claim = taskById(root, 'a');
    assert.equal(claim.claimed_by, 'w1');
    const w2 = await startRun(root, agent, [], { HARNESS_WORKER_ID: 'w2' }).done;
    assert.equal(w2.code, 0, show(w2, root));
    const log = readLog(root);
    const takeOver = log.find((l) => / RECOVERY \[a\] action="took over claim" worker=w2/.test(l));
    assert.ok(takeOver, log.join('\n'));
    // Taken over only once the lease had lapsed (its end as last renewed is in the line).
    const lapsedAt = /lapsed at (\S+)"/.exec(takeOver!)![1]!;
    const at = /^\[([^\]]+)\]/.exec(takeOver!)![1]!;
    assert.ok(Date.parse(at) >= Date.parse(lapsedAt), `${at} >= ${lapsedAt}`);
    // No DISPATCH of a by w2 before the take-over.
    const takeOverIndex = log.indexOf(takeOver!);
    assert.ok(!log.slice(0, takeOverIndex).some((l) => / DISPATCH \[a\] .*worker=w2/.test(l)), log.join('\n'));
    assertEachOnce(root, ['a', 'b'], { dispatches: 'at-least-once' });
  });

  it('a merge left unfinished by a worker killed inside it: the next merge aborts it (ROLLBACK) and charges no task', async () => {
    const root = harness({ tasks: [{ id: 'a' }, { id: 'b', dependsOn: ['a'] }], sessionConfig: { concurrency_mode: 'concurrent' } });
    git(root, 'checkout', '-q', '-b', 'ghost');
    git(root, 'commit', '-q', '--allow-empty', '-m', 'ghost work');
    git(root, 'checkout', '-q', 'main');
    // While task a's agent runs, a dead worker's merge appears in the main working tree: begun
    // under the merge lock, never committed (its lock since reclaimed).
    const gitDir = git(root, 'rev-parse', '--absolute-git-dir').trim();
    const agent = `if [ "$LAUNCHPAD_TASK_ID" = a ]; then git -C '${root}' merge -q --no-ff --no-commit ghost >/dev/null 2>&1; printf 'Merge [ghost] Task ghost\\n' > '${gitDir}/MERGE_MSG'; fi; ${agentCmd('writes-done.sh')}`;
    const r = await startRun(root, agent, [], { HARNESS_WORKER_ID: 'w1' }).done;
    assert.equal(r.code, 0, show(r, root));
    const log = readLog(root);
    assert.ok(
      log.some((l) => / ROLLBACK git merge --abort \(interrupted: Merge \[ghost\] Task ghost\)$/.test(l)),
      log.join('\n'),
    );
    assert.ok(!log.some((l) => / ERROR /.test(l)), log.join('\n'));
    for (const id of ['a', 'b']) assert.equal(taskById(root, id).attempts, 1, `${id} charged once`);
    assertEachOnce(root, ['a', 'b'], { dispatches: 'once' });
    assert.ok(!git(root, 'log', '--format=%s', 'main').includes('ghost work'), 'the dead merge was not committed');
  });
  it('a worker stopped past its lease (SIGSTOP), then continued: its late effects are refused and logged; the new holder finishes the same attempt', async () => {
    const g = gates();
    const go = `${g.dir}/go`;
    // w1 commits half the task, then hangs; w2 (resuming it) waits for the gate, then finishes.
    const agent = `if [ "$HARNESS_WORKER_ID" = w1 ]; then mkdir -p src/a && echo half > src/a/part1.txt && git add -A && git commit -qm 'part 1' && : > ${shq(g.dir)}/w1.half && exec sleep 120; fi; : > ${shq(g.dir)}/w2.waiting; while [ ! -e ${shq(go)} ]; do sleep 0.05; done; ${agentCmd('writes-done.sh')}`;
    const root = harness({ tasks: [{ id: 'a' }], sessionConfig: { concurrency_mode: 'concurrent', lease_seconds: 2 } });
    const w1 = startRun(root, agent, [], { HARNESS_WORKER_ID: 'w1' });
    await waitFor('w1 half-way', () => existsSync(join(g.dir, 'w1.half')));
    w1.child.kill('SIGSTOP');
    const w2 = startRun(root, agent, [], { HARNESS_WORKER_ID: 'w2' });
    try {
      await waitForLog(root, / RECOVERY \[a\] action="took over claim" worker=w2/);
      await waitFor('w2 resuming the attempt', () => existsSync(join(g.dir, 'w2.waiting')));
      const owner = taskById(root, 'a').agent_id;
      w1.child.kill('SIGCONT');
      // w1's agent was ended by the take-over; what w1 does about it now is refused.
      await waitForLog(root, / WARN \[a\] refused: the attempt of agent_\w+ on a is no longer the task's/);
      assert.equal(taskById(root, 'a').agent_id, owner, "w1 changed the task's record");
      assert.ok(
        existsSync(join(root, '..', `${root.split('/').pop()}.launchpad-worktrees`, 'a', 'src', 'a', 'part1.txt')),
        "w1 removed w2's worktree",
      );
    } finally {
      w1.child.kill('SIGCONT');
      writeFileSync(go, '');
    }
    const [r1, r2] = await Promise.all([w1.done, w2.done]);
    assert.equal(r2.code, 0, show(r2, root));
    assert.ok(r1.code === 0 || r1.code === 1, show(r1, root));
    const t = taskById(root, 'a');
    assert.deepEqual([t.status, t.attempts, t.error_log], ['completed', 1, []]);
    assert.equal(linesOf(root, 'ERROR').length, 0, readLog(root).join('\n'));
    assertEachOnce(root, ['a'], { dispatches: 'at-least-once' });
  });
});
