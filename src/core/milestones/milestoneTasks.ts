// Run-plan is a Launchpad run: the plan's tasks become the tasks of the milestone's own state root
// (in its worktree), and the controller runs them there — worktrees, validation, merges into the
// milestone branch, retries, recovery. The task file remembers which plan and attempt it was made
// for, so a resumed attempt keeps its progress and a new attempt starts clean.
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';

import { Controller } from '../controller/controller';
import type { RunOutcome } from '../controller/types';
import { StatePaths } from '../statePaths';
import { type Task, type TaskFile, taskFileSchema } from '../taskFile/schema';
import { StateStore } from '../taskFile/store';
import { isPermanentlyFailed } from '../tasks/dag';
import { unfailTask } from '../tasks/transitions';
import { isRateLimited } from './agents';
import type { LongRunContext, StopCause } from './context';
import type { LongRun } from './longRun';
import { writeAtomically } from './longRun';
import { clearAllTasks, parsePlan, type PlanTask, setTaskDone } from './planFile';
import { failedReviewFindings, workerContext } from './prompts';
import { stateOf } from './schedule';

/** Extra fields of a milestone's harness-tasks.json (unknown fields are kept by every write). */
interface MilestoneTaskFile extends TaskFile {
  milestone_plan?: string;
  milestone_attempt?: number;
}

export function milestoneStore(ctx: Pick<LongRunContext, 'paths'>, id: string): StateStore {
  return new StateStore(new StatePaths(ctx.paths.stateRootOf(id)), 'launchpad milestones');
}

export const taskIdOf = (milestone: string, planTask: string) => `${milestone}-${planTask}`;
const PLAN_TASK_OF = /^M\d+-(T\d+)$/;

/**
 * The milestone's task file for its current attempt: kept as it is when it was made for this plan
 * and attempt (a resumed run); the same plan run again (a review failed) puts every task back to
 * pending with the review's findings; a new plan starts a new file. Ticked plan tasks (done in an
 * earlier run whose task file was lost) enter as completed.
 */
export function prepareTasks(ctx: LongRunContext, run: LongRun, id: string): void {
  const me = stateOf(run, id);
  const planFile = ctx.paths.abs(me.plan!);
  const planText = readFileSync(planFile, 'utf8');
  const planned = parsePlan(planText, me.plan!);
  const store = milestoneStore(ctx, id);
  const existing = store.exists() ? (store.load().file as MilestoneTaskFile) : undefined;

  if (existing && existing.milestone_plan === me.plan && existing.milestone_attempt === me.attempts) return;
  if (existing && existing.milestone_plan === me.plan) {
    const findings = failedReviewFindings(run, id);
    existing.tasks = planned.map((p) => toTask(run, id, { ...p, done: false }, findings));
    existing.milestone_attempt = me.attempts;
    store.save(existing);
    writeAtomically(planFile, clearAllTasks(planText));
    ctx.store.log(`run-plan again with the review's findings (attempt ${me.attempts}): every task back to pending`, id);
    return;
  }
  const file = taskFileSchema.parse({
    version: 3,
    session_config: { max_sessions: 100000, max_tasks_per_session: 1000 },
    tasks: planned.map((p) => toTask(run, id, p)),
  }) as MilestoneTaskFile;
  file.milestone_plan = me.plan!;
  file.milestone_attempt = me.attempts;
  if (existing) rmSync(store.paths.tasks, { force: true });
  mkdirSync(store.paths.root, { recursive: true });
  store.save(file);
}

function toTask(run: LongRun, id: string, p: PlanTask, findings?: string): Task {
  return {
    id: taskIdOf(id, p.id),
    title: p.title,
    status: p.done ? 'completed' : 'pending',
    priority: 'P1',
    depends_on: p.depends.map((d) => taskIdOf(id, d)),
    attempts: 0,
    max_attempts: 3,
    context: workerContext(run, id, p, findings),
    files_hint: p.files,
    validation: { command: p.validate, ...(p.timeout ? { timeout_seconds: p.timeout } : {}) },
    error_log: [],
  };
}

export type ControllerEnd =
  | { kind: 'completed' }
  | { kind: 'failed'; reason: string }
  | { kind: 'stopped'; cause: StopCause }
  | { kind: 'rate-limited'; task: string }
  /** Its tasks wait only on people: answers to agents' questions, or reviews. */
  | { kind: 'awaiting-people'; message: string }
  | { kind: 'error'; message: string };

/**
 * Runs the milestone's tasks through the controller until they are all completed or nothing more
 * can run. Each completed plan task is ticked in the plan. A task that failed on a usage limit
 * stops the run at once and gets its attempt back, so nothing is charged for it.
 */
export async function runMilestoneTasks(ctx: LongRunContext, id: string, planFile: string | undefined): Promise<ControllerEnd> {
  const store = milestoneStore(ctx, id);
  const control = ctx.control(id);
  let rateLimited: string | undefined;
  for (let session = 0; ; session++) {
    const controller = new Controller({
      paths: store.paths,
      settings: { cliAgent: ctx.agents.worker, worktreeDir: ctx.paths.taskWorktreesOf(id), env: ctx.env },
      logger: ctx.logger,
      ...(ctx.terminals ? { terminals: ctx.terminals } : {}),
      onLogLine: (line) => ctx.onControllerLine?.(id, line),
    });
    const detach = control.attach(controller);
    controller.onDidChangeTask((e) => {
      if (e.kind === 'completed' && planFile) tick(planFile, e.taskId);
      if (e.kind === 'failed' && !rateLimited && failedOnRateLimit(store, e.taskId)) {
        rateLimited = e.taskId;
        control.stop('rate-limit');
      }
    });
    let outcome: RunOutcome;
    try {
      outcome = await controller.run();
    } catch (err) {
      return { kind: 'error', message: `the controller could not run the tasks of ${id}: ${(err as Error).message}` };
    } finally {
      detach();
    }
    if (rateLimited) {
      await refund(store, rateLimited);
      return { kind: 'rate-limited', task: rateLimited };
    }
    if (control.cause) return { kind: 'stopped', cause: control.cause };
    if (outcome.exitCode === 0) return { kind: 'completed' };
    if (outcome.reason === 'max-tasks-per-session' && session < 100) continue;
    if (outcome.exitCode === 2) return { kind: 'error', message: outcome.message };
    if (outcome.exitCode === 8)
      return { kind: 'awaiting-people', message: `${outcome.message.split('\n')[0]} (its tasks: launchpad --dir ${store.paths.root} …)` };
    return { kind: 'failed', reason: describeFailedTasks(store.load().file) || outcome.message };
  }
}

function tick(planFile: string, taskId: string): void {
  const m = PLAN_TASK_OF.exec(taskId);
  if (!m || !existsSync(planFile)) return;
  const text = readFileSync(planFile, 'utf8');
  const next = setTaskDone(text, m[1]!, true);
  if (next !== text) writeAtomically(planFile, next);
}

function failedOnRateLimit(store: StateStore, taskId: string): boolean {
  try {
    const task = store.load().file.tasks.find((t) => t.id === taskId);
    return !!task && (isRateLimited(task.error_tail) || isRateLimited(task.error_log.at(-1)));
  } catch {
    return false;
  }
}

/** The attempt a usage limit cost is given back: pending again, its error dropped. */
async function refund(store: StateStore, taskId: string): Promise<void> {
  await store.transact((file) => void unfailTask(file, taskId));
}

/** "M1-T2 failed after 3 attempts: [TEST_FAIL] …; M1-T3 blocked" — for state.md's Reason. */
export function describeFailedTasks(file: TaskFile): string {
  return file.tasks
    .filter((t) => t.status === 'failed' && isPermanentlyFailed(t))
    .map((t) => `${t.id} failed after ${t.attempts} attempt${t.attempts === 1 ? '' : 's'}: ${t.error_log.at(-1) ?? 'no error recorded'}`)
    .join('; ');
}

/** Tasks of the file that are not done and not given up on (an interrupted integration fix). */
export function unfinishedTasks(ctx: Pick<LongRunContext, 'paths'>, id: string, prefix: string): Task[] {
  const store = milestoneStore(ctx, id);
  if (!store.exists()) return [];
  return store
    .load()
    .file.tasks.filter((t) => t.id.startsWith(prefix) && t.status !== 'completed' && !(t.status === 'failed' && isPermanentlyFailed(t)));
}
