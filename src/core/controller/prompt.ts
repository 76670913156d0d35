// The worker prompt: seed 000's sub-agent template, with the previous attempts' errors on a
// retry. The agent works in its worktree, so that is the project root it is given.
import type { Task } from '../taskFile/schema';

export interface PromptContext {
  worktree: string;
  branch: string;
  /** The branch the controller merges into. */
  baseBranch: string;
}

export function buildPrompt(task: Task, ctx: PromptContext): string {
  const hints = task.files_hint.length ? task.files_hint.join(', ') : '(no hint: keep changes small and focused)';
  const validation = task.validation?.command ?? '(none)';
  const lines = [
    'You are a worker agent executing a single task for a Launchpad-managed project.',
    '',
    '## Task',
    `- ID: ${task.id}`,
    `- Title: ${task.title}`,
    `- Description: ${task.context ?? task.title}`,
    '',
    '## Scope',
    `- Focus on these files/directories: ${hints}`,
    '- Make the MINIMUM changes needed to complete this task',
    '- Do NOT modify files outside your scope unless absolutely necessary',
    '- Do NOT read or modify: harness-progress.txt, harness-tasks.json',
    '',
    '## Validation',
    'When done, run this command to verify your work:',
    validation,
    '',
    "If validation fails, fix the issues and re-run until it passes or you've exhausted your attempts.",
    '',
    '## Progress',
    'Whenever you finish a step of your plan, print one line on its own, e.g. `CHECKPOINT step=2/5 "tests written"`:',
    '`CHECKPOINT step=M/N "what is done"`, M the steps done so far, N your estimate of all steps. The person',
    'watching the run sees the last one live, and it is kept with the task if the run is interrupted.',
    '',
    '## Completion',
    `- Commit all changes with message: "[${task.id}] ${task.title}"`,
    '- Your last message must clearly state either:',
    '  - "RESULT:SUCCESS" if validation passed',
    '  - "RESULT:FAIL <reason>" if you could not complete the task',
    '',
    '## Context',
    `- Project root: ${ctx.worktree}`,
    `- Current branch: ${ctx.branch} (the controller merges it into ${ctx.baseBranch})`,
    '- You are working in an isolated git worktree — your changes will be merged by the controller.',
  ];
  if (task.error_log.length) {
    lines.push(
      '',
      '## Previous Attempt(s)',
      `This task has been attempted ${Math.max(task.attempts, task.error_log.length)} time(s) before and failed.`,
      'Error log from previous attempts:',
      ...task.error_log,
    );
    if (task.error_tail) lines.push('', 'Output of the last failure (tail):', '```', task.error_tail.trimEnd(), '```');
    lines.push('', 'Avoid repeating the same mistakes. Consider a different approach.');
  }
  return lines.join('\n') + '\n';
}
