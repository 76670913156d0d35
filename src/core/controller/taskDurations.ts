// How long a task's attempt takes, for the order of the eligible pool (dag.poolOrder weighs the
// chain of work a task holds up by these): a task's last earlier attempt, read from its attempt
// folder when the session starts, then each attempt this session runs, from its dispatch to its
// recorded result.
import type { StatePaths } from '../statePaths';
import type { Task } from '../taskFile/schema';

export class TaskDurations {
  private readonly known = new Map<string, number>();
  private readonly started = new Map<string, number>();

  /** What the attempt folders say of every task that is not completed yet. */
  static fromHistory(paths: StatePaths, tasks: readonly Task[]): TaskDurations {
    const d = new TaskDurations();
    const withAttempts = new Set(paths.tasksWithAttempts());
    for (const t of tasks) {
      if (t.status === 'completed' || !withAttempts.has(t.id)) continue;
      const span = paths.attemptsOf(t.id).at(-1)?.span();
      if (span && span.end > span.start) d.known.set(t.id, span.end - span.start);
    }
    return d;
  }

  /** Estimated ms per task id: what dag.eligibleTasks takes. */
  get estimates(): ReadonlyMap<string, number> {
    return this.known;
  }

  dispatched(taskId: string, now = Date.now()): void {
    this.started.set(taskId, now);
  }

  /** The attempt's result is recorded: it took from its dispatch to now. */
  ended(taskId: string, now = Date.now()): void {
    const start = this.started.get(taskId);
    this.started.delete(taskId);
    if (start !== undefined && now > start) this.known.set(taskId, now - start);
  }
}
