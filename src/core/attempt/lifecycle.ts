// The life of one attempt, the same in every way of running (a worktree per task, concurrent
// workers, in place, a queue worker): its steps and the mark each leaves on disk, the fence every
// effect of the attempt carries, and the recovery table that turns the last mark a dead session
// left into one action. Each executor drives these steps; recovery reads the marks back.
//
//   claimed ─► prepared ─► verdict ─► work-committed ─► merged ─► ended
//      │           │          │              │                      ▲
//      └───────────┴──────────┴──────────────┴──────────────────────┘  (failed, given back, or taken over)
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { linkedGitDir } from '../git/git';
import type { Task, TaskFile } from '../taskFile/schema';
import { taskWithId } from '../tasks/taskIndex';

/** The steps of an attempt, in order. */
export type AttemptStep = 'claimed' | 'prepared' | 'verdict' | 'work-committed' | 'merged' | 'ended';

/** Each step, the mark it leaves (what recovery reads), and who writes it. */
export const ATTEMPT_STEPS: ReadonlyArray<{ step: AttemptStep; mark: string; writtenBy: string }> = [
  {
    step: 'claimed',
    mark: 'harness-tasks.json: in_progress, agent_id, started_at_commit (a concurrent claim adds claimed_by, claim_generation, its lease; a queue attempt its job `<id>.<agent_id>`)',
    writtenBy: 'transitions.dispatchTask / resumeTask',
  },
  {
    step: 'prepared',
    mark: "the worktree on harness-<id> with its owner mark (`launchpad-attempt` in the worktree's git admin folder: agent id and claim generation); the attempt folder with its `agent` file",
    writtenBy: 'taskRun.createWorktree, StatePaths.createAttempt',
  },
  {
    step: 'verdict',
    mark: "the attempt folder's `verdict` (success, fail with category and reason, or the agent's question), flushed before anything else happens",
    writtenBy: 'AttemptPaths.recordVerdict',
  },
  {
    step: 'work-committed',
    mark: "the attempt folder's `work-committed`: the agent's leftovers are committed; what the worktree holds after it is the validation's",
    writtenBy: 'AttemptPaths.markWorkCommitted',
  },
  { step: 'merged', mark: "a `Merge [<id>] …` commit on the base branch's first-parent line", writtenBy: 'merge.mergeTask' },
  {
    step: 'ended',
    mark: 'harness-tasks.json: completed, failed, pending, or awaiting_answer with the question (its worktree kept), the claim released',
    writtenBy: 'transitions.completeTask / failTask / restartTask / undoDispatch / askQuestion',
  },
];

/**
 * Who an effect of an attempt acts for: the task, the agent that runs the attempt and, for a
 * concurrent worker, its claim's generation. An effect lands only while the task's own record
 * still names this attempt (holdsFence); a stale actor's effect is refused and logged.
 */
export interface AttemptFence {
  taskId: string;
  agentId: string | null;
  /** A concurrent worker's claim generation; undefined where one controller owns every claim. */
  generation?: number | undefined;
}

/** Whether the task's record still names this attempt: in progress, same agent, same claim. */
export function holdsFence(task: Task | undefined, fence: AttemptFence): boolean {
  if (!task || task.status !== 'in_progress') return false;
  if ((task.agent_id ?? null) !== fence.agentId) return false;
  return fence.generation === undefined || (task.claim_generation ?? 0) === fence.generation;
}

/** An effect of an attempt that is no longer the task's: refused, never applied. */
export class StaleAttemptError extends Error {
  constructor(
    readonly fence: AttemptFence,
    now: Task | undefined,
  ) {
    const was = fence.agentId ?? 'no agent';
    const is = now
      ? `${now.status.replace('_', ' ')}${now.agent_id ? `, attempt of ${now.agent_id}` : ''}${now.claimed_by ? ` claimed by ${now.claimed_by}` : ''}`
      : 'no longer in harness-tasks.json';
    super(`the attempt of ${was} on ${fence.taskId} is no longer the task's (it is ${is})`);
    this.name = 'StaleAttemptError';
  }
}

/** Inside a transaction, before an attempt's effect on the task is written. */
export function assertFence(file: TaskFile, fence: AttemptFence): void {
  const task = taskWithId(file.tasks, fence.taskId);
  if (!holdsFence(task, fence)) throw new StaleAttemptError(fence, task);
}

// The worktree's owner mark: which attempt a worktree at a task's path belongs to. Claims of one
// task share that path, so a removal checks the mark and leaves another attempt's worktree alone.
const OWNER_MARK = 'launchpad-attempt';

/** Marks the worktree at `path` as the attempt's. */
export function markWorktreeOwner(path: string, fence: AttemptFence): void {
  const admin = linkedGitDir(path);
  if (admin) writeFileSync(join(admin, OWNER_MARK), `${fence.agentId ?? ''} ${fence.generation ?? ''}\n`);
}

/** The attempt the worktree at `path` belongs to; undefined when it has no mark (or no worktree). */
export function worktreeOwner(path: string): { agentId: string | null; generation?: number } | undefined {
  const admin = linkedGitDir(path);
  if (!admin) return undefined;
  let text: string;
  try {
    text = readFileSync(join(admin, OWNER_MARK), 'utf8');
  } catch {
    return undefined;
  }
  const [agent = '', generation = ''] = text.trim().split(' ');
  return { agentId: agent || null, ...(generation ? { generation: Number(generation) } : {}) };
}

/** Whether the worktree at `path` may be removed by the attempt `fence`: its own, or unmarked. */
export function mayRemoveWorktree(path: string, fence: AttemptFence): boolean {
  const owner = worktreeOwner(path);
  if (!owner) return true;
  return (
    owner.agentId === fence.agentId &&
    (fence.generation === undefined || owner.generation === undefined || owner.generation === fence.generation)
  );
}

/** What recovery finds of an attempt a dead (or stopped) session left in progress. */
export interface AttemptFacts {
  /** The verdict its agent recorded; 'none' when it was interrupted before one. */
  verdict: 'success' | 'fail' | 'question' | 'none';
  /** Its work was committed (`work-committed`): only the validation and the merge were left. */
  workCommitted: boolean;
  /** Its branch is merged into the base branch already. */
  merged: boolean;
  /** Where its work is: a worktree (in place: the main working tree), only its branch, or neither. */
  where: 'worktree' | 'branch' | 'none';
  /** The commit it started from still exists (a person may have rewritten the branch meanwhile). */
  baseExists: boolean;
  /** Any commit beyond its base, uncommitted change or checkpoint of its agent. */
  progress: boolean;
}

export type RecoveryAction =
  /** The agent's own failure: recorded with its category, reason and output (charged: it is the agent's). */
  | 'record-failure'
  /** Merged already: completed. */
  | 'complete'
  /** Its base is gone: nothing runs, nothing is charged, the session stops and says what to do. */
  | 'stop-base-gone'
  /** The agent said success: its work is validated, then merged or discarded. */
  | 'validate-and-merge'
  /** Nothing to continue from: back to pending, the attempt given back, its worktree removed first. */
  | 'start-afresh'
  /** Interrupted with progress: a new agent continues the same attempt in the work it left. */
  | 'resume'
  /** The agent asked a question: the task awaits an answer, its worktree kept, the attempt given back. */
  | 'await-answer';

export interface RecoveryRow {
  /** The condition, in words (ARCHITECTURE.md and docs/lifecycle.md show the table). */
  when: string;
  applies: (f: AttemptFacts) => boolean;
  action: RecoveryAction;
  /**
   * What becomes of the attempt's count (taken once, at its dispatch): kept, or given back. No
   * row counts another attempt: a resumed agent continues the same one.
   */
  attempt: 'kept' | 'given back';
}

/**
 * The recovery table: the first row that applies decides. A crash (of the controller, a worker,
 * the machine) is never the task's fault: an interrupted attempt is resumed as the same attempt,
 * or given back. Crash loops are stopped per session (crashLoop.ts), not by charging tasks.
 */
export const RECOVERY_TABLE: readonly RecoveryRow[] = [
  { when: 'its agent recorded a failure', applies: (f) => f.verdict === 'fail', action: 'record-failure', attempt: 'kept' },
  { when: 'its branch is merged into the base branch', applies: (f) => f.merged, action: 'complete', attempt: 'kept' },
  {
    when: 'neither its worktree nor its branch is left',
    applies: (f) => f.where === 'none',
    action: 'start-afresh',
    attempt: 'given back',
  },
  { when: 'the commit it started from is gone', applies: (f) => !f.baseExists, action: 'stop-base-gone', attempt: 'given back' },
  { when: 'its agent asked a question', applies: (f) => f.verdict === 'question', action: 'await-answer', attempt: 'given back' },
  {
    when: 'its agent recorded success, or its work was committed',
    applies: (f) => f.verdict === 'success' || f.workCommitted,
    action: 'validate-and-merge',
    attempt: 'kept',
  },
  { when: 'interrupted before any progress', applies: (f) => !f.progress, action: 'start-afresh', attempt: 'given back' },
  { when: 'interrupted after some progress', applies: () => true, action: 'resume', attempt: 'kept' },
];

/** The row of the recovery table that decides for these facts. */
export function recoveryRow(facts: AttemptFacts): RecoveryRow {
  return RECOVERY_TABLE.find((row) => row.applies(facts))!;
}
