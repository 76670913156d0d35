// The points where a long run waits for a person, and the answers a person can give. A gate is
// read from state.md alone (a milestone awaiting approval, failed, or with an Awaiting field; the
// run with an Awaiting field), so every front end shows the same gates: the CLI asks on a
// terminal, the extension shows a notification and actions, and a run nobody can ask stops.
import { readFileSync } from 'node:fs';

import type { LongRun } from './longRun';
import { compareMilestoneIds } from './milestoneFile';
import { filesOutsideScope, MAX_PLAN_TASKS, parsePlan } from './planFile';

export type Gate =
  | { kind: 'session'; text: string }
  | { kind: 'plan'; milestone: string; name: string; plan: string; tasks: number; warnings: string[] }
  | { kind: 'failed'; milestone: string; name: string; reason: string }
  | { kind: 'integration'; milestone: string; name: string; reason: string }
  | { kind: 'duration'; milestone: string; name: string; reason: string }
  | { kind: 'e2e'; reason: string };

export type Decision =
  | { kind: 'continue' }
  | { kind: 'pause' }
  | { kind: 'abort'; reason?: string }
  | { kind: 'approve'; reason?: string }
  | { kind: 'reject'; reason: string }
  | { kind: 'retry' }
  | { kind: 'skip'; reason: string }
  | { kind: 'rollback'; to: string };

export interface Gatekeeper {
  /** The person's answer, or undefined when nobody can answer now (the run then stops and says what it awaits). */
  decide(gate: Gate): Promise<Decision | undefined>;
}

/** A run nobody can ask: every gate stays open. */
export const unattended: Gatekeeper = { decide: async () => undefined };

/** Every gate waiting in this long run, milestones in order, then the run's own. */
export function openGates(run: LongRun): Gate[] {
  const gates: Gate[] = [];
  for (const m of [...run.state.milestones].sort((a, b) => compareMilestoneIds(a.id, b.id))) {
    const def = run.milestones.get(m.id);
    const name = def?.name ?? m.id;
    if (m.status === 'awaiting_approval' && m.plan) {
      gates.push(planGate(run, m.id));
    } else if (m.status === 'failed') {
      gates.push({ kind: 'failed', milestone: m.id, name, reason: m.reason ?? 'failed' });
    } else if (m.awaiting === 'integration') {
      gates.push({ kind: 'integration', milestone: m.id, name, reason: m.reason ?? 'the integration check failed' });
    } else if (m.awaiting === 'duration') {
      gates.push({ kind: 'duration', milestone: m.id, name, reason: m.reason ?? 'in progress for longer than its share' });
    }
  }
  if (run.state.overall.awaiting === 'e2e')
    gates.push({ kind: 'e2e', reason: run.state.overall.reason ?? 'the final end-to-end gate failed' });
  return gates;
}

export function planGate(run: LongRun, id: string): Extract<Gate, { kind: 'plan' }> {
  const m = run.state.milestones.find((x) => x.id === id)!;
  const def = run.milestones.get(id)!;
  const warnings: string[] = [];
  let tasks = 0;
  try {
    const planned = parsePlan(readFileSync(run.paths.abs(m.plan!), 'utf8'), m.plan!);
    tasks = planned.length;
    if (tasks > MAX_PLAN_TASKS) {
      warnings.push(
        `This milestone's plan has ${tasks} tasks (more than ${MAX_PLAN_TASKS}): it may be too large for a single milestone. Consider splitting it (reject with a reason, or skip it and add smaller milestones).`,
      );
    }
    const outside = filesOutsideScope(planned, def.scope);
    if (outside.length) warnings.push(`The plan touches files outside the milestone's scope: ${outside.join(', ')}`);
  } catch (err) {
    warnings.push(`The plan cannot be read: ${(err as Error).message}`);
  }
  return { kind: 'plan', milestone: id, name: def.name, plan: m.plan!, tasks, warnings };
}

/** Gates that wait for an approval (exit 4) rather than report a failure (exit 1). */
export function isApprovalGate(gate: Gate): boolean {
  return gate.kind !== 'failed' && gate.kind !== 'session';
}

/** One line: what is awaited and the commands that answer it. */
export function describeGate(gate: Gate): string {
  switch (gate.kind) {
    case 'session':
      return 'confirmation to continue';
    case 'plan':
      return `${gate.milestone} (${gate.name}): plan ${gate.plan} awaits approval (${gate.tasks} task${gate.tasks === 1 ? '' : 's'})${gate.warnings.length ? ` — ${gate.warnings.join(' ')}` : ''}; answer with "launchpad milestones approve ${gate.milestone}" or "launchpad milestones reject ${gate.milestone} --reason TEXT"`;
    case 'failed':
      return `${gate.milestone} (${gate.name}) failed: ${gate.reason}; "launchpad milestones retry ${gate.milestone}" or "launchpad milestones skip ${gate.milestone} --reason TEXT"`;
    case 'integration':
      return `${gate.milestone} (${gate.name}): integration decision awaited — ${gate.reason}; options: add a corrective milestone ("launchpad milestones correct add …"), roll back to a checkpoint ("launchpad milestones correct rollback Mx"), or accept and continue ("launchpad milestones approve ${gate.milestone}")`;
    case 'duration':
      return `${gate.milestone} (${gate.name}) ${gate.reason}; continue ("launchpad milestones approve ${gate.milestone}"), re-scope ("launchpad milestones correct …" or "skip"), or abort ("launchpad milestones abort")`;
    case 'e2e':
      return `the final end-to-end gate failed: ${gate.reason}; add a corrective milestone ("launchpad milestones correct add …"), accept ("launchpad milestones approve final"), or abort ("launchpad milestones abort")`;
  }
}
