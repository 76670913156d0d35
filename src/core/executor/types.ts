// The executor seam: who runs an attempt. The controller chooses what is eligible, dispatches
// (a transition), and merges; an executor runs the attempt in between — a worktree at the base
// commit, its set-up, the agent, the validation — and ends it (merged through the merge queue,
// discarded, or left in progress for recovery). The controller does not know which one runs its
// attempts:
//   local  this machine's processes (taskRun.ts), shown through the front end's TerminalFactory:
//          child processes in the CLI, one VS Code terminal per task in the extension;
//   queue  workers on other machines through BullMQ on Redis (src/core/queue/executor.ts, loaded
//          by the CLI only for run --executor queue).
import type { TaskEnd } from '../controller/merge';
import type { MergeQueue } from '../controller/mergeQueue';
import type { Session } from '../controller/session';
import type { ClaimedTask, Resume } from '../controller/taskRun';
import type { Task } from '../taskFile/schema';

/**
 * `claimed_by` of an attempt published to a queue: `queue` until a worker takes it, then
 * `queue:<worker id>`. Such an attempt runs on another machine and goes on when this controller
 * stops: the next run follows its job, so a stop never gives it back.
 */
export const QUEUE_RUNNER = 'queue';

export function runsOnQueue(task: Pick<Task, 'claimed_by'>): boolean {
  return task.claimed_by === QUEUE_RUNNER || !!task.claimed_by?.startsWith(`${QUEUE_RUNNER}:`);
}

export interface RunningAttempt {
  task: Task;
  end: Promise<TaskEnd>;
}

export interface AttemptExecutor {
  readonly name: string;
  /**
   * One attempt of `task`, from its dispatch to its end. `resume`: recovery chose to continue an
   * interrupted one; `claimed`: the run loop recorded the dispatch already (with its pool).
   */
  run(s: Session, task: Task, merges: MergeQueue, resume?: Resume, claimed?: ClaimedTask): Promise<TaskEnd>;
  /**
   * At a session's start, before recovery: in-progress attempts that are still running elsewhere
   * (dispatched by a controller that died) and that this executor follows to their end. Recovery
   * leaves them alone.
   */
  adopt?(s: Session, merges: MergeQueue): Promise<RunningAttempt[]>;
}
