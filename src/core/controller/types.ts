// What the controller exposes to the process running it: its outcome, its events, and the
// terminal seam through which every agent, validation and cleanup runs (child processes; the
// CLI's -v tees their output).
import type { ProcessResult, ProcessSpec } from '../process/runProcess';
import type { Stats } from '../tasks/stats';

export type StopReason =
  | 'all-completed'
  | 'nothing-runnable'
  | 'max-tasks-per-session'
  | 'max-sessions'
  | 'stopped'
  | 'crash-loop'
  | 'state-unrecoverable'
  | 'config-error'
  | 'environment'
  | 'controller-error'
  | 'budget'
  | 'usage-limit'
  /** Nothing left can run, and tasks await a person's answer to their agent's question. */
  | 'awaiting-answers';

export interface RunOutcome {
  /**
   * Exit codes: 0 every task completed, 1 stopped with work left, 2 configuration, bad input or
   * the machine's failure (environment), 6 session_config.budget_usd reached, 7 an agent's usage
   * or rate limit (without run --wait-on-limit), 8 the work left waits for answers to agents' questions.
   */
  exitCode: 0 | 1 | 2 | 6 | 7 | 8;
  reason: StopReason;
  /** One line for a person. */
  message: string;
  session: number;
  stats: Stats;
  /** What a person should know or do beyond the message (a file to restore, a fault named), one line each. */
  notes?: string[];
}

export type ProcessKind = 'setup' | 'agent' | 'validation' | 'cleanup' | 'health-check';

/** One task's view while it runs: everything it starts goes through here, in order. */
export interface TaskTerminal {
  run(kind: ProcessKind, spec: ProcessSpec): Promise<ProcessResult>;
  /** A controller message (dispatch, verdict, merge) shown between process outputs. */
  write(text: string): void;
  /** The task is done with this worktree (merged, discarded or left for recovery). */
  close(outcome: 'completed' | 'failed' | 'interrupted'): void;
}

export interface TerminalFactory {
  open(task: { id: string; title: string }, cwd: string): TaskTerminal;
}

export interface TaskEvent {
  taskId: string;
  kind: 'dispatched' | 'agent-done' | 'validated' | 'completed' | 'failed' | 'interrupted' | 'checkpoint' | 'question' | 'review';
  /**
   * A completion whose transaction ran the pool pass: the task that pass found next, first in
   * the pool's order among those it did not start (null: none). Absent when no pass ran with it.
   */
  next?: string | null;
  /** A checkpoint's step, as the agent reported it. */
  checkpoint?: { step: number; total: number; description: string };
  /** The question its agent asked: the task awaits an answer. */
  question?: string;
}
