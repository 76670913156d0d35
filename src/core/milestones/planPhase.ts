// Plan-crafting: the milestone gets its worktree, the planner agent gets the Context Brief and
// writes the plan file, and the milestone then waits for a person's approval.
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { logTimestamp } from '../log/logLine';
import { describeFailure, runRoleAgent } from './agents';
import { formatDay } from './checkpointFile';
import { advanced, type LongRunContext, type PhaseEnd } from './context';
import { type Milestone } from './milestoneFile';
import { ensureMilestoneWorktree } from './milestoneGit';
import { slugify } from './names';
import type { HarnessPaths } from './paths';
import { MAX_PLAN_TASKS, parsePlan } from './planFile';
import { plannerPrompt } from './prompts';
import { stateOf } from './schedule';
import * as transitions from './transitions';

export async function planMilestone(ctx: LongRunContext, id: string): Promise<PhaseEnd> {
  const { store, paths } = ctx;
  let run = store.load();
  const before = stateOf(run, id);
  const now = logTimestamp();
  if (before.status === 'pending') {
    store.updateMilestone(
      id,
      (m) => transitions.startPlanning(m, now),
      'gate check passed (dependencies completed, no scope conflict with a milestone in progress): plan-crafting',
    );
  } else if (before.status === 'planning') {
    store.updateMilestone(
      id,
      (m) => void (m.since = now),
      `plan-crafting ${before.plan ? 'restarted (the plan file may be incomplete)' : 'started'}`,
    );
  } else {
    throw new Error(`${id} cannot be planned from "${before.status}"`);
  }
  const def = run.milestones.get(id)!;
  const worktree = await ensureMilestoneWorktree(paths, ctx.git, id, ctx.baseBranch);

  run = store.load();
  let plan = stateOf(run, id).plan;
  if (!plan) {
    plan = paths.rel(freePlanPath(paths, def));
    const chosen = plan;
    store.updateMilestone(id, (m) => void (m.plan = chosen));
    run = store.load();
  }
  const planFile = paths.abs(plan);
  mkdirSync(paths.plansDir, { recursive: true });
  rmSync(planFile, { force: true });

  ctx.say(`planning (${ctx.agents.planner})`, id);
  const control = ctx.control(id);
  const { result, rateLimited } = await runRoleAgent({
    role: 'planner',
    milestone: id,
    command: ctx.agents.planner,
    cwd: worktree,
    prompt: plannerPrompt(run, id, planFile),
    runsDir: paths.runsOf(id),
    env: ctx.env,
    vars: {
      LAUNCHPAD_PLAN_FILE: planFile,
      LAUNCHPAD_MILESTONE_NAME: def.name,
      LAUNCHPAD_WORKTREE: worktree,
      LAUNCHPAD_HARNESS_DIR: paths.dir,
    },
    records: ctx.records,
    signal: control.signal,
  });
  if (control.cause) return { kind: 'stopped', cause: control.cause };
  const wrote = existsSync(planFile);
  if (rateLimited && (result.code !== 0 || !wrote)) {
    store.log('rate limit: the planner stopped on a usage limit; state saved, nothing charged (planning restarts on resume)', id);
    return { kind: 'rate-limited', who: `the planner of ${id}` };
  }
  const fail = (reason: string): PhaseEnd => {
    store.updateMilestone(id, (m) => transitions.fail(m, reason), `failed in plan-crafting: ${reason}`);
    return { kind: 'failed' };
  };
  if (result.code !== 0) return fail(describeFailure('planner', result));
  if (!wrote) return fail(`the planner wrote no plan file (${plan})`);
  let count: number;
  try {
    count = parsePlan(readFileSync(planFile, 'utf8'), plan).length;
  } catch (err) {
    return fail(`the plan is not valid: ${(err as Error).message}`);
  }
  store.updateMilestone(
    id,
    (m) => transitions.awaitApproval(m),
    `plan written: ${plan} (${count} task${count === 1 ? '' : 's'})${count > MAX_PLAN_TASKS ? `; more than ${MAX_PLAN_TASKS} tasks: the approval gate asks whether to split the milestone` : ''}; awaiting approval`,
  );
  return advanced;
}

/** plans/YYYY-MM-DD-m<N>-<name>.md, or -v2, -v3 … when a plan of that name exists already. */
export function freePlanPath(paths: HarnessPaths, def: Milestone): string {
  const base = `${formatDay(new Date())}-${def.id.toLowerCase()}-${slugify(def.name)}`;
  for (let v = 1; ; v++) {
    const path = join(paths.plansDir, `${base}${v > 1 ? `-v${v}` : ''}.md`);
    if (!existsSync(path)) return path;
  }
}
