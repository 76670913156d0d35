// Every change of a milestone's status and of the long run's overall status: the statuses, the
// transitions allowed between them (two tables, which docs/milestones.md and the tests read), and
// one function per transition that checks it is allowed and writes the status with the fields
// that go with it. They run inside LongRunStore.update or updateMilestone, so a refused one writes
// nothing. Nothing else assigns `status`; a person's decision checks its own preconditions first,
// with its own message, and an illegal transition reaching here is a caller's bug.
import { ExpectedError } from '../expectedErrors';
import { logTimestamp } from '../log/logLine';
import type { MilestoneState, OverallState } from './stateFile';

export const MILESTONE_STATUSES = [
  'pending',
  'planning',
  'awaiting_approval',
  'executing',
  'validating',
  'integrating',
  'completed',
  'failed',
  'skipped',
] as const;
export type MilestoneStatus = (typeof MILESTONE_STATUSES)[number];

export const OVERALL_STATUSES = ['pending', 'running', 'paused', 'completing', 'completed', 'failed'] as const;
export type OverallStatus = (typeof OVERALL_STATUSES)[number];

export interface Transition<S extends string> {
  from: readonly S[];
  to: S;
  /** What moves it, for the docs. */
  when: string;
}

/** Every status a milestone can still leave by a person's skip or rollback. */
const UNFINISHED = ['pending', 'planning', 'awaiting_approval', 'executing', 'validating', 'integrating', 'failed'] as const;

export const MILESTONE_TRANSITIONS = {
  startPlanning: { from: ['pending'], to: 'planning', when: 'the gate check passed' },
  awaitApproval: { from: ['planning'], to: 'awaiting_approval', when: 'the planner wrote a valid plan' },
  approvePlan: { from: ['awaiting_approval'], to: 'executing', when: 'a person approved the plan (Attempts + 1)' },
  rejectPlan: { from: ['awaiting_approval'], to: 'planning', when: 'a person rejected the plan with a reason' },
  startReview: { from: ['executing', 'integrating'], to: 'validating', when: 'run-plan completed every task, or an integration fix ended' },
  requestChanges: { from: ['validating'], to: 'executing', when: 'review FAIL on attempt 1: the same plan again (Attempts + 1)' },
  requestReplan: { from: ['validating'], to: 'planning', when: 'review FAIL on attempt 2: planned again with the findings' },
  startIntegrating: { from: ['validating'], to: 'integrating', when: 'review PASS' },
  complete: { from: ['integrating'], to: 'completed', when: 'checkpointed and merged into the base branch' },
  fail: {
    from: ['planning', 'executing', 'validating'],
    to: 'failed',
    when: 'no valid plan, a task failed after its attempts, or review FAIL on attempt 3 or later',
  },
  retry: { from: ['failed'], to: 'planning', when: 'a person retried it (Attempts kept)' },
  skip: { from: UNFINISHED, to: 'skipped', when: 'a person skipped it (for good)' },
  rollBack: { from: UNFINISHED, to: 'pending', when: 'a person rolled back to the checkpoint of a milestone it depends on (Attempts 0)' },
} as const satisfies Record<string, Transition<MilestoneStatus>>;
export type MilestoneTransition = keyof typeof MILESTONE_TRANSITIONS;

export const OVERALL_TRANSITIONS = {
  startRun: { from: ['pending', 'running', 'paused'], to: 'running', when: 'a run starts (running: the last one was interrupted)' },
  pauseRun: { from: ['pending', 'running', 'paused', 'completing'], to: 'paused', when: 'a person paused at a gate' },
  startCompleting: { from: ['running'], to: 'completing', when: 'every milestone is completed or skipped: the final gate' },
  completeRun: { from: ['completing'], to: 'completed', when: 'the final gate passed' },
  acceptFinalGap: {
    from: ['running', 'paused', 'completing'],
    to: 'completed',
    when: 'a person accepted the final gate failure ("approve final")',
  },
  reopenRun: { from: ['running', 'paused', 'completing'], to: 'running', when: 'a corrective milestone added after the final gate' },
  abortRun: { from: ['pending', 'running', 'paused', 'completing', 'failed'], to: 'failed', when: 'a person aborted it' },
} as const satisfies Record<string, Transition<OverallStatus>>;
export type OverallTransition = keyof typeof OVERALL_TRANSITIONS;

/** Whether the milestone transition `name` may leave `status`. */
export function allows(name: MilestoneTransition, status: MilestoneStatus): boolean {
  return (MILESTONE_TRANSITIONS[name].from as readonly string[]).includes(status);
}

/** Whether the overall transition `name` may leave `status`. */
export function allowsRun(name: OverallTransition, status: OverallStatus): boolean {
  return (OVERALL_TRANSITIONS[name].from as readonly string[]).includes(status);
}

/**
 * A transition its table does not allow from the current status: usually a state.md edited by
 * hand into a state the run cannot go on from, so it is the person's to fix (exit 2, no stack).
 */
export class MilestoneTransitionError extends ExpectedError {
  constructor(
    /** The milestone's id, or "the long run". */
    readonly subject: string,
    readonly status: string,
    readonly transition: string,
    allowedFrom: readonly string[],
  ) {
    super(`${subject} is "${status}": ${transition} is only allowed from ${allowedFrom.map((s) => `"${s}"`).join(', ')}`);
    this.name = 'MilestoneTransitionError';
  }
}

function move(m: MilestoneState, name: MilestoneTransition): void {
  const t = MILESTONE_TRANSITIONS[name];
  if (!allows(name, m.status)) throw new MilestoneTransitionError(m.id, m.status, name, t.from);
  m.status = t.to;
}

function moveRun(o: OverallState, name: OverallTransition): void {
  const t = OVERALL_TRANSITIONS[name];
  if (!allowsRun(name, o.status)) throw new MilestoneTransitionError('the long run', o.status, name, t.from);
  o.status = t.to;
}

export function startPlanning(m: MilestoneState, now = logTimestamp()): void {
  move(m, 'startPlanning');
  m.started ??= now;
  m.since = now;
  m.plan = null;
}

export function awaitApproval(m: MilestoneState, now = logTimestamp()): void {
  move(m, 'awaitApproval');
  m.since = now;
}

/** Returns the attempt it starts. */
export function approvePlan(m: MilestoneState, now = logTimestamp()): number {
  move(m, 'approvePlan');
  m.attempts += 1;
  m.since = now;
  m.rejection = null;
  return m.attempts;
}

/** The next plan is made with `reason`. */
export function rejectPlan(m: MilestoneState, reason: string, now = logTimestamp()): void {
  move(m, 'rejectPlan');
  m.plan = null;
  m.rejection = reason;
  m.since = now;
}

/** A new review file is chosen by review-work. */
export function startReview(m: MilestoneState, now = logTimestamp()): void {
  move(m, 'startReview');
  m.review = null;
  m.since = now;
}

/** The same plan runs again with the review's findings; returns the attempt it starts. */
export function requestChanges(m: MilestoneState, now = logTimestamp()): number {
  move(m, 'requestChanges');
  m.attempts += 1;
  m.since = now;
  return m.attempts;
}

/** Planned again with the review's findings as constraints (Attempts is counted at approval). */
export function requestReplan(m: MilestoneState, now = logTimestamp()): void {
  move(m, 'requestReplan');
  m.plan = null;
  m.since = now;
}

export function startIntegrating(m: MilestoneState, now = logTimestamp()): void {
  move(m, 'startIntegrating');
  m.since = now;
}

export function complete(m: MilestoneState, now = logTimestamp()): void {
  move(m, 'complete');
  m.completed = now;
  m.since = null;
  m.awaiting = null;
}

export function fail(m: MilestoneState, reason: string): void {
  move(m, 'fail');
  m.reason = reason;
  m.since = null;
}

/** Planned again; the failure becomes the next planner's constraint. Attempts is kept. */
export function retry(m: MilestoneState, now = logTimestamp()): void {
  const failure = m.reason;
  move(m, 'retry');
  m.plan = null;
  m.rejection = `the previous attempt failed: ${failure ?? 'no reason recorded'}`;
  m.reason = null;
  m.since = now;
}

export function skip(m: MilestoneState): void {
  move(m, 'skip');
  m.awaiting = null;
  m.since = null;
}

/** Back to pending as if never started: Attempts 0, plan, review and counters cleared. */
export function rollBack(m: MilestoneState): void {
  move(m, 'rollBack');
  Object.assign(m, {
    attempts: 0,
    plan: null,
    review: null,
    checkpoint: null,
    started: null,
    since: null,
    awaiting: null,
    reason: null,
    rejection: null,
    integrationFixes: 0,
    integrationAccepted: false,
  } satisfies Partial<MilestoneState>);
}

export function startRun(o: OverallState): void {
  moveRun(o, 'startRun');
}

export function pauseRun(o: OverallState): void {
  moveRun(o, 'pauseRun');
}

export function startCompleting(o: OverallState): void {
  moveRun(o, 'startCompleting');
}

export function completeRun(o: OverallState, now = logTimestamp()): void {
  moveRun(o, 'completeRun');
  o.completed = now;
  o.reason = null;
}

export function acceptFinalGap(o: OverallState, now = logTimestamp()): void {
  moveRun(o, 'acceptFinalGap');
  o.awaiting = null;
  o.completed = now;
  o.reason = null;
}

/** A corrective milestone answers the final gate: the run goes on, and the gate runs again after it. */
export function reopenRun(o: OverallState): void {
  moveRun(o, 'reopenRun');
  o.awaiting = null;
}

export function abortRun(o: OverallState, reason: string): void {
  moveRun(o, 'abortRun');
  o.awaiting = null;
  o.reason = `aborted: ${reason}`;
}
