// Review-work: a reviewer agent in a throwaway worktree of the milestone branch sees the plan and
// the diff (never the workers' transcripts, which stay in the milestone's own worktree) and writes
// a review ending in `VERDICT: PASS` or `VERDICT: FAIL`. A FAIL walks the retry matrix by the
// persisted Attempts counter: 1 → run the same plan again with the findings, 2 → plan again with
// them as constraints, 3 or more → the milestone fails.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { logTimestamp } from '../log/logLine';
import { describeFailure, runRoleAgent } from './agents';
import { formatDay } from './checkpointFile';
import { advanced, type LongRunContext, type PhaseEnd } from './context';
import { oneLine } from './markdown';
import { type Milestone } from './milestoneFile';
import { branchHead, milestoneDiff, withTempWorktree } from './milestoneGit';
import { slugify } from './names';
import type { HarnessPaths } from './paths';
import { reviewerPrompt } from './prompts';
import { readVerdict, reviewFindings } from './reviewFile';
import { stateOf } from './schedule';
import * as transitions from './transitions';

/** A reviewer that gives no verdict is asked once more (its failures are often transient). */
const REVIEWER_TRIES = 2;

export async function reviewMilestone(ctx: LongRunContext, id: string): Promise<PhaseEnd> {
  const { store, paths } = ctx;
  let run = store.load();
  const me = stateOf(run, id);
  if (me.status !== 'validating') throw new Error(`${id} cannot be reviewed from "${me.status}"`);
  const def = run.milestones.get(id)!;
  const head = await branchHead(ctx.git, paths.branchOf(id));
  if (!head) return { kind: 'error', message: `${id}: its branch ${paths.branchOf(id)} is gone; nothing to review` };

  if (!me.review) {
    const chosen = paths.rel(freeReviewPath(paths, def));
    store.updateMilestone(id, (m) => void (m.review = chosen), `review-work started: ${chosen}`);
  } else {
    store.log(`review-work restarted (the review may be incomplete): ${me.review}`, id);
  }
  run = store.load();
  const review = stateOf(run, id).review!;
  const reviewFile = paths.abs(review);
  mkdirSync(paths.reviewsDir, { recursive: true });

  const diff = await milestoneDiff(ctx.git, ctx.baseBranch, head);
  mkdirSync(paths.runsOf(id), { recursive: true });
  const diffFile = join(paths.runsOf(id), `attempt-${me.attempts}.diff`);
  writeFileSync(diffFile, diff.patch);
  const planText = readFileSync(paths.abs(me.plan!), 'utf8');
  const control = ctx.control(id);

  ctx.say(`review-work (${ctx.agents.reviewer})`, id);
  let verdict: ReturnType<typeof readVerdict>;
  let problem = '';
  for (let i = 0; i < REVIEWER_TRIES && !verdict; i++) {
    rmSync(reviewFile, { force: true });
    const ran = await withTempWorktree(ctx.git, `${paths.worktreeOf(id)}.review`, head, (dir) =>
      runRoleAgent({
        role: 'reviewer',
        milestone: id,
        command: ctx.agents.reviewer,
        cwd: dir,
        prompt: reviewerPrompt(run, id, { plan: me.plan!, planText, diffFile, diffStat: diff.stat, reviewFile }),
        runsDir: paths.runsOf(id),
        env: ctx.env,
        vars: {
          LAUNCHPAD_REVIEW_FILE: reviewFile,
          LAUNCHPAD_PLAN_FILE: paths.abs(me.plan!),
          LAUNCHPAD_DIFF_FILE: diffFile,
          LAUNCHPAD_WORKTREE: dir,
          LAUNCHPAD_MILESTONE_NAME: def.name,
        },
        records: ctx.records,
        signal: control.signal,
      }),
    );
    if (control.cause) return { kind: 'stopped', cause: control.cause };
    const text = existsSync(reviewFile) ? readFileSync(reviewFile, 'utf8') : undefined;
    verdict = text === undefined ? undefined : readVerdict(text);
    if (!verdict && ran.rateLimited) {
      store.log('rate limit: the reviewer stopped on a usage limit; state saved, nothing charged (review-work restarts on resume)', id);
      return { kind: 'rate-limited', who: `the reviewer of ${id}` };
    }
    if (!verdict) {
      problem =
        ran.result.code !== 0
          ? describeFailure('reviewer', ran.result)
          : text === undefined
            ? 'the reviewer wrote no review file'
            : 'the review has no "VERDICT: PASS" or "VERDICT: FAIL" line';
      store.log(`review-work gave no verdict: ${problem}${i + 1 < REVIEWER_TRIES ? '; asking the reviewer once more' : ''}`, id);
    }
  }
  if (!verdict) return { kind: 'error', message: `${id}: ${problem} (${review}); run again to restart review-work` };

  const now = logTimestamp();
  if (verdict === 'PASS') {
    store.updateMilestone(
      id,
      (m) => transitions.startIntegrating(m, now),
      `review-work: PASS (${review}); cross-milestone integration check`,
    );
    return advanced;
  }
  const finding = oneLine(reviewFindings(readFileSync(reviewFile, 'utf8'))).slice(0, 300);
  store.log(`review-work: FAIL (${review}) after attempt ${me.attempts}: ${finding}`, id);
  if (me.attempts <= 1) {
    store.updateMilestone(
      id,
      (m) => void transitions.requestChanges(m, now),
      `retry: run-plan again with the review's findings (attempt ${me.attempts + 1})`,
    );
    return advanced;
  }
  if (me.attempts === 2) {
    store.updateMilestone(
      id,
      (m) => transitions.requestReplan(m, now),
      "retry: plan-crafting again with the review's findings as constraints",
    );
    return advanced;
  }
  store.updateMilestone(
    id,
    (m) => transitions.fail(m, `review-work failed after ${me.attempts} attempts (${review}): ${finding}`),
    `failed: review-work failed on attempt ${me.attempts}; dependents will not start`,
  );
  return { kind: 'failed' };
}

/** reviews/YYYY-MM-DD-m<N>-<name>-review.md, then -review-2.md … for later reviews. */
export function freeReviewPath(paths: HarnessPaths, def: Milestone): string {
  const base = `${formatDay(new Date())}-${def.id.toLowerCase()}-${slugify(def.name)}-review`;
  for (let n = 1; ; n++) {
    const path = join(paths.reviewsDir, `${base}${n > 1 ? `-${n}` : ''}.md`);
    if (!existsSync(path)) return path;
  }
}
