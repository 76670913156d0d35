// Budgets and usage limits end to end: `launchpad run --agent claude` with a fake `claude` first
// on PATH printing Claude Code's stream-json (total_cost_usd, rate_limit_event), on real
// repositories. A budget or a limit is never a task's failure: nothing is charged to the tasks.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { harness, launchpad, linesOf, show, taskById, tempDir } from '../controller/support';
import { type FakeOptions, installFake } from './fakeAgents';
import * as T from './transcripts';

function setup(fake: FakeOptions, ids: string[], sessionConfig: Record<string, unknown> = {}) {
  const root = harness({ tasks: ids.map((id) => ({ id })), sessionConfig });
  return { root, ...fakeIn(root, fake) };
}

/** A fake `claude` for `root`'s runs: the environment that puts it first on PATH. */
function fakeIn(_root: string, fake: FakeOptions) {
  const bin = tempDir('launchpad-fake-bin-');
  const log = tempDir('launchpad-fake-log-');
  installFake(bin, 'claude', fake);
  return { env: { PATH: `${bin}:${process.env.PATH}`, FAKE_AGENT_LOG: log } };
}

/** Claude Code's usage limit with a reset 2 s after the fake prints it (an epoch second). */
const LIMIT_RESETTING_SOON = T.CLAUDE_USAGE_LIMIT.replace('"resetsAt":1767283200', '"resetsAt":__RESET_EPOCH__');
/** The same limit, lifting at a time far ahead. */
const LIMIT_IN_2100 = T.CLAUDE_USAGE_LIMIT.replace('"resetsAt":1767283200', '"resetsAt":4102444800');

describe('budgets and usage limits end to end (fake claude reporting total_cost_usd)', function () {
  this.timeout(120_000);

  it('budget_usd reached: no new agent starts, the running one finishes, exit 6 with a message, nothing charged to the tasks; status shows the cost', async () => {
    // Each attempt reports $0.0421; the first to end reaches the $0.04 budget. task-002's agent
    // finishes only once the log says the budget was reached, so it was running then.
    const ids = ['task-001', 'task-002', 'task-003'];
    const root = harness({ tasks: ids.map((id) => ({ id })), sessionConfig: { budget_usd: 0.04, max_parallel_agents: 2 } });
    const { env } = fakeIn(root, {
      output: T.CLAUDE_SUCCESS,
      waitFor: { task: 'task-002', file: join(root, 'harness-progress.txt'), text: 'budget_usd=0.04 reached' },
    });
    const r = await launchpad(root, ['run', '--agent', 'claude'], env);
    assert.equal(r.code, 6, show(r, root));
    assert.match(
      r.stdout,
      /stopped: session_config\.budget_usd \(\$0\.04\) reached, this run's agents reported \$0\.0842; no new agent was started and nothing was charged to the tasks/,
    );
    assert.equal(linesOf(root, 'WARN').filter((l) => l.message.includes('budget_usd=0.04 reached')).length, 1);
    for (const id of ['task-001', 'task-002']) {
      const t = taskById(root, id);
      assert.equal(t.status, 'completed', `${id}: ${show(r, root)}`);
      assert.deepEqual(t.cost, { usd: 0.0421, input_tokens: 26212, output_tokens: 340, attempts_reported: 1 });
    }
    const third = taskById(root, 'task-003');
    assert.equal(third.status, 'pending');
    assert.equal(third.attempts, 0);
    assert.deepEqual(third.error_log, []);
    assert.equal('cost' in third, false, 'an agent that reported nothing shows nothing');
    assert.match(linesOf(root, 'STATS').at(-1)!.message, / cost_usd=0\.0842$/);

    const status = await launchpad(root, ['status', '--json']);
    const report = JSON.parse(status.stdout) as { cost_usd: number; tasks: Array<{ id: string; cost: unknown }> };
    assert.equal(report.cost_usd, 0.0842);
    assert.deepEqual(report.tasks.find((t) => t.id === 'task-001')!.cost, {
      usd: 0.0421,
      input_tokens: 26212,
      output_tokens: 340,
      attempts_reported: 1,
    });
    assert.equal(report.tasks.find((t) => t.id === 'task-003')!.cost, null);
    const text = await launchpad(root, ['status']);
    assert.match(text.stdout, /\(attempts 2, \$0\.0842 reported\)/);
    assert.match(text.stdout, /cost reported: \$0\.0421 · 26212 in \/ 340 out tokens · 1 attempt/);
  });

  it('a usage limit without --wait-on-limit: exit 7 naming when it lifts, the attempt not charged, no task failed', async () => {
    const { root, env } = setup({ output: T.CLAUDE_SUCCESS, firstOutput: LIMIT_IN_2100 }, ['task-001', 'task-002'], {
      max_parallel_agents: 1,
    });
    const r = await launchpad(root, ['run', '--agent', 'claude'], env);
    assert.equal(r.code, 7, show(r, root));
    assert.match(
      r.stdout,
      /stopped: usage limit of claude .*nothing was charged; it lifts at 2100-01-01T00:00:00Z: run again then, or use run --wait-on-limit/,
    );
    assert.ok(
      linesOf(root, 'WARN', 'task-001').some((l) =>
        l.message.includes('usage limit of claude: paused until 2100-01-01T00:00:00Z; attempt not charged'),
      ),
      show(r, root),
    );
    for (const id of ['task-001', 'task-002']) {
      const t = taskById(root, id);
      assert.equal(t.status, 'pending', id);
      assert.equal(t.attempts, 0, id);
      assert.deepEqual(t.error_log, [], id);
    }
    assert.equal(linesOf(root, 'DISPATCH').length, 1, 'no agent started after the limit');
    assert.equal(linesOf(root, 'ERROR').length, 0);
  });

  it('a usage limit with --wait-on-limit: pauses until the reset time the tool printed, resumes, and completes; the limited attempt not charged', async () => {
    const { root, env } = setup({ output: T.CLAUDE_SUCCESS, firstOutput: LIMIT_RESETTING_SOON }, ['task-001']);
    const r = await launchpad(root, ['run', '--agent', 'claude', '--wait-on-limit'], env);
    assert.equal(r.code, 0, show(r, root));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'completed');
    assert.equal(t.attempts, 1, 'only the attempt that ran counts');
    assert.deepEqual(t.error_log, []);
    const warns = linesOf(root, 'WARN');
    const paused = warns.findIndex((l) => /usage limit of claude: paused until \S+Z; attempt not charged/.test(l.message));
    const resumed = warns.findIndex((l) => l.message.includes('resumed after usage limit of claude'));
    assert.ok(paused >= 0 && resumed > paused, show(r, root));
    assert.equal(linesOf(root, 'DISPATCH', 'task-001').length, 2);
  });

  it('an overload with no reset time and --wait-on-limit: backs off (LAUNCHPAD_LIMIT_BACKOFF_SECONDS) and resumes', async () => {
    const { root, env } = setup({ output: T.CLAUDE_SUCCESS, firstOutput: T.CLAUDE_OVERLOADED }, ['task-001']);
    const r = await launchpad(root, ['run', '--agent', 'claude', '--wait-on-limit'], { ...env, LAUNCHPAD_LIMIT_BACKOFF_SECONDS: '0.2' });
    assert.equal(r.code, 0, show(r, root));
    const t = taskById(root, 'task-001');
    assert.equal(t.attempts, 1);
    assert.deepEqual(t.error_log, []);
    assert.deepEqual(
      t.cost,
      { usd: 0.0433, input_tokens: 26222, output_tokens: 340, attempts_reported: 2 },
      "the overloaded attempt's reported cost is kept too",
    );
    assert.ok(
      linesOf(root, 'WARN').some((l) => /overload of claude: paused until \S+Z \(back-off\)/.test(l.message)),
      show(r, root),
    );
    assert.ok(linesOf(root, 'WARN').some((l) => l.message.includes('resumed after overload of claude')));
  });

  it('the same task overloaded 3 times in a row under --wait-on-limit: two waits uncharged, the third attempt charged', async () => {
    const root = harness({ tasks: [{ id: 'task-001', maxAttempts: 1 }] });
    const { env } = fakeIn(root, { output: T.CLAUDE_SUCCESS, firstOutput: T.CLAUDE_OVERLOADED, firstRuns: 3 });
    const r = await launchpad(root, ['run', '--agent', 'claude', '--wait-on-limit'], { ...env, LAUNCHPAD_LIMIT_BACKOFF_SECONDS: '0.2' });
    assert.equal(r.code, 1, show(r, root));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed');
    assert.equal(t.attempts, 1, 'only the third overload is charged');
    assert.equal(t.error_log.length, 1);
    assert.match(t.error_log[0]!, /^\[AGENT_FAIL\] claude: API Error: 529 .*overloaded_error/);
    const warns = linesOf(root, 'WARN', 'task-001').map((l) => l.message);
    assert.equal(warns.filter((m) => /^overload of claude: paused until .*attempt not charged/.test(m)).length, 2, show(r, root));
    assert.ok(
      warns.some((m) => m.startsWith('overload of claude 3 times in a row for this task: this attempt is charged')),
      show(r, root),
    );
    assert.equal(linesOf(root, 'DISPATCH', 'task-001').length, 3);
  });

  it('max_cost_usd: a task whose agents reported that much is not dispatched again: [TASK_EXEC] cost limit reached, permanently', async () => {
    const { root, env } = setup(
      {
        output: T.CLAUDE_SUCCESS.replace('RESULT:SUCCESS"}]', 'RESULT:FAIL not yet"}]').replace(
          '"result":"Committed the change.\\nRESULT:SUCCESS"',
          '"result":"RESULT:FAIL not yet"',
        ),
      },
      ['task-001'],
      { max_cost_usd: 0.05 },
    );
    const r = await launchpad(root, ['run', '--agent', 'claude'], env);
    assert.equal(r.code, 1, show(r, root));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed');
    assert.equal(t.attempts, 2, 'two attempts of $0.0421 reach $0.05; the third is never started');
    assert.match(
      t.error_log.at(-1)!,
      /^\[TASK_EXEC\] cost limit reached: its agents reported \$0\.0842 over 2 attempt\(s\), session_config\.max_cost_usd is \$0\.05/,
    );
  });

  describe("in place (--in-place): a usage limit is not the task's failure either", () => {
    it('without --wait-on-limit: exit 7, the attempt in progress with its work left in the tree, not charged; the next run resumes it there and completes it', async () => {
      const { root, env } = setup({ output: T.CLAUDE_SUCCESS, firstOutput: LIMIT_IN_2100, firstWrites: true }, ['task-001', 'task-002']);
      const r = await launchpad(root, ['run', '--agent', 'claude', '--in-place'], env);
      assert.equal(r.code, 7, show(r, root));
      const t = taskById(root, 'task-001');
      assert.deepEqual([t.status, t.attempts, t.error_log], ['in_progress', 1, []], show(r, root));
      assert.ok(existsSync(join(root, 'src/task-001/partial.txt')), 'the work the agent left was rolled back');
      assert.ok(
        linesOf(root, 'WARN', 'task-001').some((l) => l.message.includes('attempt not charged; its work stays in the working tree')),
        show(r, root),
      );
      assert.equal(linesOf(root, 'ROLLBACK').length + linesOf(root, 'ERROR').length, 0, show(r, root));
      assert.equal(taskById(root, 'task-002').status, 'pending', 'another task ran on top of the paused one');

      const again = await launchpad(root, ['run', '--agent', 'claude', '--in-place'], env);
      assert.equal(again.code, 0, show(again, root));
      const done = taskById(root, 'task-001');
      assert.deepEqual([done.status, done.attempts, done.error_log], ['completed', 1, []]);
      assert.ok(existsSync(join(root, 'src/task-001/partial.txt')), 'the resumed attempt kept what the first agent began');
    });

    it('with --wait-on-limit: waits until the reset, resumes the paused attempt in the tree before any other task, and completes both', async () => {
      const { root, env } = setup({ output: T.CLAUDE_SUCCESS, firstOutput: LIMIT_RESETTING_SOON, firstWrites: true }, [
        'task-001',
        'task-002',
      ]);
      const r = await launchpad(root, ['run', '--agent', 'claude', '--in-place', '--wait-on-limit'], env);
      assert.equal(r.code, 0, show(r, root));
      for (const id of ['task-001', 'task-002']) {
        const t = taskById(root, id);
        assert.deepEqual([t.status, t.attempts, t.error_log], ['completed', 1, []], id);
      }
      // task-001's agent ran twice (the limited run, then its resumption) before task-002's first.
      const starts = linesOf(root, 'RECOVERY')
        .concat(linesOf(root, 'Starting'))
        .map((l) => l.raw)
        .sort();
      assert.match(starts.map((l) => l.replace(/^\[[^\]]*\] /, '')).join('\n'), /task-001[\s\S]*task-001[\s\S]*task-002/);
      assert.ok(existsSync(join(root, 'src/task-001/partial.txt')));
    });

    it('with --wait-on-limit and nothing left in the tree: the attempt is given back whole and runs again after the reset', async () => {
      const { root, env } = setup({ output: T.CLAUDE_SUCCESS, firstOutput: LIMIT_RESETTING_SOON }, ['task-001']);
      const r = await launchpad(root, ['run', '--agent', 'claude', '--in-place', '--wait-on-limit'], env);
      assert.equal(r.code, 0, show(r, root));
      const t = taskById(root, 'task-001');
      assert.deepEqual([t.status, t.attempts, t.error_log], ['completed', 1, []]);
      assert.equal(linesOf(root, 'Starting', 'task-001').length, 2, show(r, root));
    });
  });
});
