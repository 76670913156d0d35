// Run-plan: the approved plan's tasks run through the controller in the milestone's worktree.
// All completed: on to review. A task that failed after its attempts fails the milestone.
import { advanced, type LongRunContext, type PhaseEnd } from './context';
import { ensureMilestoneWorktree } from './milestoneGit';
import { prepareTasks, runMilestoneTasks } from './milestoneTasks';
import { stateOf } from './schedule';
import * as transitions from './transitions';

export async function executeMilestone(ctx: LongRunContext, id: string): Promise<PhaseEnd> {
  const { store, paths } = ctx;
  const run = store.load();
  const me = stateOf(run, id);
  if (me.status !== 'executing') throw new Error(`${id} cannot run its plan from "${me.status}"`);
  await ensureMilestoneWorktree(paths, ctx.git, id, ctx.baseBranch);
  prepareTasks(ctx, run, id);
  ctx.say(`run-plan: ${me.plan} (attempt ${me.attempts})`, id);

  const end = await runMilestoneTasks(ctx, id, paths.abs(me.plan!));
  switch (end.kind) {
    case 'completed':
      store.updateMilestone(id, (m) => transitions.startReview(m), `run-plan completed every task (attempt ${me.attempts}); review-work`);
      return advanced;
    case 'failed':
      store.updateMilestone(id, (m) => transitions.fail(m, end.reason), `failed in run-plan: ${end.reason}`);
      return { kind: 'failed' };
    case 'rate-limited':
      store.log(`rate limit: ${end.task}'s worker stopped on a usage limit; state saved, its attempt given back (run-plan resumes)`, id);
      return { kind: 'rate-limited', who: `the worker of ${end.task}` };
    case 'stopped':
      return { kind: 'stopped', cause: end.cause };
    case 'awaiting-people':
      store.log(`run-plan waits on people: ${end.message}`, id);
      return end;
    case 'error':
      return { kind: 'error', message: end.message };
  }
}
