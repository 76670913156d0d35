// What a person is told about a run, whichever front end tells it: that it ended (its counts and
// outcome), that a task has used all its attempts, and that an agent asked a question. The CLI's `run --notify CMD` gets the same
// facts in its command's environment; the editor shows them as notifications.
import type { RunOutcome } from './controller/types';
import { humanFirst } from './humanFirst';
import { runProcess } from './process/runProcess';
import type { TaskFile } from './taskFile/schema';
import { isDependencyFailure } from './tasks/dag';
import { computeStats, type Stats } from './tasks/stats';

export interface ExhaustedTask {
  id: string;
  title: string;
  attempts: number;
  maxAttempts: number;
  /** Its last error_log entry, `[CATEGORY] reason`. */
  lastError: string | undefined;
}

/**
 * The task `id` when it has used all its attempts: failed, attempts at max_attempts, and not
 * because of a dependency (a blocked task did not run). Undefined otherwise.
 */
export function exhaustedTask(file: TaskFile, id: string): ExhaustedTask | undefined {
  const t = file.tasks.find((x) => x.id === id);
  if (!t || t.status !== 'failed' || t.attempts < t.max_attempts || isDependencyFailure(t)) return undefined;
  return { id: t.id, title: t.title, attempts: t.attempts, maxAttempts: t.max_attempts, lastError: t.error_log.at(-1) };
}

/** The longest exhausted-task line: a notification shows its beginning; LAUNCHPAD_ERROR has the whole error. */
export const EXHAUSTED_LINE_CHARS = 240;

/**
 * `"Parse front matter" failed all 3 attempts (task-003): [TEST_FAIL] npm test exited with 1`:
 * the title and what happened first, then the id and the error, cut first where the line is long.
 */
export function describeExhausted(t: ExhaustedTask): string {
  const all = t.attempts === 1 ? 'its only attempt' : `all ${t.attempts} attempts`;
  return humanFirst(`"${t.title}" failed ${all}`, `(${t.id})${t.lastError ? `: ${t.lastError}` : ''}`, EXHAUSTED_LINE_CHARS);
}

/** A task whose agent asked a question: it awaits a person's answer. */
export interface AskingTask {
  id: string;
  title: string;
  question: string;
}

/** The task `id` when it awaits an answer to its agent's question; undefined otherwise. */
export function askingTask(file: TaskFile, id: string): AskingTask | undefined {
  const t = file.tasks.find((x) => x.id === id);
  if (!t || t.status !== 'awaiting_answer' || !t.question) return undefined;
  return { id: t.id, title: t.title, question: t.question.text };
}

/** `task-003 asks: which port should the server use?`: what a notification says first. */
export function describeQuestion(t: AskingTask): string {
  return humanFirst(`${t.id} asks: ${t.question}`, `("${t.title}")`, EXHAUSTED_LINE_CHARS);
}

/** A task whose validation passed under review "manual": it awaits a person's review. */
export interface ReviewTask {
  id: string;
  title: string;
  round: number;
  commit: string;
}

/** The task `id` when it awaits review; undefined otherwise. */
export function reviewTask(file: TaskFile, id: string): ReviewTask | undefined {
  const t = file.tasks.find((x) => x.id === id);
  if (!t || t.status !== 'awaiting_review' || !t.review_round) return undefined;
  return { id: t.id, title: t.title, round: t.review_round.number, commit: t.review_round.commit };
}

/** `task-003 awaits review (round 1, abc1234)`: what a notification says first. */
export function describeReview(t: ReviewTask): string {
  return humanFirst(`${t.id} awaits review (round ${t.round}, ${t.commit.slice(0, 7)})`, `("${t.title}")`, EXHAUSTED_LINE_CHARS);
}

export type RunNotice =
  | { event: 'run-ended'; outcome: RunOutcome }
  | { event: 'attempts-exhausted'; task: ExhaustedTask; file: TaskFile }
  | { event: 'question'; task: AskingTask; file: TaskFile }
  | { event: 'review'; task: ReviewTask; file: TaskFile };

/** One line, for a notification or LAUNCHPAD_SUMMARY. */
export function summarize(notice: RunNotice): string {
  const line =
    notice.event === 'run-ended'
      ? notice.outcome.message
      : notice.event === 'question'
        ? describeQuestion(notice.task)
        : notice.event === 'review'
          ? describeReview(notice.task)
          : describeExhausted(notice.task);
  return line.replace(/\s*\n\s*/g, ' ');
}

/**
 * The environment of a --notify command: LAUNCHPAD_EVENT (run-ended, attempts-exhausted,
 * question, review), LAUNCHPAD_SUMMARY, the counts (LAUNCHPAD_TOTAL, _COMPLETED, _FAILED, _BLOCKED,
 * _PENDING), and LAUNCHPAD_EXIT_CODE and LAUNCHPAD_SESSION at the end, or LAUNCHPAD_TASK_ID,
 * LAUNCHPAD_TASK_TITLE and LAUNCHPAD_ERROR (attempts-exhausted), LAUNCHPAD_QUESTION (question) or
 * LAUNCHPAD_REVIEW_COMMIT (review) for a task.
 */
export function noticeEnvironment(notice: RunNotice): Record<string, string> {
  const st: Stats = notice.event === 'run-ended' ? notice.outcome.stats : computeStats(notice.file.tasks);
  const env: Record<string, string> = {
    LAUNCHPAD_EVENT: notice.event,
    LAUNCHPAD_SUMMARY: summarize(notice),
    LAUNCHPAD_TOTAL: String(st.tasks_total),
    LAUNCHPAD_COMPLETED: String(st.completed),
    LAUNCHPAD_FAILED: String(st.failed),
    LAUNCHPAD_BLOCKED: String(st.blocked),
    LAUNCHPAD_PENDING: String(st.pending),
  };
  if (notice.event === 'run-ended') {
    env.LAUNCHPAD_EXIT_CODE = String(notice.outcome.exitCode);
    env.LAUNCHPAD_SESSION = String(notice.outcome.session);
  } else {
    env.LAUNCHPAD_TASK_ID = notice.task.id;
    env.LAUNCHPAD_TASK_TITLE = notice.task.title;
    if (notice.event === 'question') env.LAUNCHPAD_QUESTION = notice.task.question;
    else if (notice.event === 'review') env.LAUNCHPAD_REVIEW_COMMIT = notice.task.commit;
    else env.LAUNCHPAD_ERROR = notice.task.lastError ?? '';
  }
  return env;
}

/** A --notify command's time limit: it tells a person something, it does not work. */
export const NOTIFY_TIMEOUT_MS = 30_000;

/**
 * Runs a --notify command (sh -c) in `cwd` with the notice in its environment, within its time
 * limit (its whole process group ends then). Returns a warning when it failed; never throws.
 */
export async function runNotifyCommand(
  command: string,
  cwd: string,
  notice: RunNotice,
  timeoutMs = NOTIFY_TIMEOUT_MS,
): Promise<string | undefined> {
  const r = await runProcess({ command, cwd, env: { ...process.env, ...noticeEnvironment(notice) }, timeoutMs, captureBytes: 4096 });
  if (r.code === 0) return undefined;
  const why = r.spawnError
    ? `could not start: ${r.spawnError}`
    : r.timedOut
      ? `timed out after ${timeoutMs / 1000}s`
      : `exited with ${r.code ?? r.signal}`;
  const last = r.tail.trim().split('\n').at(-1)?.trim();
  return `--notify (${notice.event}) ${why}${last && !r.timedOut ? `: ${last.slice(0, 200)}` : ''}`;
}
