// What the hooks need to know about the task list, as pure functions: the current task, whether
// it has passed its validation, what comes next.
import { parseLogLine } from '../log/logLine';
import type { Task, TaskFile } from '../taskFile/schema';
import { eligibleTasks } from '../tasks/dag';

/** Everything a hook decides from, read once from the state root. */
export interface StateSnapshot {
  root: string;
  /** Undefined when harness-tasks.json cannot be read; `fileError` says why. */
  file: TaskFile | undefined;
  fileError: string | undefined;
  /** The last lines of harness-progress.txt, oldest first. */
  recentLog: string[];
  /** Changes whenever harness-tasks.json or harness-progress.txt does. */
  fingerprint: string;
  /** A live `launchpad run` holding the session lock: it works the list, not this agent. */
  run: { pid: number; command: string } | undefined;
  /** HARNESS_WORKER_ID: in concurrent mode, the tasks this worker claimed are its own. */
  workerId: string | undefined;
}

export interface Focus {
  /** The task in progress (this worker's first), else the next eligible one. */
  current: Task | undefined;
  inProgress: boolean;
  /** Eligible tasks after the current one, in the order they would be taken. */
  next: Task[];
}

export function focusOf(file: TaskFile, workerId: string | undefined): Focus {
  const running = file.tasks.filter((t) => t.status === 'in_progress');
  const mine = (workerId && running.find((t) => t.claimed_by === workerId)) || running[0];
  const eligible = eligibleTasks(file.tasks);
  if (mine) return { current: mine, inProgress: true, next: eligible };
  return { current: eligible[0], inProgress: false, next: eligible.slice(1) };
}

/**
 * Whether the task's validation passed since it last started: its latest line among Starting,
 * DISPATCH, VALIDATE and Completed in the log is a passing VALIDATE or a Completed.
 */
export function validatedSinceStart(taskId: string, log: readonly string[]): boolean {
  for (let i = log.length - 1; i >= 0; i--) {
    const entry = parseLogLine(log[i]!);
    if (!entry || entry.taskId !== taskId) continue;
    if (entry.type === 'VALIDATE') return /\bresult=PASS\b/.test(entry.message);
    if (entry.type === 'Completed') return true;
    if (entry.type === 'Starting' || entry.type === 'DISPATCH') return false;
  }
  return false;
}

/** `task-003 "Add OAuth providers"` */
export function describeTask(task: Task): string {
  return `${task.id} ${JSON.stringify(task.title)}`;
}
