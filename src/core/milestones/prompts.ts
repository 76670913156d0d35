// What each agent is told. The planner gets a Context Brief: the milestone's goal, scope and
// success criteria, and from each completed predecessor ONLY the files it changed, the
// interfaces it established and the criteria verified (read from its checkpoint) — never logs,
// reviews or transcripts. The reviewer gets the plan and the diff, never the workers' output.
import { existsSync, readFileSync } from 'node:fs';

import { readCheckpointContext } from './checkpointFile';
import type { LongRun } from './longRun';
import { PLAN_TASK_ID } from './planFile';
import { readVerdict, reviewFindings } from './reviewFile';
import { stateOf } from './schedule';

export function contextBrief(run: LongRun, id: string): string {
  const def = run.milestones.get(id)!;
  const me = stateOf(run, id);
  const lines = [
    `# Context Brief: ${id} — ${def.name}`,
    '',
    '## Goal',
    def.goal,
    '',
    '## Scope',
    ...def.scope.map((s) => `- ${s}`),
    '',
    '## Success Criteria',
    ...def.criteria.map((c) => `- ${c}`),
    '',
    '## Constraints',
    '- The plan must satisfy every success criterion above.',
    "- The plan must not modify files outside the milestone's scope.",
    '- Files of completed milestones are locked: work that needs them changed belongs to a new milestone.',
  ];
  for (const d of def.dependencies) {
    const dep = stateOf(run, d);
    if (dep.status === 'completed' && dep.checkpoint && existsSync(run.paths.abs(dep.checkpoint))) {
      const c = readCheckpointContext(readFileSync(run.paths.abs(dep.checkpoint), 'utf8'), dep.checkpoint);
      lines.push(
        '',
        `## Completed predecessor ${d} — ${run.milestones.get(d)!.name}`,
        '### Files created or modified',
        ...bullets(c.filesChanged),
        '### Interface contracts established',
        ...bullets(c.interfaces),
        '### Success criteria verified as met',
        ...bullets(c.criteria),
      );
    } else if (me.unblockedDespite.includes(d)) {
      lines.push(
        '',
        `## Missing prerequisite ${d}`,
        `Prerequisite ${d} was ${dep.status}. The following outputs are missing:`,
        ...bullets(run.milestones.get(d)!.criteria),
      );
    }
  }
  return lines.join('\n') + '\n';
}

function bullets(items: string[]): string[] {
  return items.length ? items.map((i) => `- ${i}`) : ['- (none)'];
}

/** Findings of the milestone's last review when it failed: what the next attempt must address. */
export function failedReviewFindings(run: LongRun, id: string): string | undefined {
  const review = stateOf(run, id).review;
  if (!review || !existsSync(run.paths.abs(review))) return undefined;
  const text = readFileSync(run.paths.abs(review), 'utf8');
  return readVerdict(text) === 'FAIL' ? reviewFindings(text) : undefined;
}

export function plannerPrompt(run: LongRun, id: string, planFile: string): string {
  const me = stateOf(run, id);
  const findings = failedReviewFindings(run, id);
  const lines = [
    'You are the planner of one milestone of a long run managed by Launchpad.',
    'Write an implementation plan for the milestone described by the Context Brief below.',
    '',
    contextBrief(run, id),
  ];
  if (me.rejection) lines.push('## Constraint from a person', me.rejection, '');
  if (findings) lines.push('## Constraints from the failed review of the previous attempt', findings, '');
  lines.push(
    '## The plan file',
    `Write the plan to: ${planFile}`,
    'Free text for people may come first. The tasks Launchpad runs go under a "## Tasks" heading, each a checkbox line',
    'followed by indented fields:',
    '',
    '```markdown',
    '## Tasks',
    '',
    '- [ ] T1 Short title of the task',
    '  - Files: src/a.ts, src/b/',
    '  - Validate: `npm test -- a`',
    '  - Depends: (none)',
    '  - Timeout: 600',
    '  - Context: what the worker must know to do it',
    '- [ ] T2 Next task',
    '  - Files: src/c.ts',
    '  - Validate: `npm test -- c`',
    '  - Depends: T1',
    '```',
    '',
    `Task ids are T1, T2, … (${PLAN_TASK_ID.source}); every task needs a Validate command that exits 0 when the task is done.`,
    'Depends lists task ids of this plan. Files are the files or folders the task changes, inside the scope. Timeout (seconds) and',
    'Context are optional. Keep the plan to at most 15 tasks; a larger milestone should be split.',
    'Do not change any other file and do not commit.',
  );
  return lines.join('\n') + '\n';
}

export function reviewerPrompt(
  run: LongRun,
  id: string,
  opts: { plan: string; planText: string; diffFile: string; diffStat: string; reviewFile: string },
): string {
  const def = run.milestones.get(id)!;
  return (
    [
      'You are the reviewer of one milestone of a long run managed by Launchpad. Review the work against its plan.',
      'You see the plan and the diff, not the workers: judge only what is in the repository.',
      '',
      `## Milestone ${id} — ${def.name}`,
      '### Goal',
      def.goal,
      '### Scope',
      ...def.scope.map((s) => `- ${s}`),
      '### Success Criteria',
      ...def.criteria.map((c) => `- ${c}`),
      '',
      `## Plan (${opts.plan})`,
      opts.planText.trim(),
      '',
      '## Diff',
      `The full diff of the milestone is in ${opts.diffFile}. Summary:`,
      '```',
      opts.diffStat.trim() || '(no changes)',
      '```',
      '',
      '## Your review',
      `Write the review to: ${opts.reviewFile}`,
      'List your findings (what is missing or wrong, with files and lines), then end with exactly one verdict line:',
      'VERDICT: PASS   (every success criterion is met and the plan was followed)',
      'VERDICT: FAIL   (anything else)',
      'Do not change any file of the repository.',
    ].join('\n') + '\n'
  );
}

/** The description a worker's task gets: the task's own context, the milestone, and findings to address. */
export function workerContext(run: LongRun, id: string, task: { title: string; context?: string | undefined }, findings?: string): string {
  const def = run.milestones.get(id)!;
  const parts = [task.context ?? task.title, '', `Part of milestone ${id} (${def.name}): ${def.goal}`];
  if (findings) parts.push('', 'A review of the previous attempt failed. Findings to address:', findings);
  return parts.join('\n');
}
