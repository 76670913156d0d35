// Which milestones may start: the gate check. Pure functions of a loaded long run.
import type { LongRun } from './longRun';
import { compareMilestoneIds } from './milestoneFile';
import { scopesOverlap } from './planFile';
import type { MilestoneState } from './stateFile';
import type { MilestoneStatus } from './transitions';

/** Started and not finished: these hold their scope. */
export const ACTIVE_STATUSES: ReadonlySet<MilestoneStatus> = new Set([
  'planning',
  'awaiting_approval',
  'executing',
  'validating',
  'integrating',
]);

export function stateOf(run: LongRun, id: string): MilestoneState {
  const m = run.state.milestones.find((x) => x.id === id);
  if (!m) throw new Error(`${id} is not in state.md`);
  return m;
}

/**
 * Dependencies that keep `id` from starting: those not completed, except a skipped or failed one
 * a person unblocked it despite.
 */
export function unmetDependencies(run: LongRun, id: string): string[] {
  const me = stateOf(run, id);
  return run.milestones.get(id)!.dependencies.filter((d) => {
    const s = stateOf(run, d).status;
    if (s === 'completed') return false;
    return !((s === 'skipped' || s === 'failed') && me.unblockedDespite.includes(d));
  });
}

/** Dependencies that failed or were skipped and were not overridden: `id` never starts on its own. */
export function blockingDependencies(run: LongRun, id: string): string[] {
  return unmetDependencies(run, id).filter((d) => {
    const s = stateOf(run, d).status;
    return s === 'failed' || s === 'skipped' || blockingDependencies(run, d).length > 0;
  });
}

/** Pending milestones whose dependencies are met, lowest number first. */
export function readyMilestones(run: LongRun): string[] {
  return run.state.milestones
    .filter((m) => m.status === 'pending' && unmetDependencies(run, m.id).length === 0)
    .map((m) => m.id)
    .sort(compareMilestoneIds);
}

/**
 * The ready milestones that may start now: none may share a file or folder of its scope with a
 * milestone in progress or with one picked before it, and no more than `maxParallel` may be in
 * progress at once.
 */
export function startableMilestones(run: LongRun, maxParallel: number): string[] {
  const active = run.state.milestones.filter((m) => ACTIVE_STATUSES.has(m.status)).map((m) => m.id);
  const picked: string[] = [];
  for (const id of readyMilestones(run)) {
    if (active.length + picked.length >= maxParallel) break;
    const scope = run.milestones.get(id)!.scope;
    const conflict = [...active, ...picked].some((other) => scopesOverlap(scope, run.milestones.get(other)!.scope));
    if (!conflict) picked.push(id);
  }
  return picked;
}

/** Why a ready milestone is not starting: the milestone in progress whose scope it shares. */
export function scopeConflictOf(run: LongRun, id: string): string | undefined {
  const scope = run.milestones.get(id)!.scope;
  return run.state.milestones.find(
    (m) => m.id !== id && ACTIVE_STATUSES.has(m.status) && scopesOverlap(scope, run.milestones.get(m.id)!.scope),
  )?.id;
}

/** Every milestone that depends on `id`, directly or not. */
export function dependentsOf(run: LongRun, id: string): string[] {
  const out = new Set<string>();
  const visit = (x: string) => {
    for (const m of run.milestones.values()) {
      if (m.dependencies.includes(x) && !out.has(m.id)) {
        out.add(m.id);
        visit(m.id);
      }
    }
  };
  visit(id);
  return [...out].sort(compareMilestoneIds);
}
