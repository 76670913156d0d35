// What a person is shown: the "Long Run Status" block, the recovery plan (what a run will do with
// each milestone, by its status), and the completion summary. Data first (for --json and the
// extension), text from the data.
import { existsSync, readFileSync } from 'node:fs';

import { liveLockHolder, type LockHolder } from '../lock';
import { readCheckpointContext } from './checkpointFile';
import type { LongRunContext } from './context';
import { describeGate, type Gate, openGates } from './gates';
import type { LongRun } from './longRun';
import { topologicalOrder } from './longRun';
import { compareMilestoneIds } from './milestoneFile';
import { parsePlan } from './planFile';
import { blockingDependencies, readyMilestones, scopeConflictOf, stateOf, unmetDependencies } from './schedule';
import { formatDuration } from './stateFile';
import type { MilestoneStatus } from './transitions';

export interface MilestoneRow {
  id: string;
  name: string;
  status: MilestoneStatus;
  attempts: number;
  depends_on: string[];
  plan: string | null;
  review: string | null;
  checkpoint: string | null;
  awaiting: string | null;
  reason: string | null;
  /** Dependencies that failed or were skipped (not overridden): it never starts on its own. */
  blocked_by: string[];
  /** What a run does with it now. */
  recovery: string;
  /** Plan tasks ticked / total, while it has a plan. */
  tasks_done: number | null;
  tasks_total: number | null;
}

export interface LongRunStatus {
  name: string;
  dir: string;
  overall: LongRun['state']['overall'];
  progress: { completed: number; total: number };
  current_phase: string;
  next_up: string[];
  milestones: MilestoneRow[];
  gates: Array<Gate & { text: string }>;
  /** The live `milestones run` (or decision) holding the harness lock, if any. */
  active_run: LockHolder | null;
  log_tail: string[];
}

const PHASE_WORD: Partial<Record<MilestoneStatus, string>> = {
  planning: 'planning',
  awaiting_approval: 'awaiting approval of',
  executing: 'executing',
  validating: 'reviewing',
  integrating: 'integrating',
};

export function buildStatus(run: LongRun): LongRunStatus {
  const order = topologicalOrder(run.milestones);
  const rows = order.map((id) => row(run, id));
  const active = rows.filter((r) => PHASE_WORD[r.status]);
  const ready = readyMilestones(run);
  const phase = active.length
    ? active.map((r) => `${PHASE_WORD[r.status]} ${r.id}`).join(', ')
    : run.state.overall.status === 'completing'
      ? 'final E2E gate'
      : ready.length
        ? `ready to start ${ready.join(', ')}`
        : run.state.overall.status;
  return {
    name: run.state.name,
    dir: run.paths.dir,
    overall: run.state.overall,
    progress: { completed: rows.filter((r) => r.status === 'completed').length, total: rows.length },
    current_phase: phase,
    next_up: ready,
    milestones: rows,
    gates: openGates(run).map((g) => ({ ...g, text: describeGate(g) })),
    active_run: liveLockHolder(run.paths.lock) ?? null,
    log_tail: run.state.log.slice(-8).map((e) => e.text),
  };
}

function row(run: LongRun, id: string): MilestoneRow {
  const s = stateOf(run, id);
  const def = run.milestones.get(id)!;
  let done: number | null = null;
  let total: number | null = null;
  if (s.plan && existsSync(run.paths.abs(s.plan)) && s.status !== 'planning') {
    try {
      const tasks = parsePlan(readFileSync(run.paths.abs(s.plan), 'utf8'), s.plan);
      total = tasks.length;
      done = tasks.filter((t) => t.done).length;
    } catch {
      // shown by the gate or the next run
    }
  }
  return {
    id,
    name: def.name,
    status: s.status,
    attempts: s.attempts,
    depends_on: def.dependencies,
    plan: s.plan,
    review: s.review,
    checkpoint: s.checkpoint,
    awaiting: s.awaiting,
    reason: s.reason,
    blocked_by: s.status === 'pending' ? blockingDependencies(run, id) : [],
    recovery: recoveryAction(run, id, done, total),
    tasks_done: done,
    tasks_total: total,
  };
}

/** The recovery table: what a run does with a milestone found in each status. Attempts is never reset. */
export function recoveryAction(run: LongRun, id: string, done: number | null = null, total: number | null = null): string {
  const s = stateOf(run, id);
  switch (s.status) {
    case 'pending': {
      const blocked = blockingDependencies(run, id);
      if (blocked.length) return `blocked by ${blocked.join(', ')} (failed or skipped); unblock it explicitly to start it`;
      const unmet = unmetDependencies(run, id);
      if (unmet.length) return `waits for ${unmet.join(', ')}`;
      const conflict = scopeConflictOf(run, id);
      return conflict ? `ready; waits for ${conflict} (same files in scope)` : 'start normally (plan-crafting)';
    }
    case 'planning':
      return s.awaiting === 'duration'
        ? 'waits for a decision: the duration guard stopped it'
        : 'restart plan-crafting (the plan file may be incomplete)';
    case 'awaiting_approval':
      return 'ask for approval of its plan';
    case 'executing': {
      if (s.awaiting === 'duration') return 'waits for a decision: the duration guard stopped it';
      const at =
        total !== null && done !== null
          ? done < total
            ? ` from the first unfinished task (${done} of ${total} done)`
            : ` (${done} of ${total} done)`
          : '';
      return `resume run-plan${at}; Attempts stays ${s.attempts}`;
    }
    case 'validating':
      return `restart review-work (the review may be incomplete); Attempts stays ${s.attempts}`;
    case 'integrating':
      return s.awaiting === 'integration'
        ? 'waits for a decision on the integration failure'
        : 'restart the integration check, then checkpoint and merge';
    case 'completed':
      return 'skip (already checkpointed)';
    case 'failed':
      return 'present the failure: retry or skip';
    case 'skipped':
      return 'skip (a person skipped it)';
  }
}

const MARK: Record<MilestoneStatus, string> = {
  pending: '·',
  planning: '…',
  awaiting_approval: '?',
  executing: '▶',
  validating: '▶',
  integrating: '▶',
  completed: '✓',
  failed: '✗',
  skipped: '⤼',
};

export function formatStatus(st: LongRunStatus, opts: { recovery?: boolean } = {}): string {
  const by = (pred: (r: MilestoneRow) => boolean) => st.milestones.filter(pred);
  const list = (rows: MilestoneRow[], show: (r: MilestoneRow) => string) => (rows.length ? rows.map(show).join(', ') : '(none)');
  const inProgress = by((r) => !!PHASE_WORD[r.status]);
  const lines = [
    `## Long Run Status: ${st.name}`,
    `**Progress:** ${st.progress.completed}/${st.progress.total} milestones completed (overall: ${st.overall.status})`,
    `**Current phase:** ${st.current_phase}`,
    ...(st.active_run ? [`**Active run:** ${st.active_run.command} (pid ${st.active_run.pid}, since ${st.active_run.acquired_at})`] : []),
    `**Next up:** ${st.next_up.length ? `${st.next_up.join(', ')}${st.next_up.length > 1 ? ' (parallel where their scopes do not overlap)' : ''}` : '(nothing ready)'}`,
    '',
    `Completed: ${list(
      by((r) => r.status === 'completed'),
      (r) => `${r.id} ✓`,
    )}`,
    `In progress: ${list(inProgress, (r) => `${r.id} (${r.status}${r.awaiting ? `, awaiting ${r.awaiting} decision` : ''}, attempt ${r.attempts})`)}`,
    `Pending: ${list(
      by((r) => r.status === 'pending'),
      (r) => (r.blocked_by.length ? `${r.id} (blocked by ${r.blocked_by.join(', ')})` : r.id),
    )}`,
  ];
  const failed = by((r) => r.status === 'failed');
  const skipped = by((r) => r.status === 'skipped');
  if (failed.length) lines.push(`Failed: ${list(failed, (r) => `${r.id} ✗ (${r.reason ?? 'no reason'})`)}`);
  if (skipped.length) lines.push(`Skipped: ${list(skipped, (r) => r.id)}`);
  lines.push('', '| Milestone | Status | Attempts | Depends on | Plan | Review | Checkpoint |', '|---|---|---|---|---|---|---|');
  for (const r of st.milestones) {
    const tasks = r.tasks_total !== null ? ` (${r.tasks_done}/${r.tasks_total} tasks)` : '';
    lines.push(
      `| ${MARK[r.status]} ${r.id}: ${r.name} | ${r.status}${tasks} | ${r.attempts} | ${r.depends_on.join(', ') || '—'} | ${r.plan ?? '—'} | ${r.review ?? '—'} | ${r.checkpoint ?? '—'} |`,
    );
  }
  if (st.gates.length) {
    lines.push('', 'Awaiting a person:');
    for (const g of st.gates) lines.push(`- ${g.text}`);
  }
  if (opts.recovery) {
    lines.push('', 'Recovery plan:');
    for (const r of [...st.milestones].sort((a, b) => compareMilestoneIds(a.id, b.id)))
      lines.push(`- ${r.id} (${r.status}): ${r.recovery}`);
  }
  return lines.join('\n') + '\n';
}

/** The completion summary table (also written to the harness directory as summary.md). */
export async function completionSummary(ctx: LongRunContext, run: LongRun, checks: string[]): Promise<string> {
  const rows = [...run.state.milestones].sort((a, b) => compareMilestoneIds(a.id, b.id));
  const day = (s: string | null) => (s ? s.slice(0, 10) : '—');
  const files = new Set<string>();
  for (const m of rows) {
    if (m.status !== 'completed' || !m.checkpoint || !existsSync(run.paths.abs(m.checkpoint))) continue;
    for (const f of readCheckpointContext(readFileSync(run.paths.abs(m.checkpoint), 'utf8'), m.checkpoint).filesChanged) files.add(f);
  }
  const started =
    rows
      .map((m) => m.started)
      .filter((s): s is string => !!s)
      .sort()[0] ?? run.state.overall.started;
  return [
    `# Long Run Complete: ${run.state.name}`,
    '',
    `**Started:** ${day(started)}`,
    `**Completed:** ${day(run.state.overall.completed)}`,
    `**Total milestones:** ${rows.length}`,
    `**Total attempts:** ${rows.reduce((n, m) => n + m.attempts, 0)}`,
    '',
    '## Milestone Summary',
    '| Milestone | Status | Attempts | Duration |',
    '|-----------|--------|----------|----------|',
    ...rows.map((m) => {
      const duration = m.started && m.completed ? formatDuration((Date.parse(m.completed) - Date.parse(m.started)) / 1000) : '—';
      return `| ${m.id}: ${run.milestones.get(m.id)?.name ?? m.id} | ${MARK[m.status]} ${m.status} | ${m.attempts} | ${duration} |`;
    }),
    '',
    '## Final Test Suite',
    `PASS — on ${ctx.baseBranch}:`,
    ...checks.map((c) => `- ${c}`),
    '',
    '## Files Changed (Total)',
    ...(files.size ? [...files].sort().map((f) => `- ${f}`) : ['- (none)']),
    '',
    'Next: a final code quality pass over the changed files is a good idea.',
    '',
  ].join('\n');
}
