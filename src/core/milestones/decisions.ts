// A person's decisions, each one checked against the state it answers and written to state.md
// with a log line before anything acts on it. Shared by the CLI's commands, a run that asks on a
// terminal, and the extension's actions. Completed milestones are never changed by any of them.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Git } from '../git/git';
import { InputError } from '../inputError';
import { logTimestamp } from '../log/logLine';
import { logEntry, type LongRun, type LongRunStore } from './longRun';
import { formatMilestone, type Milestone, milestoneNumber, parseMilestone } from './milestoneFile';
import { discardMilestoneWork } from './milestoneGit';
import { slugify } from './names';
import type { HarnessPaths } from './paths';
import { ACTIVE_STATUSES, dependentsOf, stateOf } from './schedule';
import { type MilestoneState, newMilestoneState } from './stateFile';
import * as transitions from './transitions';

export interface DecisionResult {
  message: string;
  /** Milestones whose worktrees are to be removed now (their work was set aside). */
  discard: string[];
  /** Keep their branches (a skipped milestone's work may still be of use to a person). */
  keepBranch: boolean;
}

const done = (message: string, discard: string[] = [], keepBranch = true): DecisionResult => ({ message, discard, keepBranch });

/** The git side of a decision: the worktrees (and branches) of the milestones it set aside. */
export async function cleanUp(paths: HarnessPaths, git: Git, result: DecisionResult): Promise<void> {
  for (const id of result.discard) await discardMilestoneWork(paths, git, id, { keepBranch: result.keepBranch });
}

function milestone(run: LongRun, id: string): MilestoneState {
  if (!run.milestones.has(id)) throw new InputError(`no milestone ${id} in ${run.paths.rel(run.paths.milestonesDir)}/`);
  return stateOf(run, id);
}

/**
 * approve: a plan awaiting approval starts executing (Attempts + 1); an integration decision is
 * "accept and continue"; a duration decision is "continue" (the clock restarts). `final` answers
 * the final end-to-end gate: accept the gap and complete the run.
 */
export function approve(store: LongRunStore, run: LongRun, id: string, reason?: string): DecisionResult {
  if (id === 'final') {
    if (run.state.overall.awaiting !== 'e2e') throw new InputError('the run is not waiting at the final end-to-end gate');
    store.update((s) => {
      const gap = s.overall.reason ?? '';
      transitions.acceptFinalGap(s.overall);
      s.log.push(logEntry(`final end-to-end gate failure accepted by a person${reason ? `: ${reason}` : ''} (${gap}); run completed`));
    });
    return done('the final gate failure was accepted; the long run is completed');
  }
  const m = milestone(run, id);
  if (transitions.allows('approvePlan', m.status)) {
    const attempt = m.attempts + 1;
    store.updateMilestone(
      id,
      (x) => void transitions.approvePlan(x),
      `plan approved${reason ? ` (${reason})` : ''}: executing ${m.plan} (attempt ${attempt})`,
    );
    return done(`${id}: plan approved; it runs as attempt ${attempt}`);
  }
  if (m.awaiting === 'integration') {
    store.updateMilestone(
      id,
      (x) => {
        x.awaiting = null;
        x.integrationAccepted = true;
      },
      `integration gap accepted by a person, continuing${reason ? `: ${reason}` : ''} (${m.reason ?? ''})`,
    );
    return done(`${id}: the integration gap is accepted; the next run checkpoints and merges it`);
  }
  if (m.awaiting === 'duration') {
    store.updateMilestone(
      id,
      (x) => {
        x.awaiting = null;
        x.reason = null;
        x.since = logTimestamp();
      },
      `duration guard: continuing by a person's decision`,
    );
    return done(`${id}: continuing; its time share starts again now`);
  }
  if (m.status === 'failed')
    throw new InputError(`${id} failed (${m.reason ?? 'no reason recorded'}): retry it ("launchpad milestones retry ${id}") or skip it`);
  throw new InputError(`${id} is "${m.status}" and awaits no approval`);
}

/** A plan rejected with a reason: the milestone is planned again, with the reason as a constraint. */
export function reject(store: LongRunStore, run: LongRun, id: string, reason: string): DecisionResult {
  const m = milestone(run, id);
  if (!reason.trim()) throw new InputError('a rejection needs a reason (--reason TEXT): the next plan is made with it');
  if (!transitions.allows('rejectPlan', m.status))
    throw new InputError(`${id} is "${m.status}": only a plan awaiting approval can be rejected`);
  store.updateMilestone(id, (x) => transitions.rejectPlan(x, reason), `plan ${m.plan} rejected: ${reason}; planning again`);
  return done(`${id}: plan rejected; the next run plans it again with your reason`);
}

/** A failed milestone gets another plan-run-review cycle; Attempts is kept, never reset. */
export function retry(store: LongRunStore, run: LongRun, id: string): DecisionResult {
  const m = milestone(run, id);
  if (m.status === 'skipped') {
    throw new InputError(
      `${id} was skipped and cannot be un-skipped; to attempt it again, add a new milestone with the same goal ("launchpad milestones correct add")`,
    );
  }
  if (!transitions.allows('retry', m.status)) throw new InputError(`${id} is "${m.status}": only a failed milestone can be retried`);
  store.updateMilestone(
    id,
    (x) => transitions.retry(x),
    `retry requested by a person after: ${m.reason ?? 'failure'}; planning again (Attempts stays ${m.attempts})`,
  );
  return done(`${id}: planning again; Attempts stays ${m.attempts}`);
}

/** Skipped for good; its dependents stay blocked unless a person unblocks them. */
export function skip(store: LongRunStore, run: LongRun, id: string, reason: string): DecisionResult {
  const m = milestone(run, id);
  if (!reason.trim()) throw new InputError('a skip needs a reason (--reason TEXT); it goes into the execution log');
  if (m.status === 'completed') throw new InputError(`${id} is completed: completed milestones are never changed`);
  if (m.status === 'skipped') throw new InputError(`${id} is already skipped`);
  const blocked = dependentsOf(run, id);
  store.updateMilestone(id, (x) => transitions.skip(x), `skipped: ${reason}${blocked.length ? ` (blocks ${blocked.join(', ')})` : ''}`);
  return done(
    `${id}: skipped${blocked.length ? `; ${blocked.join(', ')} stay blocked until unblocked ("launchpad milestones unblock ${blocked[0]} --despite ${id}")` : ''}`,
    m.status === 'pending' ? [] : [id],
  );
}

/** A person lets `id` start although its dependency `despite` was skipped or failed. */
export function unblock(store: LongRunStore, run: LongRun, id: string, despite: string): DecisionResult {
  const m = milestone(run, id);
  const d = milestone(run, despite);
  if (!run.milestones.get(id)!.dependencies.includes(despite)) throw new InputError(`${despite} is not a dependency of ${id}`);
  if (d.status !== 'skipped' && d.status !== 'failed')
    throw new InputError(`${despite} is "${d.status}": only a skipped or failed dependency can be overridden`);
  if (m.status !== 'pending') throw new InputError(`${id} is "${m.status}": only a milestone that has not started can be unblocked`);
  if (m.unblockedDespite.includes(despite)) throw new InputError(`${id} is already unblocked despite ${despite}`);
  store.updateMilestone(
    id,
    (x) => void x.unblockedDespite.push(despite),
    `override by a person: proceed with ${id} despite ${despite} being ${d.status}`,
  );
  return done(`${id}: may start despite ${despite}; its planner is told what ${despite} was to provide`);
}

/** The run stops for good (overall status failed). */
export function abortRun(store: LongRunStore, run: LongRun, reason: string): DecisionResult {
  if (!transitions.allowsRun('abortRun', run.state.overall.status)) throw new InputError('the long run is already completed');
  store.update((s) => {
    transitions.abortRun(s.overall, reason || 'by a person');
    s.log.push(logEntry(`aborted by a person: ${reason || 'no reason given'}`));
  });
  return done('the long run is aborted (overall status failed)');
}

/**
 * Re-plan from a checkpoint: every milestone after `id` (depending on it, directly or not) that is
 * not completed or skipped goes back to pending with Attempts 0, its plan and work set aside.
 * Completed milestones, `id` included, are never changed.
 */
export function rollback(store: LongRunStore, run: LongRun, id: string): DecisionResult {
  const m = milestone(run, id);
  if (m.status !== 'completed' || !m.checkpoint)
    throw new InputError(`${id} is "${m.status}": roll back to a completed milestone's checkpoint`);
  const reset = dependentsOf(run, id).filter((x) => transitions.allows('rollBack', stateOf(run, x).status));
  if (!reset.length) throw new InputError(`no milestone after ${id} is in progress or pending: nothing to re-plan`);
  store.update((s) => {
    for (const x of s.milestones.filter((y) => reset.includes(y.id))) transitions.rollBack(x);
    s.log.push(
      logEntry(`rolled back to the checkpoint of ${id} (${m.checkpoint}) by a person: ${reset.join(', ')} back to pending with Attempts 0`),
    );
  });
  const discard = reset.filter((x) => ACTIVE_STATUSES.has(stateOf(run, x).status) || stateOf(run, x).status === 'failed');
  return done(`rolled back to ${id}'s checkpoint: ${reset.join(', ')} will be planned again`, discard, false);
}

export interface CorrectiveInput {
  name: string;
  goal: string;
  scope: string[];
  criteria: string[];
  dependencies: string[];
  /** Milestones that must now wait for the corrective one (they must not have started). */
  blocks: string[];
  reason: string;
}

/**
 * A corrective milestone inserted into the DAG: a new milestone file (the next free number), added
 * to state.md as pending; the milestones it blocks get it as a dependency in their files.
 */
export function addCorrective(store: LongRunStore, run: LongRun, input: CorrectiveInput): DecisionResult & { id: string } {
  for (const d of [...input.dependencies, ...input.blocks]) milestone(run, d);
  for (const b of input.blocks) {
    const s = stateOf(run, b).status;
    if (s !== 'pending')
      throw new InputError(`${b} is "${s}": a corrective milestone can only be put before milestones that have not started`);
  }
  const id = `M${Math.max(0, ...[...run.milestones.keys()].map(milestoneNumber)) + 1}`;
  const def: Omit<Milestone, 'file'> = {
    id,
    name: input.name,
    goal: input.goal,
    scope: input.scope,
    criteria: input.criteria,
    dependencies: input.dependencies,
    interfaces: [],
  };
  const file = join(run.paths.milestonesDir, `${id}-${slugify(input.name)}.md`);
  const text = formatMilestone(def);
  // Checked as the loader will read it, before anything is written.
  parseMilestone(text, run.paths.rel(file));
  for (const b of input.blocks)
    if (wouldCycle(run, b, input.dependencies)) throw new InputError(`${id} cannot both depend on and block ${b}: that is a cycle`);

  mkdirSync(run.paths.milestonesDir, { recursive: true });
  writeFileSync(file, text, { flag: 'wx' });
  for (const b of input.blocks) addDependency(run, b, id);
  store.setName(id, input.name);
  store.update((s) => {
    s.milestones.push(newMilestoneState(id));
    // The answer to a failed final gate: the run goes on, and the gate runs again after it.
    if (s.overall.awaiting === 'e2e') transitions.reopenRun(s.overall);
    s.log.push(
      logEntry(
        `corrective milestone added by a person: ${input.reason || input.goal} (depends on ${input.dependencies.join(', ') || 'nothing'}${input.blocks.length ? `; ${input.blocks.join(', ')} now wait for it` : ''})`,
        id,
      ),
    );
  });
  return { ...done(`${id} (${input.name}) added as pending`), id };
}

/** `blocked` will depend on the new milestone, which depends on `newDeps`: a cycle if one of those depends on `blocked`. */
function wouldCycle(run: LongRun, blocked: string, newDeps: string[]): boolean {
  return newDeps.includes(blocked) || newDeps.some((d) => dependentsOf(run, blocked).includes(d));
}

/** Adds `dep` to the Dependencies of milestone `id`'s file (a milestone that has not started). */
function addDependency(run: LongRun, id: string, dep: string): void {
  const def = run.milestones.get(id)!;
  const path = join(run.paths.milestonesDir, def.file.split('/').pop()!);
  const source = existsSync(path)
    ? path
    : join(
        run.paths.milestonesDir,
        readdirSync(run.paths.milestonesDir).find((n) => n.startsWith(`${id}-`) || n === `${id}.md`)!,
      );
  const text = readFileSync(source, 'utf8');
  const lines = text.split('\n');
  const at = lines.findIndex((l) => /^##\s+Dependencies\s*$/i.test(l));
  let end = at + 1;
  while (end < lines.length && !/^#/.test(lines[end]!)) end++;
  const kept = lines.slice(at + 1, end).filter((l) => l.trim() && !/^[-*]\s+\(?none\)?\s*$/i.test(l.trim()));
  const body = [...kept, `- ${dep}`, ''];
  writeFileSync(source, [...lines.slice(0, at + 1), ...body, ...lines.slice(end)].join('\n'));
  parseMilestone(readFileSync(source, 'utf8'), def.file);
}

/** The answer a session gate got: pause or abort are written; continue changes nothing. */
export function pauseRun(store: LongRunStore): DecisionResult {
  store.update((s) => {
    transitions.pauseRun(s.overall);
    s.log.push(logEntry('paused by a person'));
  });
  return done('paused; run again to continue');
}
