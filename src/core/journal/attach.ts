// The controller's events written to the journal (and, for a spec's subtasks, back into its
// tasks.md and tasks.json), from outside the controller: it only listens to onDidChangeTask and
// waits for the outcome of run(). One helper for the CLI's `run` and the editor's run manager.
//
//   first event of the session  → session_started (focus: that task)
//   dispatched                  → (spec subtask) status in_progress, attempts + 1
//   completed                   → task_completed, duration measured from dispatch; (spec) box ticked
//   failed for good / blocked   → task_blocked, issue = the task's last error_log entry
//   question                    → task_blocked, issue = the agent's question, resolution = the answer command
//   the outcome                 → session_ended: summary from the stats, next steps = next eligible tasks
//
// A journal that cannot be written never stops a run: the problem goes to the logger.
import { statSync } from 'node:fs';
import { join } from 'node:path';

import type { RunOutcome, TaskEvent } from '../controller/types';
import type { Event } from '../events';
import { Git } from '../git/git';
import { type Logger, silentLogger } from '../logger';
import { readTasksMd, recordSpecResult } from '../specTasks/specFiles';
import { commitOwnWrites } from '../specTasks/specGit';
import { specTaskRef, unfinishedParents } from '../specTasks/specImport';
import type { StatePaths } from '../statePaths';
import type { Task, TaskFile } from '../taskFile/schema';
import { StateStore } from '../taskFile/store';
import { eligibleTasks, isDependencyFailure, isPermanentlyFailed } from '../tasks/dag';
import { taskWithId } from '../tasks/taskIndex';
import type { NewEntry } from './entrySchema';
import { Journal } from './journal';
import { JournalPaths } from './journalPaths';

export interface JournalAttachment {
  /** The run's own promise, settled after the journal has recorded the end of the session. */
  track(run: Promise<RunOutcome>): Promise<RunOutcome>;
  dispose(): void;
}

/** Outcomes of a run that started no session. */
const NO_SESSION = new Set<RunOutcome['reason']>(['state-unrecoverable', 'max-sessions']);

export function attachJournal(
  controller: { onDidChangeTask: Event<TaskEvent> },
  paths: StatePaths,
  opts: { logger?: Logger; command?: string; spec?: string } = {},
): JournalAttachment {
  const logger = opts.logger ?? silentLogger;
  const command = opts.command ?? 'launchpad run';
  const jpaths = new JournalPaths(paths);
  const journal = new Journal(jpaths, command);
  const store = new StateStore(paths, command);
  const attachedAt = Date.now();
  const dispatchedAt = new Map<string, number>();
  const specsWritten = new Map<string, Set<string>>();
  let started = false;
  let queue: Promise<void> = Promise.resolve();

  const enqueue = (what: string, work: () => Promise<unknown>) => {
    queue = queue.then(work).then(
      () => undefined,
      (err: unknown) => logger.warn(`journal: could not record ${what}: ${err instanceof Error ? err.message : String(err)}`),
    );
  };
  const append = (entry: NewEntry) => journal.append(entry);
  // The task as the controller just wrote it, in this process: reading the whole file again for
  // every event would cost what the file's size costs (lastKnown; peek before any write).
  const readTask = (id: string): { task: Task | undefined; file: TaskFile | undefined } => {
    try {
      const file = store.lastKnown() ?? store.peek();
      return { task: taskWithId(file.tasks, id), file };
    } catch {
      return { task: undefined, file: undefined };
    }
  };
  const toSpec = async (task: Task | undefined, result: Parameters<typeof recordSpecResult>[3]) => {
    const ref = specTaskRef(task);
    if (!ref) return;
    const files = specsWritten.get(ref.spec) ?? new Set<string>();
    specsWritten.set(ref.spec, files);
    files.add(jpaths.specTasksJson(ref.spec));
    const ticked = await recordSpecResult(jpaths, ref.spec, ref.id, result, command);
    if (ticked.length) files.add(jpaths.specTasksMd(ref.spec));
  };
  const sessionStarted = async (focus: Task | undefined, file: TaskFile | undefined) => {
    const ref = specTaskRef(focus);
    await append({
      type: 'session_started',
      spec: opts.spec ?? ref?.spec ?? 'harness',
      focus_task: focus ? (ref?.id ?? focus.id) : 'none',
      branch: await new Git(paths.root).currentBranch().catch(() => undefined),
      session: file?.session_count,
      context: `launchpad run${file ? `, session ${file.session_count}` : ''}`,
    });
  };

  const sub = controller.onDidChangeTask((e) => {
    if (e.kind === 'dispatched') dispatchedAt.set(e.taskId, Date.now());
    if (!started && (e.kind === 'dispatched' || e.kind === 'completed' || e.kind === 'failed')) {
      started = true;
      enqueue('session_started', () => {
        const { task, file } = readTask(e.taskId);
        return sessionStarted(task, file);
      });
    }
    if (e.kind === 'dispatched') {
      enqueue(`the dispatch of ${e.taskId}`, () => toSpec(readTask(e.taskId).task, { kind: 'dispatched' }));
    } else if (e.kind === 'completed') {
      const endedAt = Date.now();
      enqueue(`the completion of ${e.taskId}`, async () => {
        const { task, file } = readTask(e.taskId);
        const from = dispatchedAt.get(e.taskId) ?? attemptStart(paths, task) ?? attachedAt;
        const durationMinutes = Math.round((endedAt - from) / 6000) / 10;
        await toSpec(task, { kind: 'completed', completedAt: task?.completed_at ?? new Date(endedAt).toISOString(), durationMinutes });
        const ref = specTaskRef(task);
        const next = file ? nextTask(file, e) : undefined;
        await append({
          type: 'task_completed',
          spec: ref?.spec ?? 'harness',
          task_id: ref?.id ?? e.taskId,
          task_description: task?.title,
          duration_minutes: durationMinutes,
          attempts: task?.attempts,
          session: file?.session_count,
          next_task: next ? (specTaskRef(next)?.id ?? next.id) : undefined,
        });
      });
    } else if (e.kind === 'question') {
      enqueue(`the question of ${e.taskId}`, async () => {
        const { task, file } = readTask(e.taskId);
        if (!task) return;
        const ref = specTaskRef(task);
        await append({
          type: 'task_blocked',
          spec: ref?.spec ?? 'harness',
          task_id: ref?.id ?? task.id,
          task_description: task.title,
          issue: `its agent asks: ${e.question ?? task.question?.text ?? ''}`,
          resolution: `answer it (launchpad answer ${task.id} "…"); the next run resumes its worktree first`,
          attempts: task.attempts,
          session: file?.session_count,
        });
      });
    } else if (e.kind === 'failed') {
      enqueue(`the failure of ${e.taskId}`, async () => {
        const { task, file } = readTask(e.taskId);
        if (!task) return;
        const permanent = isPermanentlyFailed(task);
        const issue = task.error_log.at(-1);
        await toSpec(task, { kind: 'failed', permanent, note: issue });
        if (!permanent) return;
        const ref = specTaskRef(task);
        await append({
          type: 'task_blocked',
          spec: ref?.spec ?? 'harness',
          task_id: ref?.id ?? task.id,
          task_description: task.title,
          issue: issue ?? 'failed (no error recorded)',
          resolution: isDependencyFailure(task)
            ? 'unblocked when the task it depends on completes (launchpad retry on that task)'
            : `fix the cause, then: launchpad retry ${task.id}`,
          attempts: task.attempts,
          session: file?.session_count,
        });
      });
    }
  });

  const finish = async (outcome: RunOutcome) => {
    await queue;
    if (NO_SESSION.has(outcome.reason)) return;
    let file: TaskFile | undefined;
    try {
      file = store.load().file;
    } catch {
      file = undefined;
    }
    const steps = file ? nextSteps(file) : [];
    // A spec's parent tasks not yet imported (outside this session's scope) come next.
    for (const spec of new Set([...(opts.spec ? [opts.spec] : []), ...specsWritten.keys()])) {
      try {
        for (const p of unfinishedParents(readTasksMd(jpaths, spec).tasks)) {
          if (
            !file?.tasks.some((t) => specTaskRef(t)?.spec === spec && specTaskRef(t)?.id.startsWith(`${p.id}.`) && t.status !== 'completed')
          ) {
            steps.push(`Task ${p.id} - ${p.description} (spec ${spec})`);
          }
        }
      } catch {
        // tasks.md unreadable now: the steps from harness-tasks.json alone.
      }
    }
    try {
      if (!started) {
        started = true;
        await sessionStarted(file ? eligibleTasks(file.tasks)[0] : undefined, file);
      }
      await append({
        type: 'session_ended',
        spec: opts.spec ?? (specsWritten.size === 1 ? [...specsWritten.keys()][0] : undefined),
        session: outcome.session,
        summary: outcome.message,
        next_steps: steps,
      });
    } catch (err) {
      logger.warn(`journal: could not record the end of the session: ${(err as Error).message}`);
    }
    for (const [spec, files] of specsWritten) {
      await commitOwnWrites(paths.root, [...files], `Launchpad: progress of spec ${spec} (session ${outcome.session})`, logger);
    }
  };

  return {
    async track(run) {
      let outcome: RunOutcome;
      try {
        outcome = await run;
      } catch (err) {
        await queue;
        throw err;
      }
      await finish(outcome);
      return outcome;
    },
    dispose: () => sub.dispose(),
  };
}

/** What to do next: the tasks a run would start, else what stands in the way. */
export function nextSteps(file: TaskFile, max = 5): string[] {
  const eligible = eligibleTasks(file.tasks);
  if (eligible.length) return eligible.slice(0, max).map(taskLabel);
  const steps: string[] = [];
  for (const t of file.tasks) {
    if (steps.length >= max) break;
    if (t.status === 'awaiting_answer') steps.push(`answer ${t.id}'s question (launchpad answer ${t.id} "…"): ${t.question?.text ?? ''}`);
    else if (t.status === 'awaiting_review')
      steps.push(`review ${t.id}'s change (launchpad review ${t.id}), then approve or request-changes`);
    else if (isPermanentlyFailed(t) && !isDependencyFailure(t))
      steps.push(`fix and retry ${t.id} (launchpad retry ${t.id}): ${t.error_log.at(-1) ?? 'failed'}`);
    else if (t.status === 'pending' && !t.validation?.command?.trim()) steps.push(`give ${t.id} a validation command`);
  }
  return steps;
}

/**
 * The task after a completion: the one the pool pass that ran with it found next, else (no pass
 * ran with it: a concurrent worker, an in-place run) the first of the pool as it is now.
 */
function nextTask(file: TaskFile, e: TaskEvent): Task | undefined {
  if (e.next === null) return undefined;
  if (e.next !== undefined) return taskWithId(file.tasks, e.next);
  return eligibleTasks(file.tasks).find((t) => t.id !== e.taskId);
}

/** `Task 1.2 - Title (spec auth)` for a spec's subtask, `task-003 - Title` otherwise. */
export function taskLabel(task: Task): string {
  const ref = specTaskRef(task);
  return ref ? `Task ${ref.id} - ${task.title} (spec ${ref.spec})` : `${task.id} - ${task.title}`;
}

/** When the task's latest attempt was dispatched (its prompt is written then), for a task a recovery completed. */
function attemptStart(paths: StatePaths, task: Task | undefined): number | undefined {
  if (!task || !task.attempts) return undefined;
  try {
    return statSync(join(paths.runsOf(task.id), `attempt-${task.attempts}`, 'prompt.md')).mtimeMs;
  } catch {
    return undefined;
  }
}
