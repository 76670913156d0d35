// What a run spends and what stops it spending: the dollars and tokens agents report (recorded
// on their task), the run's budget (session_config.budget_usd), a task's cost limit
// (session_config.max_cost_usd), and the usage and rate limits a tool reports. None of these is
// a task's failure: a limit's attempt is given back, and a reached budget only stops new agents.
import { addUsd } from '../agents/parsers/parser';
import type { AgentReport, UsageLimit } from '../agents/report';
import type { Task, TaskFile } from '../taskFile/schema';
import { isPermanentlyFailed } from '../tasks/dag';
import { COST_LIMIT_REASON } from '../tasks/errorEntry';
import { failTask, recordCost } from '../tasks/transitions';
import { hasWork } from './envStop';
import type { TaskEnd } from './merge';
import { LIMIT_BACKOFF_CAP_MS, type RunConfig } from './runConfig';
import type { Session } from './session';
import type { TaskTerminal } from './types';

/** Dispatching paused by a limit a tool reported. */
export interface LimitPause {
  preset: string;
  limit: UsageLimit;
  /** When dispatching resumes (epoch ms): the reset time the tool printed, else a back-off. */
  until: number;
  /** Whether `until` is the tool's own reset time (not a back-off of ours). */
  fromTool: boolean;
}

/**
 * Overloads in a row of one task that are waited out uncharged; the next one is charged. A real
 * overload passes within a few back-offs; a provider that answers "overloaded" to every attempt
 * of a task is failing it, and --wait-on-limit would otherwise retry it forever.
 */
export const OVERLOADS_UNCHARGED = 2;

/** Why no new agent may start now. */
export type Hold = 'budget' | 'usage-limit';

/** One run's spending and pause; lives on the Session. */
export class RunSpending {
  /** Dollars this run's agents reported; undefined while none reported any. */
  costUsd: number | undefined;
  budgetReached = false;
  pause: LimitPause | undefined;
  private limitsInRow = 0;
  /** Each task's overloads since its last attempt that ended otherwise. */
  private readonly overloads = new Map<string, number>();

  constructor(
    private readonly config: Pick<RunConfig, 'budgetUsd' | 'limitBackoffMs'>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Adds a reported cost; true when this one reaches the budget. */
  addCost(usd: number): boolean {
    this.costUsd = addUsd(this.costUsd, usd);
    const budget = this.config.budgetUsd;
    if (this.budgetReached || budget === undefined || this.costUsd < budget) return false;
    this.budgetReached = true;
    return true;
  }

  get hold(): Hold | undefined {
    return this.budgetReached ? 'budget' : this.pause ? 'usage-limit' : undefined;
  }

  /**
   * A tool hit `limit`: dispatching pauses until the reset time it printed, else for a back-off
   * (1, 2, 4 … times the first, at most 30 min) counted over limits in a row. A second task hitting
   * the limit while paused does not lengthen the back-off.
   */
  limitHit(preset: string, limit: UsageLimit): LimitPause {
    const now = this.now();
    const reset = limit.resetsAt ? Date.parse(limit.resetsAt) : NaN;
    if (!this.pause) this.limitsInRow++;
    const fromTool = Number.isFinite(reset) && reset > now;
    const until = fromTool ? reset : now + Math.min(this.config.limitBackoffMs * 2 ** (this.limitsInRow - 1), LIMIT_BACKOFF_CAP_MS);
    if (!this.pause || until > this.pause.until) this.pause = { preset, limit, until, fromTool };
    return this.pause;
  }

  /** An attempt of `taskId` ended without a limit: the next limit's back-off starts from the first again. */
  noLimit(taskId: string): void {
    this.limitsInRow = 0;
    this.overloads.delete(taskId);
  }

  /**
   * Whether `limit`, which ended an attempt of `taskId`, is charged to it: an overload after
   * OVERLOADS_UNCHARGED in a row of the same task is (and the count starts again).
   */
  chargesLimit(taskId: string, limit: UsageLimit): boolean {
    if (limit.kind !== 'overloaded') return false;
    const inRow = (this.overloads.get(taskId) ?? 0) + 1;
    if (inRow <= OVERLOADS_UNCHARGED) {
      this.overloads.set(taskId, inRow);
      return false;
    }
    this.overloads.delete(taskId);
    return true;
  }

  /** Waits until the pause ends (or `signal` aborts); true when it ended. */
  async waitForResume(signal: AbortSignal): Promise<boolean> {
    const pause = this.pause;
    if (!pause) return true;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.max(0, pause.until - this.now()));
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
    if (signal.aborted) return false;
    this.pause = undefined;
    return true;
  }
}

/**
 * Records what an attempt's agent reported it spent: on the task (transitions.recordCost) and in
 * the run's sum. The first report that reaches session_config.budget_usd logs that no new agent
 * starts. A failure to write the task file is the session's to notice elsewhere: only warned here.
 */
export async function recordSpending(s: Session, taskId: string, report: AgentReport): Promise<void> {
  try {
    await s.transact((file) => recordCost(file, taskId, report));
  } catch (err) {
    s.logger.warn(`could not record the cost of ${taskId}: ${(err as Error).message}`);
  }
  if (report.costUsd === undefined || !s.spending.addCost(report.costUsd)) return;
  s.log({
    type: 'WARN',
    message: `budget_usd=${s.config.budgetUsd} reached: this run's agents reported $${s.spending.costUsd}; no new agent starts, running ones finish`,
  });
}

/** The limit that ended an attempt: one the tool reported, unless it still gave RESULT:SUCCESS (it recovered). */
export function limitThatEnded(report: AgentReport | undefined, verdictKind: string): UsageLimit | undefined {
  return report?.limit && verdictKind !== 'success' ? report.limit : undefined;
}

/**
 * The tool stopped on a usage or rate limit: the attempt is not charged (undoDispatch; work the
 * agent left is kept for the next run's recovery), dispatching pauses, the task's terminal closes.
 * In place, the caller says whether the agent left work in the working tree (`keepWork`): the
 * attempt then stays in progress there, and is resumed before anything else runs.
 */
export async function stopForLimit(
  s: Session,
  before: Task,
  preset: string,
  limit: UsageLimit,
  terminal: TaskTerminal,
  inPlace?: { keepWork: boolean },
): Promise<TaskEnd> {
  const keepWork = inPlace ? inPlace.keepWork : await hasWork(s, before.id);
  let note = '';
  if (!keepWork && before.status !== 'in_progress') await s.removeWorktree(before.id, s.fenceOf(before.id)).catch(() => undefined);
  try {
    await s.giveBack(before, { keepWork });
    if (keepWork) note = inPlace ? '; its work stays in the working tree and is resumed first' : '; its work is kept for the next run';
  } catch (err) {
    note = '; harness-tasks.json could not be updated';
    s.logger.warn(`could not record that ${before.id}'s attempt is not charged: ${(err as Error).message}`);
  }
  const pause = s.spending.limitHit(preset, limit);
  const until = isoMinute(pause.until) + (pause.fromTool ? '' : ' (back-off)');
  s.log({
    type: 'WARN',
    taskId: before.id,
    message: `${limitWords(limit)} of ${preset}: paused until ${until}; attempt not charged${note} ("${limit.message}")`,
  });
  s.taskEvents.fire({ taskId: before.id, kind: 'interrupted' });
  terminal.write(
    `\r\n[launchpad] ${limitWords(limit)} of ${preset}: ${limit.message}\r\n[launchpad] not charged; dispatching paused until ${until}\r\n`,
  );
  terminal.close('interrupted');
  return 'interrupted';
}

/** The log line of an overload charged to its attempt (RunSpending.chargesLimit). */
export function chargedOverloadMessage(preset: string, limit: UsageLimit): string {
  return `${limitWords(limit)} of ${preset} ${OVERLOADS_UNCHARGED + 1} times in a row for this task: this attempt is charged ("${limit.message}")`;
}

/** The log line of a resume. */
export function resumedMessage(pause: LimitPause): string {
  return `resumed after ${limitWords(pause.limit)} of ${pause.preset}`;
}

/** The log line of a pause the run now waits out (run --wait-on-limit). */
export function waitingMessage(pause: LimitPause): string {
  return `${limitWords(pause.limit)} of ${pause.preset}: waiting until ${isoMinute(pause.until)}${pause.fromTool ? '' : ' (back-off)'} to resume`;
}

/**
 * Tasks to fail before a batch is chosen because their agents' reported cost reached
 * session_config.max_cost_usd: pending or retryable ones (a running one finishes its attempt).
 * Each fails with `[TASK_EXEC] cost limit reached: …`, which dag.isPermanentlyFailed counts as
 * permanent. Returns each task's id and reason.
 */
export function failOverCost(file: TaskFile, maxCostUsd: number | undefined): Array<{ taskId: string; reason: string }> {
  if (maxCostUsd === undefined) return [];
  const out: Array<{ taskId: string; reason: string }> = [];
  for (const t of file.tasks) {
    const usd = t.cost?.usd;
    if (usd === undefined || usd < maxCostUsd) continue;
    if (t.status !== 'pending' && !(t.status === 'failed' && !isPermanentlyFailed(t))) continue;
    const reason = `${COST_LIMIT_REASON}: its agents reported $${usd} over ${t.cost?.attempts_reported ?? 0} attempt(s), session_config.max_cost_usd is $${maxCostUsd}; raise it, then retry the task`;
    failTask(file, t.id, { category: 'TASK_EXEC', reason });
    out.push({ taskId: t.id, reason });
  }
  return out;
}

/** The run's end when a budget or a limit stopped it: what happened and when to go on. */
export function holdMessage(s: Session, hold: Hold): string {
  if (hold === 'budget') {
    return `stopped: session_config.budget_usd ($${s.config.budgetUsd}) reached, this run's agents reported $${s.spending.costUsd}; no new agent was started and nothing was charged to the tasks; raise budget_usd or run again to go on`;
  }
  const pause = s.spending.pause!;
  const when = pause.fromTool
    ? `it lifts at ${isoMinute(pause.until)}`
    : pause.limit.resetText
      ? `the tool said it resets ${pause.limit.resetText}`
      : `the tool printed no reset time (try after ${isoMinute(pause.until)})`;
  return `stopped: ${limitWords(pause.limit)} of ${pause.preset} ("${pause.limit.message}"); nothing was charged; ${when}: run again then, or use run --wait-on-limit`;
}

function limitWords(limit: UsageLimit): string {
  return limit.kind === 'usage-limit' ? 'usage limit' : limit.kind === 'rate-limit' ? 'rate limit' : 'overload';
}

/** 2025-06-01T15:00:00Z */
function isoMinute(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
