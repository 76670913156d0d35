// The worker prompt: the worker template, with the previous attempts' errors on a retry, what an
// interrupted attempt left when it is resumed, and an agent's question with a person's answer. The agent works in its worktree, so that
// is the project root it is given.
import type { Checkpoint, Task } from '../taskFile/schema';

export interface PromptContext {
  worktree: string;
  branch: string;
  /** The branch the controller merges into. */
  baseBranch: string;
  /** The task runs in the main working tree (in-place mode), not a worktree of its own. */
  inPlace?: boolean;
  /** The task's protected paths (protectedPaths.ts): the agent is told to leave them alone. */
  protectedPaths?: readonly string[];
}

/** What an interrupted attempt left in its worktree, for the agent that resumes it. */
export interface ResumeContext {
  /** Not an interruption: the attempt stopped to ask a question a person has answered, or a person reviewed it and asked for changes. */
  after?: 'answer' | 'review';
  /** The number of the interrupted attempt. */
  interruptedAttempt: number;
  /** Its commits beyond the base, oldest first (`abc1234 subject`). */
  commits: string[];
  /** Files it left uncommitted (still in the worktree as they were). */
  uncommitted: string[];
  /** The ref holding a copy of those uncommitted changes. */
  snapshotRef?: string | undefined;
  /** The end of what it printed. */
  outputTail?: string | undefined;
}

/** Checkpoints and listed files shown at most, newest kept. */
const MAX_RESUME_ITEMS = 20;

export function buildPrompt(task: Task, ctx: PromptContext, resume?: ResumeContext): string {
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
    ...(ctx.protectedPaths?.length
      ? [
          `- Do NOT change these protected paths: ${ctx.protectedPaths.join(', ')}`,
          '  An attempt whose commits change them fails; the validation runs on their copies from the commit you started from.',
        ]
      : []),
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
    '  - "QUESTION: <your question>" if you cannot go on without a person\'s answer: your work so far is kept, and',
    '    you continue it in this worktree with the answer',
    '',
    '## Context',
    `- Project root: ${ctx.worktree}`,
    ...(ctx.inPlace
      ? [
          `- Current branch: ${ctx.baseBranch}`,
          '- You are working in the main working tree: commit on this branch; a failed attempt is rolled back to where it started.',
        ]
      : [
          `- Current branch: ${ctx.branch} (the controller merges it into ${ctx.baseBranch})`,
          '- You are working in an isolated git worktree — your changes will be merged by the controller.',
        ]),
  ];
  if (task.error_log.length) {
    lines.push(
      '',
      '## Previous Attempt(s)',
      `This task has been attempted ${Math.max(task.attempts, task.error_log.length)} time(s) before and failed.`,
      'Error log from previous attempts:',
      ...task.error_log,
    );
    // A reverted merge's tail says why and holds the changes it collided with (integration/gate.ts).
    const last = task.error_log.at(-1) ?? '';
    const together = /after it merged together with ([^:]+):/.exec(last)?.[1];
    const heading = !last.startsWith('[INTEGRATION]')
      ? 'Output of the last failure (tail):'
      : `Your last attempt was merged, then reverted: the base failed its integration check after it merged${together ? ` together with ${together}` : ''}. What the check said${together ? `, and what ${together} changed` : ''}:`;
    if (task.error_tail) lines.push('', heading, '```', task.error_tail.trimEnd(), '```');
    lines.push('', 'Avoid repeating the same mistakes. Consider a different approach.');
  }
  const q = task.question;
  if (q && typeof q.answer === 'string') {
    lines.push(
      '',
      "## Your Question and a Person's Answer",
      `Attempt ${q.attempt} of this task stopped to ask:`,
      ...quoted(q.text),
      'A person answered:',
      ...quoted(q.answer),
      'Go on with the task using this answer; do not ask the same question again.',
    );
  }
  const review = task.review_round;
  if (review?.verdict === 'changes_requested' && review.comments?.length) {
    lines.push(
      '',
      `## Requested Changes (review round ${review.number})`,
      `A person reviewed your change (commit ${review.commit.slice(0, 7)}) and asks for these changes, each on a line of that commit:`,
      ...review.comments.flatMap((c) => [
        `- \`${c.file}\` line ${c.line}: \`${c.text.trim()}\``,
        ...quoted(c.comment).map((l) => `  ${l}`),
      ]),
      'Address every comment in this worktree, then validate, commit and report as above. Your change is reviewed again before it merges.',
    );
  }
  if (resume) lines.push('', ...resumeSection(task, ctx, resume));
  return lines.join('\n') + '\n';
}

function resumeSection(task: Task, ctx: PromptContext, r: ResumeContext): string[] {
  const lines = [
    r.after === 'answer'
      ? '## Continuing After the Answer'
      : r.after === 'review'
        ? '## Continuing After the Review'
        : '## Resuming an Interrupted Attempt',
    r.after === 'answer'
      ? `Attempt ${r.interruptedAttempt} of this task stopped to ask the question above.`
      : r.after === 'review'
        ? `Attempt ${r.interruptedAttempt} of this task passed its validation; the review above asks for changes.`
        : `Attempt ${r.interruptedAttempt} of this task was interrupted before it reported a result (the controller stopped: a crash, a reboot or a person's stop).`,
    `This worktree holds its partial work: you continue it, you do not start over. Check what is already done, finish the rest, then validate, commit and report as above.`,
  ];
  if (r.commits.length) {
    lines.push('', `Commits it made on ${ctx.branch} (oldest first):`, ...bounded(r.commits).map((c) => `- ${c}`));
  } else {
    lines.push('', 'It made no commits.');
  }
  if (r.uncommitted.length) {
    lines.push(
      '',
      `Changes it left uncommitted, still in the worktree as they were${r.snapshotRef ? ` (a copy is kept at ${r.snapshotRef})` : ''}:`,
      ...bounded(r.uncommitted).map((f) => `- ${f}`),
    );
  }
  const checkpoints = task.checkpoints ?? [];
  if (checkpoints.length) {
    lines.push('', 'Its last checkpoints (and those of earlier attempts):', ...bounded(checkpoints).map(describeCheckpoint));
  } else {
    lines.push('', 'It reported no checkpoints.');
  }
  const tail = r.outputTail?.trimEnd();
  if (tail) lines.push('', 'The last of what it printed:', '```', tail, '```');
  return lines;
}

/** A person's or an agent's text as a quote: each of its lines after `> `. */
function quoted(text: string): string[] {
  return text.split('\n').map((l) => `> ${l}`);
}

function bounded<T>(items: readonly T[]): Array<T | string> {
  return items.length > MAX_RESUME_ITEMS ? [`… ${items.length - MAX_RESUME_ITEMS} earlier`, ...items.slice(-MAX_RESUME_ITEMS)] : [...items];
}

function describeCheckpoint(c: Checkpoint | string): string {
  if (typeof c === 'string') return `- ${c}`;
  return `- ${c.attempt ? `attempt ${c.attempt}, ` : ''}step ${c.step}/${c.total}: "${c.description}" (${c.timestamp})`;
}
