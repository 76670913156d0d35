// What agents report they spent, on the task and in STATS; the per-task cost limit; the run's
// budget and a usage limit's pause (budget.ts's RunSpending, on a clock the test sets).
import assert from 'node:assert/strict';

import { failOverCost, OVERLOADS_UNCHARGED, RunSpending } from '../../../../src/core/controller/budget';
import { LIMIT_BACKOFF_CAP_MS } from '../../../../src/core/controller/runConfig';
import { parseTaskFile } from '../../../../src/core/taskFile/parse';
import { isPermanentlyFailed } from '../../../../src/core/tasks/dag';
import { computeStats, formatStats } from '../../../../src/core/tasks/stats';
import { recordCost, retryTask } from '../../../../src/core/tasks/transitions';
import { task, taskFile } from '../fixtures';

describe('core/tasks cost: recordCost, STATS cost_usd, max_cost_usd', () => {
  it('recordCost sums dollars and tokens over the attempts that reported them', () => {
    const file = taskFile([task('a')]);
    assert.equal(recordCost(file, 'a', { costUsd: 0.1, tokens: { input: 100, output: 20, cacheRead: 5000 } }), true);
    assert.equal(recordCost(file, 'a', { costUsd: 0.2 }), true);
    assert.deepEqual(
      file.tasks[0]!.cost,
      { usd: 0.3, input_tokens: 100, output_tokens: 20, attempts_reported: 2 },
      'no binary-fraction noise (0.1 + 0.2)',
    );
  });

  it('a report with neither cost nor tokens records nothing: no cost field, never an estimate', () => {
    const file = taskFile([task('a')]);
    assert.equal(recordCost(file, 'a', {}), false);
    assert.equal(recordCost(file, 'a', { tokens: { cacheRead: 10 } }), false);
    assert.equal('cost' in file.tasks[0]!, false);
    assert.equal(formatStats(computeStats(file.tasks)).includes('cost_usd'), false);
  });

  it('tokens without dollars (codex, gemini) are recorded without a usd field', () => {
    const file = taskFile([task('a')]);
    recordCost(file, 'a', { tokens: { input: 7, output: 3 } });
    assert.deepEqual(file.tasks[0]!.cost, { input_tokens: 7, output_tokens: 3, attempts_reported: 1 });
    assert.equal(computeStats(file.tasks).cost_usd, undefined);
  });

  it('STATS appends cost_usd, the sum over the tasks, only when some task reported dollars', () => {
    const file = taskFile([
      task('a', { cost: { usd: 0.25, attempts_reported: 1 } }),
      task('b'),
      task('c', { cost: { usd: 1.5, attempts_reported: 2 } }),
    ]);
    const line = formatStats(computeStats(file.tasks), { batches_dispatched: 2 });
    assert.match(line, /batches_dispatched=2 cost_usd=1\.75$/);
  });

  it('the task file accepts cost and the budgets within their limits, and names the field otherwise', () => {
    const ok = parseTaskFile(
      JSON.stringify({
        session_config: { budget_usd: 5, max_cost_usd: 0.5 },
        tasks: [{ id: 'a', title: 'A', status: 'pending', cost: { usd: 0.1, attempts_reported: 1 } }],
      }),
    );
    assert.equal(ok.ok, true);
    for (const [field, value] of [
      ['budget_usd', 0],
      ['max_cost_usd', -1],
      ['budget_usd', 2_000_000],
      ['max_cost_usd', '5'],
    ] as const) {
      const r = parseTaskFile(JSON.stringify({ session_config: { [field]: value }, tasks: [] }));
      assert.equal(r.ok, false, `${field}=${value}`);
      if (!r.ok) assert.equal(r.error.field, `session_config.${field}`);
    }
  });

  it("failOverCost fails a pending or retryable task whose reported cost reached max_cost_usd, permanently; a person's retry alone does not run it again", () => {
    const file = taskFile([
      task('a', { cost: { usd: 0.5, attempts_reported: 2 } }),
      task('b', { status: 'failed', attempts: 1, error_log: ['[TEST_FAIL] x'], cost: { usd: 0.7, attempts_reported: 1 } }),
      task('c', { cost: { usd: 0.49, attempts_reported: 1 } }),
      task('d', { status: 'in_progress', attempts: 1, cost: { usd: 9, attempts_reported: 1 } }),
    ]);
    assert.deepEqual(failOverCost(file, undefined), []);
    const failed = failOverCost(file, 0.5);
    assert.deepEqual(
      failed.map((f) => f.taskId),
      ['a', 'b'],
    );
    const a = file.tasks[0]!;
    assert.equal(a.status, 'failed');
    assert.match(
      a.error_log.at(-1)!,
      /^\[TASK_EXEC\] cost limit reached: its agents reported \$0\.5 over 2 attempt\(s\), session_config\.max_cost_usd is \$0\.5/,
    );
    assert.equal(isPermanentlyFailed(a), true, 'attempts left, but never dispatched again');
    assert.equal(file.tasks[2]!.status, 'pending');
    assert.equal(file.tasks[3]!.status, 'in_progress', 'a running attempt finishes');
    assert.deepEqual(failOverCost(file, 0.5), [], 'each once');
    retryTask(file, 'a');
    assert.equal(failOverCost(file, 0.5)[0]?.taskId, 'a');
    assert.deepEqual(failOverCost(file, 1), [], 'a higher limit lets it run');
  });
});

describe('controller/budget RunSpending', () => {
  const at = (iso: string) => Date.parse(iso);

  it('the budget is reached once, by the report that makes the sum reach it', () => {
    const spend = new RunSpending({ budgetUsd: 1, limitBackoffMs: 60_000 });
    assert.equal(spend.addCost(0.6), false);
    assert.equal(spend.hold, undefined);
    assert.equal(spend.addCost(0.4), true);
    assert.equal(spend.hold, 'budget');
    assert.equal(spend.addCost(0.4), false);
    assert.equal(spend.costUsd, 1.4);
  });

  it('without budget_usd nothing holds', () => {
    const spend = new RunSpending({ budgetUsd: undefined, limitBackoffMs: 60_000 });
    spend.addCost(1e6);
    assert.equal(spend.hold, undefined);
  });

  it('a limit pauses until the reset time the tool printed; without one, backs off 1, 2, 4 … times the first, at most 30 min', () => {
    let now = at('2025-06-01T12:00:00Z');
    const spend = new RunSpending({ budgetUsd: undefined, limitBackoffMs: 60_000 }, () => now);
    const p = spend.limitHit('claude', { kind: 'usage-limit', message: 'x', resetsAt: '2025-06-01T15:00:00.000Z' });
    assert.equal(p.until, at('2025-06-01T15:00:00Z'));
    assert.equal(p.fromTool, true);
    assert.equal(spend.hold, 'usage-limit');
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      spend.pause = undefined;
      waits.push(spend.limitHit('claude', { kind: 'rate-limit', message: '429' }).until - now);
    }
    assert.deepEqual(
      waits,
      [2, 4, 8, 16, 30, 30, 30, 30].map((m) => Math.min(m * 60_000, LIMIT_BACKOFF_CAP_MS)),
    );
    spend.noLimit('task-001');
    spend.pause = undefined;
    now += 1000;
    const past = spend.limitHit('codex', { kind: 'usage-limit', message: 'x', resetsAt: '2025-06-01T11:00:00.000Z' });
    assert.equal(past.fromTool, false, 'a reset time already past is no wait: the back-off from the first');
    assert.equal(past.until - now, 60_000);
  });

  it('an overload is uncharged twice in a row per task, the third is charged; another end or another kind starts again', () => {
    const spend = new RunSpending({ budgetUsd: undefined, limitBackoffMs: 60_000 }, () => at('2025-06-01T12:00:00Z'));
    const overload = { kind: 'overloaded' as const, message: 'overloaded_error' };
    assert.equal(OVERLOADS_UNCHARGED, 2);
    assert.deepEqual(
      [1, 2, 3, 4].map(() => spend.chargesLimit('task-001', overload)),
      [false, false, true, false],
      'the third overload of a task in a row is charged, then the count starts again',
    );
    assert.equal(spend.chargesLimit('task-002', overload), false, "another task's overloads are its own");
    spend.noLimit('task-001');
    assert.deepEqual(
      [1, 2].map(() => spend.chargesLimit('task-001', overload)),
      [false, false],
      'an attempt without a limit starts the count again',
    );
    for (let i = 0; i < 5; i++)
      assert.equal(spend.chargesLimit('task-003', { kind: 'usage-limit', message: 'x' }), false, 'a usage limit is never charged');
  });

  it('a second task hitting the limit while paused keeps the later end and does not lengthen the back-off', () => {
    const now = at('2025-06-01T12:00:00Z');
    const spend = new RunSpending({ budgetUsd: undefined, limitBackoffMs: 60_000 }, () => now);
    spend.limitHit('claude', { kind: 'overloaded', message: '529' });
    const second = spend.limitHit('claude', { kind: 'overloaded', message: '529' });
    assert.equal(second.until - now, 60_000);
  });

  it('waitForResume ends the pause when it is over, or returns false on a stop', async () => {
    const spend = new RunSpending({ budgetUsd: undefined, limitBackoffMs: 10 });
    spend.limitHit('claude', { kind: 'rate-limit', message: '429' });
    assert.equal(await spend.waitForResume(new AbortController().signal), true);
    assert.equal(spend.hold, undefined);
    spend.limitHit('claude', { kind: 'usage-limit', message: 'x', resetsAt: new Date(Date.now() + 3_600_000).toISOString() });
    const stop = new AbortController();
    const waiting = spend.waitForResume(stop.signal);
    stop.abort();
    assert.equal(await waiting, false);
    assert.equal(spend.hold, 'usage-limit');
  });
});
