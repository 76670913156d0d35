// Completion: the final end-to-end gate — the verification command, the test suite and every
// interface contract on the fully integrated base branch (in a throwaway worktree). A failure adds
// a corrective milestone (at most two); after that a person decides.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { LongRunContext } from './context';
import { logEntry, type LongRun } from './longRun';
import { formatMilestone, milestoneNumber } from './milestoneFile';
import { withTempWorktree } from './milestoneGit';
import { slugify } from './names';
import { newMilestoneState } from './stateFile';
import { completionSummary } from './statusBlock';
import * as transitions from './transitions';
import { runChecks } from './verify';

/** Corrective milestones the final gate adds by itself before a person decides. */
export const E2E_CORRECTIVE_ATTEMPTS = 2;

export type FinalEnd = { kind: 'completed'; summary: string } | { kind: 'corrective'; id: string } | { kind: 'gate' } | { kind: 'stopped' };

export async function finalGate(ctx: LongRunContext, signal: AbortSignal): Promise<FinalEnd> {
  const { store, paths, git } = ctx;
  let run = store.load();
  if (run.state.overall.status !== 'completing') {
    store.update((s) => {
      transitions.startCompleting(s.overall);
      s.log.push(logEntry('every milestone is done: final E2E gate on the integrated result'));
    });
  }
  run = store.load();
  ctx.say(`final E2E gate on ${ctx.baseBranch}`);
  const head = (await git.run(['rev-parse', ctx.baseBranch])).stdout.trim();
  const ids = run.state.milestones.filter((m) => m.status === 'completed').map((m) => m.id);
  const check = await withTempWorktree(git, join(paths.worktreeRoot, `milestone-${paths.slug}-final`), head, (dir) =>
    runChecks({ dir, run, interfacesOf: ids, env: ctx.env, records: ctx.records, logDir: join(paths.artefacts, 'final'), signal }),
  );
  if (check.stopped) return { kind: 'stopped' };

  if (check.ok) {
    store.update((s) => {
      transitions.completeRun(s.overall);
      s.log.push(logEntry(`final E2E gate passed (${check.lines.join('; ')}); long run completed`));
    });
    const summary = await completionSummary(ctx, store.load(), check.lines);
    writeFileSync(paths.summary, summary);
    return { kind: 'completed', summary };
  }

  if (run.state.overall.e2eFixes >= E2E_CORRECTIVE_ATTEMPTS) {
    store.update((s) => {
      s.overall.awaiting = 'e2e';
      s.overall.reason = `final E2E gate still fails after ${s.overall.e2eFixes} corrective milestones: ${check.failure.split('\n')[0]}`;
      s.log.push(logEntry(`final E2E gate failed again; escalated to a person: ${check.failure.split('\n')[0]}`));
    });
    return { kind: 'gate' };
  }
  const id = addE2ECorrective(ctx, run, check.failure);
  return { kind: 'corrective', id };
}

/** A corrective milestone for a final gate failure, after every completed milestone. */
function addE2ECorrective(ctx: LongRunContext, run: LongRun, failure: string): string {
  const { paths, store } = ctx;
  const attempt = run.state.overall.e2eFixes + 1;
  const id = `M${Math.max(0, ...[...run.milestones.keys()].map(milestoneNumber)) + 1}`;
  const done = run.state.milestones.filter((m) => m.status === 'completed').map((m) => m.id);
  const likely = likelyCause(run, failure);
  const scope = [...new Set([...run.milestones.values()].flatMap((m) => m.scope))];
  const name = `Final E2E fix ${attempt}`;
  const commands = [run.state.verification.command, run.state.verification.testSuite]
    .filter(Boolean)
    .map((c) => `\`${c}\` passes on the integrated result`);
  const text = formatMilestone({
    id,
    name,
    goal: [
      `Make the final end-to-end gate pass on the integrated result.${likely.length ? ` Likely cause: the output of ${likely.join(', ')}.` : ''}`,
      '',
      'Failure:',
      '',
      ...failure.split('\n').map((l) => `    ${l}`),
    ].join('\n'),
    scope,
    criteria: commands.length ? commands : ['every interface contract of the completed milestones holds'],
    dependencies: done,
    interfaces: [],
  });
  mkdirSync(paths.milestonesDir, { recursive: true });
  writeFileSync(join(paths.milestonesDir, `${id}-${slugify(name)}.md`), text, { flag: 'wx' });
  store.setName(id, name);
  store.update((s) => {
    s.milestones.push(newMilestoneState(id));
    transitions.reopenRun(s.overall);
    s.overall.e2eFixes = attempt;
    s.log.push(
      logEntry(
        `final E2E gate failed: ${failure.split('\n')[0]}; corrective milestone ${id} added (${attempt} of ${E2E_CORRECTIVE_ATTEMPTS})${likely.length ? `, likely cause ${likely.join(', ')}` : ''}`,
      ),
    );
  });
  return id;
}

/** Completed milestones whose changed files the failure output names. */
function likelyCause(run: LongRun, failure: string): string[] {
  return run.state.milestones
    .filter((m) => m.status === 'completed' && m.checkpoint && existsSync(run.paths.abs(m.checkpoint)))
    .filter((m) => [...readFileSync(run.paths.abs(m.checkpoint!), 'utf8').matchAll(/^- (\S+) \(/gm)].some((x) => failure.includes(x[1]!)))
    .map((m) => m.id);
}
