// Exit codes and the one mapping from an error to a code and a message.
import { ExpectedError, isExpectedError } from '../core/expectedErrors';
import { InputError } from '../core/inputError';
import { LockHeldError } from '../core/lock';
import { TASKS_FILE } from '../core/statePaths';
import { TaskFileError } from '../core/taskFile/parse';
import { TaskFileMissingError } from '../core/taskFile/read';
import { QuestionCancelled } from './io';

export const EXIT = {
  /** Done; for `run`: every task completed. */
  OK: 0,
  /** `run` stopped with tasks failed, blocked or not runnable. */
  INCOMPLETE: 1,
  /** Usage, configuration or bad input. */
  USAGE: 2,
  /** Another live session holds the lock. */
  LOCKED: 3,
  /** A question was answered with Ctrl-C or Ctrl-D: nothing was changed (128 + SIGINT, as shells do). */
  CANCELLED: 130,
  /** `run` stopped because session_config.budget_usd was reached (`milestones run` uses 4 and 5). */
  BUDGET: 6,
  /** `run` stopped because an agent hit a usage or rate limit (without --wait-on-limit). */
  USAGE_LIMIT: 7,
  /** `run` ended with the work left waiting only for answers to agents' questions (`launchpad answer`). */
  AWAITING_ANSWERS: 8,
} as const;

/** A command line the CLI cannot use: exit 2 with this message. */
export class UsageError extends ExpectedError {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** No harness-tasks.json here or above (and no --dir or $HARNESS_STATE_ROOT). */
export class HarnessNotFoundError extends UsageError {
  readonly file = TASKS_FILE;

  constructor(cwd: string) {
    super(`${TASKS_FILE}: not found in ${cwd} or any parent directory; run "launchpad init" first, or pass --dir`);
    this.name = 'HarnessNotFoundError';
  }
}

export function exitFor(err: unknown): { code: number; message: string } {
  if (err instanceof QuestionCancelled) return { code: EXIT.CANCELLED, message: 'cancelled; nothing was changed' };
  if (err instanceof LockHeldError) return { code: EXIT.LOCKED, message: err.message };
  if (isExpectedError(err)) return { code: EXIT.USAGE, message: err.message };
  const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
  return { code: EXIT.INCOMPLETE, message: `internal error: ${message}` };
}

/**
 * An error as `--json` prints it on stdout: `{"error": {code, message, file, field}}`, file and
 * field null when the error is not about one.
 */
export function errorJson(
  err: unknown,
  failure = exitFor(err),
): { code: number; message: string; file: string | null; field: string | null } {
  let file: string | null = null;
  let field: string | null = null;
  if (err instanceof TaskFileError) {
    file = err.file;
    field = err.field || null;
  } else if (err instanceof TaskFileMissingError) {
    file = err.path;
  } else if (err instanceof InputError) {
    field = err.field ?? null;
  } else if (err instanceof HarnessNotFoundError) {
    file = err.file;
  }
  return { code: failure.code, message: failure.message, file, field };
}
