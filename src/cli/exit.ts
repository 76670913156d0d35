// Exit codes and the one mapping from an error to a code and a message.
import { ExpectedError, isExpectedError } from '../core/expectedErrors';
import { LockHeldError } from '../core/lock';

export const EXIT = {
  /** Done; for `run`: every task completed. */
  OK: 0,
  /** `run` stopped with tasks failed, blocked or not runnable. */
  INCOMPLETE: 1,
  /** Usage, configuration or bad input. */
  USAGE: 2,
  /** Another live session holds the lock. */
  LOCKED: 3,
  /** `run` stopped because session_config.budget_usd was reached (`milestones run` uses 4 and 5). */
  BUDGET: 6,
  /** `run` stopped because an agent hit a usage or rate limit (without --wait-on-limit). */
  USAGE_LIMIT: 7,
} as const;

/** A command line the CLI cannot use: exit 2 with this message. */
export class UsageError extends ExpectedError {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export function exitFor(err: unknown): { code: number; message: string } {
  if (err instanceof LockHeldError) return { code: EXIT.LOCKED, message: err.message };
  if (isExpectedError(err)) return { code: EXIT.USAGE, message: err.message };
  const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
  return { code: EXIT.INCOMPLETE, message: `internal error: ${message}` };
}
