// After review-work passes: the cross-milestone integration check (the milestone branch merged
// with the current base branch in a throwaway worktree; the verification command, the test suite
// and every completed milestone's interfaces there), two targeted fix attempts when it fails (a
// worker task with the failure, then review and the check again), then a person decides. When it
// passes: the checkpoint file, then the milestone branch merged into the base branch --no-ff.
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { Git } from '../git/git';
import { type Checkpoint, formatCheckpoint } from './checkpointFile';
import { advanced, type LongRunContext, type PhaseEnd } from './context';
import type { LongRun } from './longRun';
import { branchHead, discardMilestoneWork, ensureMilestoneWorktree, milestoneChanges, withTempWorktree } from './milestoneGit';
import { milestoneStore, runMilestoneTasks, unfinishedTasks } from './milestoneTasks';
import { stateOf } from './schedule';
import * as transitions from './transitions';
import { interfaceCheckCommand, runChecks } from './verify';

/** Targeted fix attempts before a person decides. */
export const INTEGRATION_FIX_ATTEMPTS = 2;

export async function integrateMilestone(ctx: LongRunContext, id: string): Promise<PhaseEnd> {
  const { store, paths, git } = ctx;
  let run = store.load();
  const me = stateOf(run, id);
  if (me.status !== 'integrating' || me.awaiting) throw new Error(`${id} cannot be integrated from "${me.status}"`);
  const branch = paths.branchOf(id);
  const head = await branchHead(git, branch);
  if (!head) return { kind: 'error', message: `${id}: its branch ${branch} is gone; nothing to integrate` };

  // Merged before a crash: only the bookkeeping is left.
  if (await git.isAncestor(head, ctx.baseBranch))
    return finish(ctx, run, id, head, me.checkpoint ? undefined : 'merged before an interruption');

  // A fix interrupted by a crash or a stop is finished first.
  if (unfinishedTasks(ctx, id, `${id}-FIX`).length) return runFix(ctx, id);

  let report: string[];
  if (me.integrationAccepted) {
    report = [`not verified: a person accepted the integration gap (${me.reason ?? 'see the execution log'})`];
  } else {
    ctx.say(`integration check: ${branch} merged with ${ctx.baseBranch}`, id);
    const control = ctx.control(id);
    const check = await withTempWorktree(git, `${paths.worktreeOf(id)}.integration`, head, async (dir) => {
      const merged = await new Git(dir).mergeNoFf(ctx.baseBranch, `Integration check of ${id} with ${ctx.baseBranch}`);
      if (!merged.ok) {
        await new Git(dir).mergeAbort();
        return { conflict: [...merged.conflicts, ...merged.blockedBy] };
      }
      const ids = run.state.milestones.filter((m) => m.status === 'completed' || m.id === id).map((m) => m.id);
      return runChecks({
        dir,
        run,
        interfacesOf: ids,
        env: ctx.env,
        records: ctx.records,
        logDir: paths.runsOf(id),
        signal: control.signal,
      });
    });
    if (control.cause) return { kind: 'stopped', cause: control.cause };
    if ('conflict' in check) {
      return escalate(
        ctx,
        id,
        `merging ${ctx.baseBranch} into ${branch} conflicts in ${check.conflict.join(', ')}; resolve it in ${paths.worktreeOf(id)} (merge ${ctx.baseBranch} there and commit), then accept`,
      );
    }
    if (check.stopped) return { kind: 'stopped', cause: 'stop' };
    if (!check.ok) {
      const failure = `${check.failure}`;
      if (me.integrationFixes >= INTEGRATION_FIX_ATTEMPTS) {
        const involved = involvedMilestones(run, id, failure);
        return escalate(
          ctx,
          id,
          `integration check failed after ${me.integrationFixes} targeted fixes; milestones involved: ${involved.join(', ')}; ${firstLines(failure, 3)}`,
        );
      }
      return startFix(ctx, run, id, me.integrationFixes + 1, failure);
    }
    report = check.lines;
  }

  // Checkpoint first, then the merge: a crash between them repeats the check and the merge.
  run = store.load();
  const def = run.milestones.get(id)!;
  const state = stateOf(run, id);
  const changes = await milestoneChanges(git, ctx.baseBranch, head);
  const checkpointFile = paths.checkpoint(id);
  const completed = new Date();
  const started = state.started ? new Date(state.started) : completed;
  const checkpoint: Checkpoint = {
    id,
    name: def.name,
    completed,
    durationSeconds: (completed.getTime() - started.getTime()) / 1000,
    attempts: state.attempts,
    plan: state.plan ?? '(none)',
    review: state.review ?? '(none)',
    testResults: [`On ${branch} merged with ${ctx.baseBranch}:`, ...report.map((l) => `- ${l}`)].join('\n'),
    filesChanged: changes,
    stateAfter: `${def.goal}\n\nNow in place (verified by review-work): ${def.criteria.join('; ')}.`,
    interfaces: def.interfaces.map((c) => `${c.file}: ${c.signature}`),
    criteria: def.criteria,
  };
  mkdirSync(paths.checkpointsDir, { recursive: true });
  writeFileSync(checkpointFile, formatCheckpoint(checkpoint));
  store.updateMilestone(
    id,
    (m) => void (m.checkpoint = paths.rel(checkpointFile)),
    `checkpoint written: ${paths.rel(checkpointFile)} (${changes.length} file${changes.length === 1 ? '' : 's'} changed)`,
  );

  if ((await git.currentBranch()) !== ctx.baseBranch) {
    return {
      kind: 'error',
      message: `the main checkout ${paths.repoTop} is not on ${ctx.baseBranch}: check it out again, then run again to merge ${id}`,
    };
  }
  const merged = await git.mergeNoFf(branch, `Merge milestone ${id}: ${def.name}`);
  if (!merged.ok) {
    if (merged.conflicts.length) await git.mergeAbort();
    const what = merged.conflicts.length
      ? `conflicts in ${merged.conflicts.join(', ')}`
      : `local changes in ${paths.repoTop} would be overwritten: ${merged.blockedBy.join(', ')}`;
    return escalate(ctx, id, `merging ${branch} into ${ctx.baseBranch} stopped: ${what}; resolve it by hand, then accept`);
  }
  return finish(ctx, store.load(), id, head);
}

/** Completed: the state, the log, and the milestone's worktrees and branch cleaned up (its controller files archived). */
async function finish(ctx: LongRunContext, run: LongRun, id: string, head: string, note?: string): Promise<PhaseEnd> {
  const { store, paths, git } = ctx;
  const mergeCommit = (await git.run(['rev-parse', '--short', 'HEAD'])).stdout.trim();
  if (!stateOf(run, id).checkpoint || !existsSync(paths.checkpoint(id))) {
    return {
      kind: 'error',
      message: `${id} is merged (${head.slice(0, 8)} is in ${ctx.baseBranch}) but has no checkpoint file; write ${paths.rel(paths.checkpoint(id))} or roll back`,
    };
  }
  store.updateMilestone(
    id,
    (m) => transitions.complete(m),
    `completed: ${paths.branchOf(id)} merged into ${ctx.baseBranch} --no-ff (${note ?? `commit ${mergeCommit}`})`,
  );
  archiveControllerFiles(ctx, id);
  await discardMilestoneWork(paths, git, id, { keepBranch: false });
  return advanced;
}

/** The milestone's task file, progress log and transcripts are kept in the harness's run artefacts. */
function archiveControllerFiles(ctx: LongRunContext, id: string): void {
  const from = ctx.paths.stateRootOf(id);
  if (!existsSync(from)) return;
  const to = join(ctx.paths.runsOf(id), 'controller');
  mkdirSync(dirname(to), { recursive: true });
  cpSync(from, to, { recursive: true, filter: (src) => !/\.lock$|\/procs(\/|$)/.test(src) });
}

function escalate(ctx: LongRunContext, id: string, reason: string): PhaseEnd {
  ctx.store.updateMilestone(
    id,
    (m) => {
      m.awaiting = 'integration';
      m.reason = reason;
    },
    `integration escalated to a person: ${reason}`,
  );
  return { kind: 'gate' };
}

/** A targeted fix: the base merged into the milestone branch, then a worker task with the failure. */
async function startFix(ctx: LongRunContext, run: LongRun, id: string, attempt: number, failure: string): Promise<PhaseEnd> {
  const { paths, store } = ctx;
  const worktree = await ensureMilestoneWorktree(paths, ctx.git, id, ctx.baseBranch);
  const merged = await new Git(worktree).mergeNoFf(
    ctx.baseBranch,
    `Merge ${ctx.baseBranch} into ${paths.branchOf(id)} for an integration fix`,
  );
  if (!merged.ok) {
    await new Git(worktree).mergeAbort();
    return escalate(
      ctx,
      id,
      `merging ${ctx.baseBranch} into ${paths.branchOf(id)} for a fix conflicts in ${[...merged.conflicts, ...merged.blockedBy].join(', ')}`,
    );
  }
  const def = run.milestones.get(id)!;
  const { verification } = run.state;
  const ids = run.state.milestones.filter((m) => m.status === 'completed' || m.id === id).map((m) => m.id);
  const validate = [verification.command, verification.testSuite, interfaceCheckCommand(run, ids)].filter(Boolean).join(' && ') || 'true';
  const taskId = `${id}-FIX${attempt}`;
  await milestoneStore(ctx, id).transact((file) => {
    if (file.tasks.some((t) => t.id === taskId)) return;
    file.tasks.push({
      id: taskId,
      title: `Integration fix ${attempt} for ${id}`,
      status: 'pending',
      priority: 'P0',
      depends_on: [],
      attempts: 0,
      max_attempts: 1,
      context: [
        `Milestone ${id} (${def.name}) passed its review, but the cross-milestone integration check failed on its branch merged with ${ctx.baseBranch}.`,
        `Make the smallest fix inside the milestone's scope (${def.scope.join(', ')}) that makes it pass. Failure:`,
        failure,
      ].join('\n'),
      files_hint: [],
      validation: { command: validate },
      error_log: [],
    });
  });
  store.updateMilestone(
    id,
    (m) => void (m.integrationFixes = attempt),
    `integration check failed: ${firstLines(failure, 2)}; targeted fix ${attempt} of ${INTEGRATION_FIX_ATTEMPTS} (${taskId})`,
  );
  return runFix(ctx, id);
}

async function runFix(ctx: LongRunContext, id: string): Promise<PhaseEnd> {
  ctx.say('integration fix: a worker with the failure', id);
  const end = await runMilestoneTasks(ctx, id, undefined);
  if (end.kind === 'stopped') return { kind: 'stopped', cause: end.cause };
  if (end.kind === 'error') return { kind: 'error', message: end.message };
  if (end.kind === 'awaiting-people') return end;
  if (end.kind === 'rate-limited') {
    ctx.store.log(`rate limit: the integration fix's worker stopped on a usage limit; state saved, its attempt given back`, id);
    return { kind: 'rate-limited', who: `the integration fix of ${id}` };
  }
  ctx.store.updateMilestone(
    id,
    (m) => transitions.startReview(m),
    `integration fix ${end.kind === 'completed' ? 'done' : `did not pass its validation (${end.reason})`}; review-work again, then the integration check`,
  );
  return advanced;
}

/** The milestone and the completed ones whose changed files the failure output names. */
function involvedMilestones(run: LongRun, id: string, failure: string): string[] {
  const out = [id];
  for (const m of run.state.milestones) {
    if (m.status !== 'completed' || !m.checkpoint || m.id === id) continue;
    const path = run.paths.abs(m.checkpoint);
    const files = existsSync(path) ? [...readFileSync(path, 'utf8').matchAll(/^- (\S+) \(/gm)].map((x) => x[1]!) : [];
    if (files.some((f) => failure.includes(f)) || failure.includes(`${m.id}:`)) out.push(m.id);
  }
  return out;
}

function firstLines(text: string, n: number): string {
  return text
    .split('\n')
    .filter((l) => l.trim())
    .slice(0, n)
    .join(' | ');
}
