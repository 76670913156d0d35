// The end of every run: what completed, what failed and why (its one-line reason, where its
// output is, the exact command that retries it), what is blocked and by what, the questions agents
// asked (with the command that answers each), and what to type
// next when the run stopped on a limit or a setting. Commands are complete as printed.
import { existsSync } from 'node:fs';

import { escapeControlChars } from '../../core/controlChars';
import type { RunOutcome } from '../../core/controller/types';
import type { StatePaths } from '../../core/statePaths';
import type { Task, TaskFile } from '../../core/taskFile/schema';
import { countStates, formatCounts, heldBy, type TaskCounts } from '../../core/tasks/counts';
import { analyzeTasks, blockedByOf, isPermanentlyFailed, rootBlocker } from '../../core/tasks/dag';
import { parseErrorEntry } from '../../core/tasks/errorEntry';
import { positions } from '../../core/tasks/taskIndex';
import type { Colours } from './colour';
import { duration } from './runningTable';

export interface Failure {
  id: string;
  title: string;
  attempts: number;
  max_attempts: number;
  /** The last error_log entry: `[CATEGORY] reason`. */
  error: string | null;
  /** The newest attempt's validation.log or transcript.log, whichever holds the failure. */
  output: string | null;
  /** The command that makes it run again; null when the next run retries it anyway. */
  retry: string | null;
}

export interface Blocked {
  id: string;
  title: string;
  reason: string;
  /** The failed task whose retry unblocks it, when that is the reason. */
  blocked_by: string | null;
}

export interface AskedQuestion {
  id: string;
  title: string;
  question: string;
  /** The command that answers it, with the answer to fill in. */
  answer: string;
}

export interface AwaitingReview {
  id: string;
  title: string;
  round: number;
  commit: string;
  /** The command that shows the change and the two that decide it. */
  review: string;
}

export interface RunSummary {
  /** The task file's counts as the run leaves it (core/tasks/counts.ts: the names `status` and the editor use). */
  counts: TaskCounts;
  failed: Failure[];
  blocked: Blocked[];
  /** Tasks awaiting an answer to their agent's question. */
  questions: AskedQuestion[];
  /** Tasks whose validation passed, awaiting a person's review before they merge. */
  reviews: AwaitingReview[];
  /** What to type next, each a complete command line with a few words before it. */
  next: string[];
}

export interface SummaryContext {
  paths: StatePaths;
  /** How to call launchpad here (`launchpad`, or `node …/cli.js --dir …`). */
  launchpad: string;
  /** `run` with the options this run was given, for "run again" hints. */
  rerun: (extra?: string) => string;
  /** The limits this run had (its options, else session_config). */
  maxTasksPerSession: number;
  maxSessions: number;
  /** No agent was set anywhere (--agent, $LAUNCHPAD_AGENT, session_config). */
  agentMissing: boolean;
  /** Now, in ms: a concurrent worker's current lease still holds its task after this run ends. */
  now: number;
}

export function summarizeRun(file: TaskFile, outcome: RunOutcome, ctx: SummaryContext): RunSummary {
  // The run has ended: its own tasks in progress are interrupted, another worker's leased ones run.
  const { states, blockedReasons } = analyzeTasks(file.tasks, heldBy({ live: false, now: ctx.now }));
  const pos = positions(file.tasks);
  const summary: RunSummary = { counts: countStates(states.values()), failed: [], blocked: [], questions: [], reviews: [], next: [] };
  const missingValidation: Task[] = [];
  for (const t of file.tasks) {
    const state = states.get(t.id);
    if (state === 'awaiting_answer' && t.question)
      summary.questions.push({ id: t.id, title: t.title, question: t.question.text, answer: `${ctx.launchpad} answer ${t.id} "…"` });
    else if (state === 'awaiting_review' && t.review_round)
      summary.reviews.push({
        id: t.id,
        title: t.title,
        round: t.review_round.number,
        commit: t.review_round.commit.slice(0, 7),
        review: `${ctx.launchpad} review ${t.id}`,
      });
    else if (state === 'blocked') {
      const first = blockedByOf(t) ?? blockedByFailed(blockedReasons.get(t.id));
      const by = first === undefined ? undefined : rootBlocker(file.tasks, pos, first);
      summary.blocked.push({
        id: t.id,
        title: t.title,
        reason: parseErrorEntry(blockedReasons.get(t.id))?.reason ?? 'blocked',
        blocked_by: by ?? null,
      });
    } else if (state === 'failed' || state === 'retryable') {
      summary.failed.push({
        id: t.id,
        title: t.title,
        attempts: t.attempts,
        max_attempts: t.max_attempts,
        error: t.error_log.at(-1) ?? null,
        output: failureOutput(ctx.paths, t),
        retry: isPermanentlyFailed(t) ? `${ctx.launchpad} retry ${t.id}` : null,
      });
    } else if (state === 'needs_validation') missingValidation.push(t);
  }
  summary.next = nextSteps(file, outcome, summary, missingValidation, ctx);
  return summary;
}

function blockedByFailed(entry: string | undefined): string | undefined {
  return /Blocked by failed (\S+)$/.exec(entry ?? '')?.[1];
}

/** Where the failure's output is: the validation's log for a failed validation, else the agent's transcript. */
function failureOutput(paths: StatePaths, task: Task): string | null {
  const attempt = paths.attemptsOf(task.id).at(-1);
  if (!attempt) return null;
  const entry = parseErrorEntry(task.error_log.at(-1));
  const validation = entry?.category === 'TEST_FAIL' || (entry?.category === 'TIMEOUT' && entry.reason.startsWith('Validation'));
  const file = validation && existsSync(attempt.validationLog) ? attempt.validationLog : attempt.transcript;
  return existsSync(file) ? file : null;
}

function nextSteps(file: TaskFile, outcome: RunOutcome, s: RunSummary, missing: Task[], ctx: SummaryContext): string[] {
  const next: string[] = [];
  switch (outcome.reason) {
    case 'max-tasks-per-session': {
      const limit = ctx.maxTasksPerSession;
      const c = s.counts;
      const left = c.ready + c.waiting + c.interrupted + c.retrying;
      const more = Math.max(limit * 2, left);
      next.push(
        `${left} task(s) still to run; this run stopped after ${limit} dispatches (max_tasks_per_session). Continue: ${ctx.rerun()}`,
      );
      next.push(
        `or allow more dispatches per run: ${ctx.rerun(`--max-tasks ${more}`)}   (for good: ${ctx.launchpad} config max_tasks_per_session ${more})`,
      );
      break;
    }
    case 'max-sessions': {
      const more = Math.max(ctx.maxSessions * 2, file.session_count + 10);
      next.push(
        `${file.session_count} of ${ctx.maxSessions} sessions used (max_sessions; only runs that dispatch count): ${ctx.launchpad} config max_sessions ${more}   (or once: ${ctx.rerun(`--max-sessions ${more}`)})`,
      );
      break;
    }
    case 'config-error':
      if (!ctx.agentMissing) break;
      next.push(
        `no agent is set: ${ctx.rerun('--agent claude')}   (${ctx.launchpad} agents lists the presets; for good: ${ctx.launchpad} config agent claude)`,
      );
      break;
    case 'awaiting-answers':
    case 'awaiting-review':
      next.push(`answer each question and review each change above, then run again: ${ctx.rerun()} (those go first)`);
      break;
    case 'stopped':
      if (s.counts.interrupted) next.push(`the next run resumes the ${s.counts.interrupted} interrupted task(s): ${ctx.rerun()}`);
      break;
  }
  for (const t of missing)
    next.push(`${t.id} has no validation command, so no run starts it: ${ctx.launchpad} edit ${t.id} --validate 'CMD'`);
  return next;
}

export function formatSummary(s: RunSummary, outcome: RunOutcome, c: Colours, elapsedMs: number): string[] {
  const paint = (field: keyof TaskCounts, text: string) =>
    field === 'completed'
      ? c.green(text)
      : field === 'failed'
        ? c.red(text)
        : field === 'blocked' || field === 'retrying' || field === 'awaiting_answer' || field === 'awaiting_review'
          ? c.yellow(text)
          : text;
  const counts = formatCounts(s.counts, { all: true, paint });
  const lines = ['', `${c.bold('Summary')}: ${counts}  ${c.dim(`(session ${outcome.session}, ${duration(elapsedMs)})`)}`];
  for (const f of s.failed) {
    lines.push(`  ${c.red('failed')}   ${f.id}  ${f.title}  ${c.dim(`(attempts ${f.attempts}/${f.max_attempts})`)}`);
    if (f.error) lines.push(`           ${f.error}`);
    if (f.output) lines.push(`           output: ${f.output}`);
    lines.push(`           ${f.retry ? `retry:  ${f.retry}` : `the next run retries it (${f.max_attempts - f.attempts} attempt(s) left)`}`);
  }
  for (const b of s.blocked) {
    lines.push(
      `  ${c.yellow('blocked')}  ${b.id}  ${b.title}  ${c.dim(`(${b.reason}${b.blocked_by ? `; retrying ${b.blocked_by} unblocks it` : ''})`)}`,
    );
  }
  for (const q of s.questions) {
    lines.push(`  ${c.yellow('asks')}     ${q.id}  ${q.title}`);
    // The agent's words: they never drive the terminal.
    lines.push(`           ${escapeControlChars(q.question)}`);
    lines.push(`           answer: ${q.answer}`);
  }
  for (const r of s.reviews) {
    lines.push(`  ${c.yellow('review')}   ${r.id}  ${r.title}  ${c.dim(`(round ${r.round}, ${r.commit})`)}`);
    lines.push(`           review: ${r.review}, then approve or request-changes`);
  }
  for (const n of outcome.notes ?? []) lines.push(`${c.yellow('note:')} ${n}`);
  lines.push(outcome.exitCode === 0 ? c.green(outcome.message) : outcome.message);
  for (const n of s.next) lines.push(`${c.cyan('next:')} ${n}`);
  return lines;
}
