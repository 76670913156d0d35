// Crash safety: `launchpad run` killed with SIGKILL at 50+ points of a parallel run of a 7-task
// DAG (dispatch, agents half-way through a change made in two commits or killed inside a commit,
// validation, merge, state writes), then run again until it exits 0. Every time: the task file
// parses, every task ends completed, each task is merged exactly once with its full work (nothing
// unfinished merged), no agent commit is unreachable, the log has the MERGE and Completed lines of
// every completed task, and the progress log before the kill is a byte prefix of the log after.
// See scenario.ts for how each kill is triggered and how its phase is derived.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';

import { CLI } from '../helpers/cli';
import { tempDir } from '../helpers/tmp';
import { type Phase, PHASES, runScenario, type ScenarioResult, type Trigger } from './scenario';

/** Scenarios run this many at a time (each is mostly agents sleeping; the machine is shared). */
const CONCURRENCY = Math.max(3, cpus().length);
/** Each of the five phases must be hit at least this often, or the spread is not what it claims. */
const MIN_PER_PHASE = 3;

type Make = (cleanRunMs: number) => Trigger;
const script =
  (point: string, task: string): Make =>
  () => ({ kind: 'script', point, task });
const log =
  (pattern: RegExp, nth = 1): Make =>
  () => ({ kind: 'log', pattern, nth });
const tmp =
  (nth: number): Make =>
  () => ({ kind: 'tmp', nth });
const fifo =
  (after: RegExp): Make =>
  () => ({ kind: 'fifo', after });
const delayAt =
  (fraction: number): Make =>
  (clean) => ({ kind: 'delay', ms: Math.round(clean * fraction) });

const ALL_SCENARIOS: Array<[string, Make]> = [
  // git's post-checkout hook kills it as `git worktree add` ends: claimed, worktree made, no agent.
  ...['task-001', 'task-003', 'task-004', 'task-006', 'task-007'].map((t): [string, Make] => [
    `dispatch-worktree:${t}`,
    script('dispatch-worktree', t),
  ]),
  // The agent kills the controller: before any work, with work on disk, committed, reported.
  ...['task-001', 'task-004', 'task-005', 'task-007'].map((t): [string, Make] => [`agent-start:${t}`, script('agent-start', t)]),
  ...['task-002', 'task-006'].map((t): [string, Make] => [`agent-written:${t}`, script('agent-written', t)]),
  // Half-way through a change made in two commits (the first alone passes the validation).
  ...['task-001', 'task-003', 'task-006', 'task-007'].map((t): [string, Make] => [`agent-committed:${t}`, script('agent-committed', t)]),
  // The agent's second `git commit` killed with the controller: index.lock left, the agent gone.
  ...['task-001', 'task-004', 'task-006'].map((t): [string, Make] => [`agent-midcommit:${t}`, script('agent-midcommit', t)]),
  ...['task-005', 'task-006'].map((t): [string, Make] => [`agent-reported:${t}`, script('agent-reported', t)]),
  // The validation command kills it as it starts and as it ends (its cache already written).
  ...['task-002', 'task-004', 'task-006'].map((t): [string, Make] => [`validate-start:${t}`, script('validate-start', t)]),
  ...['task-001', 'task-005', 'task-006', 'task-007'].map((t): [string, Make] => [`validate-end:${t}`, script('validate-end', t)]),
  // git's hooks kill it inside `git merge --no-ff` (result staged) and right after its commit.
  ...['task-001', 'task-003', 'task-006'].map((t): [string, Make] => [`merge-precommit:${t}`, script('merge-precommit', t)]),
  ...['task-002', 'task-004', 'task-007'].map((t): [string, Make] => [`merge-post:${t}`, script('merge-post', t)]),
  // The test kills it when a line reaches the progress log.
  ['session lock made', () => ({ kind: 'lock' })],
  ['log LOCK acquired', log(/\] LOCK acquired/)],
  ['log BATCH #1', log(/\] BATCH /, 1)],
  ['log BATCH #2', log(/\] BATCH /, 2)],
  ['log DISPATCH [task-002]', log(/\] DISPATCH \[task-002\]/)],
  ['log DISPATCH [task-006]', log(/\] DISPATCH \[task-006\]/)],
  ['log CHECKPOINT [task-004]', log(/\] CHECKPOINT \[task-004\]/)],
  ['log AGENT_DONE [task-003]', log(/\] AGENT_DONE \[task-003\]/)],
  ['log AGENT_DONE [task-006]', log(/\] AGENT_DONE \[task-006\]/)],
  ['log AGENT_DONE [task-007]', log(/\] AGENT_DONE \[task-007\]/)],
  ['log VALIDATE [task-001]', log(/\] VALIDATE \[task-001\]/)],
  ['log VALIDATE [task-005]', log(/\] VALIDATE \[task-005\]/)],
  ['log MERGE [task-004]', log(/\] MERGE \[task-004\]/)],
  // Not the last task's merge: after that, the run may end before the kill lands.
  ['log MERGE [task-005]', log(/\] MERGE \[task-005\]/)],
  // The test kills it as a state save creates harness-tasks.json.tmp (the n-th save of the run).
  ...[1, 3, 5, 8, 11].map((n): [string, Make] => [`.tmp created #${n}`, tmp(n)]),
  // A state save blocked opening .tmp (a FIFO), killed there, a torn file left in its place.
  ['fifo tmp after DISPATCH [task-001]', fifo(/\] DISPATCH \[task-001\]/)],
  ['fifo tmp after AGENT_DONE [task-004]', fifo(/\] AGENT_DONE \[task-004\]/)],
  ['fifo tmp after Completed [task-005]', fifo(/\] Completed \[task-005\]/)],
  ['fifo tmp after VALIDATE [task-007]', fifo(/\] VALIDATE \[task-007\]/)],
  ['fifo tmp after AGENT_DONE [task-002]', fifo(/\] AGENT_DONE \[task-002\]/)],
  ['fifo tmp after Completed [task-006]', fifo(/\] Completed \[task-006\]/)],
  // Fixed delays after the start, spread over a clean run's duration.
  ...[0.35, 0.45, 0.55, 0.7].map((f): [string, Make] => [`delay ${Math.round(f * 100)}% of a clean run`, delayAt(f)]),
];

/**
 * The same DAG with worktree_pool (2 × max_parallel) and included files: dispatches take
 * prepared slots, ended tasks' worktrees are prepared in the background. Besides every check
 * above, each validation compares its worktree with a new one (crash-validate.sh), and the pool
 * is left with idle, unclaimed slots only.
 */
const POOL_SCENARIOS: Array<[string, Make]> = [
  ['pool: no kill (control)', () => ({ kind: 'none' })],
  // A checkout inside a slot: its preparation after a task, or its hand-out to a moved base.
  ['pool: pool-checkout', script('pool-checkout', 'pool')],
  ['pool: log BATCH #2', log(/\] BATCH /, 2)],
  ['pool: log DISPATCH [task-004]', log(/\] DISPATCH \[task-004\]/)],
  ['pool: log Completed [task-001]', log(/\] Completed \[task-001\]/)],
  ['pool: agent-start:task-005', script('agent-start', 'task-005')],
  ['pool: validate-end:task-006', script('validate-end', 'task-006')],
  ['pool: merge-post:task-004', script('merge-post', 'task-004')],
  ['pool: .tmp created #5', tmp(5)],
  ...[0.45, 0.7].map((f): [string, Make] => [`pool: delay ${Math.round(f * 100)}% of a clean run`, delayAt(f)]),
];

/** CRASH_ONLY=<regex> runs only the matching scenarios (to look at one while fixing it). */
const only = process.env.CRASH_ONLY ? new RegExp(process.env.CRASH_ONLY) : undefined;
const SCENARIOS = [...ALL_SCENARIOS, ...POOL_SCENARIOS].filter(([name]) => !only || only.test(name));

describe('crash safety: SIGKILL of launchpad run at many points, then run again', function () {
  const results = new Map<string, ScenarioResult>();
  let baseline: ScenarioResult | undefined;
  let wallMs = 0;

  before(async function () {
    this.timeout(10 * 60_000);
    assert.ok(existsSync(CLI), `${CLI} missing: run node esbuild.mjs`);
    // Our own copy: another build rewriting dist/cli.js must not break a run half-way.
    const cli = join(tempDir('launchpad-crash-cli-'), 'cli.js');
    copyFileSync(CLI, cli);
    const t0 = Date.now();
    baseline = await runScenario('no kill (baseline)', { kind: 'none' }, cli);
    const clean = baseline.firstRunMs;
    const queue = [...SCENARIOS];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let next = queue.shift(); next; next = queue.shift()) {
          const [name, make] = next;
          results.set(name, await runScenario(name, make(clean), cli, { pool: name.startsWith('pool: ') }));
        }
      }),
    );
    wallMs = Date.now() - t0;
    report(
      baseline,
      SCENARIOS.map(([name]) => results.get(name)!),
      wallMs,
    );
  });

  it('a run without a kill completes every task, each merged once (the control)', () => {
    assert.ok(baseline);
    assert.deepEqual(baseline.problems, []);
  });

  it(`has at least 50 kill points`, () => {
    assert.ok(ALL_SCENARIOS.length >= 50, `${ALL_SCENARIOS.length} scenarios`);
  });

  for (const [name] of SCENARIOS) {
    it(`kill at ${name}: state parses, all completed, each task merged once and in full, no agent commit lost, log only appended and in agreement`, () => {
      const r = results.get(name);
      assert.ok(r, 'scenario did not run');
      assert.equal(r.problems.length, 0, `${name} (landed in ${r.phase ?? '?'}: ${r.evidence ?? ''}):\n${r.problems.join('\n')}`);
    });
  }

  it(`the kills are spread over dispatch, agent, validation, merge and state writes (≥ ${MIN_PER_PHASE} each)`, function () {
    if (only) this.skip();
    const counts = phaseCounts([...results.values()]);
    for (const phase of ['dispatch', 'agent', 'validation', 'merge', 'state-write'] as Phase[]) {
      assert.ok(counts[phase] >= MIN_PER_PHASE, `only ${counts[phase]} kills landed in ${phase}: ${JSON.stringify(counts)}`);
    }
  });
});

function phaseCounts(results: ScenarioResult[]): Record<Phase, number> {
  const counts = Object.fromEntries(PHASES.map((p) => [p, 0])) as Record<Phase, number>;
  for (const r of results) if (r.phase) counts[r.phase]++;
  return counts;
}

function report(baseline: ScenarioResult, results: ScenarioResult[], wallMs: number): void {
  const out: string[] = [];
  out.push(`\n  crash scenarios: ${results.length} kills + 1 clean run, ${CONCURRENCY} at a time, ${(wallMs / 1000).toFixed(1)} s wall`);
  out.push(`  clean run: ${baseline.firstRunMs} ms (delay kills are placed at fractions of it)`);
  const w = Math.max(...results.map((r) => r.name.length));
  for (const r of results) {
    const mark = r.problems.length ? 'FAIL' : 'ok  ';
    out.push(
      `  ${mark} ${r.name.padEnd(w)}  → ${(r.phase ?? '-').padEnd(11)} runs after: ${String(r.reruns.length)} [${r.reruns.join(',')}]  ` +
        `${(r.durationMs / 1000).toFixed(1)} s  ${r.evidence ?? ''}` +
        (r.trigger.kind === 'delay' ? ` (at ${r.trigger.ms} ms)` : ''),
    );
  }
  const counts = phaseCounts(results);
  out.push(`  kills per phase: ${PHASES.map((p) => `${p} ${counts[p]}`).join(', ')}`);
  const hist = new Map<number, number>();
  for (const r of results) hist.set(r.reruns.length, (hist.get(r.reruns.length) ?? 0) + 1);
  out.push(
    `  runs needed after the kill to exit 0: ${[...hist.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([n, c]) => `${n} run${n === 1 ? '' : 's'} × ${c}`)
      .join(', ')}; total ${results.reduce((s, r) => s + r.reruns.length, 0)} reruns`,
  );
  const waited = results.filter((r) => r.lockWaits);
  if (waited.length) {
    out.push(
      `  session lock left without a holder record (run refused, exit 3, retried 1 s later): ${waited.map((r) => `${r.name} ×${r.lockWaits}`).join(', ')}`,
    );
  }
  const failed = results.filter((r) => r.problems.length).length;
  out.push(`  ${results.length - failed} passed, ${failed} failed; trigger kinds: ${kinds(results)}\n`);
  console.log(out.join('\n'));
}

function kinds(results: ScenarioResult[]): string {
  const m = new Map<string, number>();
  for (const r of results) m.set(r.trigger.kind, (m.get(r.trigger.kind) ?? 0) + 1);
  return [...m.entries()].map(([k, n]) => `${k} ${n}`).join(', ');
}
