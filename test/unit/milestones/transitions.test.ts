// The milestone and overall state machines, row by row of their tables: each transition works from
// every status its row allows, writing the fields that go with it, and is refused from every other
// status with an error naming the milestone, its status and the transition, the entry unchanged.
// docs/milestones.md shows both tables as the code has them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import { type MilestoneState, newMilestoneState, overallSchema, type OverallState } from '../../../src/core/milestones/stateFile';
import * as transitions from '../../../src/core/milestones/transitions';
import {
  MILESTONE_STATUSES,
  MILESTONE_TRANSITIONS,
  type MilestoneStatus,
  type MilestoneTransition,
  MilestoneTransitionError,
  OVERALL_STATUSES,
  OVERALL_TRANSITIONS,
  type OverallStatus,
  type OverallTransition,
  type Transition,
} from '../../../src/core/milestones/transitions';

const NOW = '2025-07-02T09:00:00Z';
const EARLIER = '2025-07-01T10:00:00Z';

/** A milestone well into its life, so a transition's clearing of a field shows. */
function milestoneIn(status: MilestoneStatus): MilestoneState {
  return {
    ...newMilestoneState('M3'),
    status,
    attempts: 2,
    plan: 'plans/m3.md',
    review: 'reviews/m3-review.md',
    checkpoint: 'checkpoints/M3-checkpoint.md',
    started: EARLIER,
    since: EARLIER,
    awaiting: status === 'integrating' ? 'integration' : null,
    reason: 'the last failure',
    rejection: 'an old rejection',
    integrationFixes: 1,
    integrationAccepted: true,
  };
}

function runIn(status: OverallStatus): OverallState {
  return { ...overallSchema.parse({}), status, started: EARLIER, awaiting: 'e2e', reason: 'the gate failed' };
}

/** Each transition as called, and what it writes besides the status. */
const MILESTONE_CALLS: Record<MilestoneTransition, { call: (m: MilestoneState) => unknown; writes: Partial<MilestoneState> }> = {
  startPlanning: { call: (m) => transitions.startPlanning(m, NOW), writes: { started: EARLIER, since: NOW, plan: null } },
  awaitApproval: { call: (m) => transitions.awaitApproval(m, NOW), writes: { since: NOW } },
  approvePlan: { call: (m) => transitions.approvePlan(m, NOW), writes: { attempts: 3, since: NOW, rejection: null } },
  rejectPlan: { call: (m) => transitions.rejectPlan(m, 'too big', NOW), writes: { plan: null, rejection: 'too big', since: NOW } },
  startReview: { call: (m) => transitions.startReview(m, NOW), writes: { review: null, since: NOW } },
  requestChanges: { call: (m) => transitions.requestChanges(m, NOW), writes: { attempts: 3, since: NOW } },
  requestReplan: { call: (m) => transitions.requestReplan(m, NOW), writes: { plan: null, since: NOW } },
  startIntegrating: { call: (m) => transitions.startIntegrating(m, NOW), writes: { since: NOW } },
  complete: { call: (m) => transitions.complete(m, NOW), writes: { completed: NOW, since: null, awaiting: null } },
  fail: { call: (m) => transitions.fail(m, 'no plan'), writes: { reason: 'no plan', since: null } },
  retry: {
    call: (m) => transitions.retry(m, NOW),
    writes: { plan: null, rejection: 'the previous attempt failed: the last failure', reason: null, since: NOW, attempts: 2 },
  },
  skip: { call: (m) => transitions.skip(m), writes: { awaiting: null, since: null } },
  rollBack: {
    call: (m) => transitions.rollBack(m),
    writes: {
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
    },
  },
};

const OVERALL_CALLS: Record<OverallTransition, { call: (o: OverallState) => unknown; writes: Partial<OverallState> }> = {
  startRun: { call: (o) => transitions.startRun(o), writes: {} },
  pauseRun: { call: (o) => transitions.pauseRun(o), writes: {} },
  startCompleting: { call: (o) => transitions.startCompleting(o), writes: {} },
  completeRun: { call: (o) => transitions.completeRun(o, NOW), writes: { completed: NOW, reason: null } },
  acceptFinalGap: { call: (o) => transitions.acceptFinalGap(o, NOW), writes: { completed: NOW, awaiting: null, reason: null } },
  reopenRun: { call: (o) => transitions.reopenRun(o), writes: { awaiting: null } },
  abortRun: {
    call: (o) => transitions.abortRun(o, 'the direction changed'),
    writes: { awaiting: null, reason: 'aborted: the direction changed' },
  },
};

function refused(fn: () => unknown, re: RegExp): void {
  assert.throws(fn, (err) => err instanceof MilestoneTransitionError && re.test(err.message));
}

/** The table as docs/milestones.md shows it. */
function docTable(table: Record<string, Transition<string>>): string {
  const rows = Object.entries(table).map(([name, t]) => `| \`${name}\` | ${t.from.join(', ')} | ${t.to} | ${t.when} |`);
  return ['| transition | from | to | when |', '|---|---|---|---|', ...rows].join('\n');
}

describe('milestones: the state machines', () => {
  describe('a milestone', () => {
    for (const [name, row] of Object.entries(MILESTONE_TRANSITIONS) as [MilestoneTransition, Transition<MilestoneStatus>][]) {
      it(`${name}: ${row.from.join(', ')} → ${row.to}; refused from every other status`, () => {
        for (const from of row.from) {
          const m = milestoneIn(from);
          MILESTONE_CALLS[name].call(m);
          assert.equal(m.status, row.to, `${name} from ${from}`);
          for (const [field, value] of Object.entries(MILESTONE_CALLS[name].writes))
            assert.deepEqual(m[field as keyof MilestoneState], value, `${name} from ${from}: ${field}`);
        }
        for (const from of MILESTONE_STATUSES.filter((s) => !(row.from as readonly string[]).includes(s))) {
          const m = milestoneIn(from);
          const before = structuredClone(m);
          refused(() => MILESTONE_CALLS[name].call(m), new RegExp(`^M3 is "${from}": ${name} is only allowed from "${row.from[0]}"`));
          assert.deepEqual(m, before, `${name} from ${from} changed nothing`);
        }
      });
    }
  });

  describe('the long run', () => {
    for (const [name, row] of Object.entries(OVERALL_TRANSITIONS) as [OverallTransition, Transition<OverallStatus>][]) {
      it(`${name}: ${row.from.join(', ')} → ${row.to}; refused from every other status`, () => {
        for (const from of row.from) {
          const o = runIn(from);
          OVERALL_CALLS[name].call(o);
          assert.equal(o.status, row.to, `${name} from ${from}`);
          for (const [field, value] of Object.entries(OVERALL_CALLS[name].writes))
            assert.deepEqual(o[field as keyof OverallState], value, `${name} from ${from}: ${field}`);
        }
        for (const from of OVERALL_STATUSES.filter((s) => !(row.from as readonly string[]).includes(s))) {
          const o = runIn(from);
          const before = structuredClone(o);
          refused(
            () => OVERALL_CALLS[name].call(o),
            new RegExp(`^the long run is "${from}": ${name} is only allowed from "${row.from[0]}"`),
          );
          assert.deepEqual(o, before, `${name} from ${from} changed nothing`);
        }
      });
    }
  });

  it('every status is reached by some transition or is where a milestone or run starts, and each row has its function', () => {
    const reached = new Set<string>(['pending', ...Object.values(MILESTONE_TRANSITIONS).map((t) => t.to)]);
    assert.deepEqual(
      MILESTONE_STATUSES.filter((s) => !reached.has(s)),
      [],
    );
    const reachedRun = new Set<string>(['pending', ...Object.values(OVERALL_TRANSITIONS).map((t) => t.to)]);
    assert.deepEqual(
      OVERALL_STATUSES.filter((s) => !reachedRun.has(s)),
      [],
    );
    for (const name of [...Object.keys(MILESTONE_TRANSITIONS), ...Object.keys(OVERALL_TRANSITIONS)])
      assert.equal(typeof (transitions as unknown as Record<string, unknown>)[name], 'function', name);
  });

  it('docs/milestones.md shows both tables as the code has them, and every status', () => {
    const doc = readFileSync(resolve(__dirname, '../../../../docs/milestones.md'), 'utf8');
    assert.ok(
      doc.includes(docTable(MILESTONE_TRANSITIONS)),
      `docs/milestones.md lacks the milestone table:\n${docTable(MILESTONE_TRANSITIONS)}`,
    );
    assert.ok(doc.includes(docTable(OVERALL_TRANSITIONS)), `docs/milestones.md lacks the overall table:\n${docTable(OVERALL_TRANSITIONS)}`);
    for (const s of [...MILESTONE_STATUSES, ...OVERALL_STATUSES]) assert.ok(doc.includes(`\`${s}\``), s);
  });
});
