// An error_log entry, `[CATEGORY] reason`: what a person reads in the task file, the hover and
// the next attempt's prompt. Its one formatter and its one parser.
import { type Category, isCategory } from '../log/logLine';

export interface ErrorEntry {
  category: Category;
  reason: string;
}

/** The longest reason a failure keeps in its entry (characters); the full output is in error_tail. */
export const MAX_REASON_CHARS = 500;

export function formatErrorEntry(category: Category, reason: string): string {
  return `[${category}] ${reason}`;
}

/** An entry's category and reason; undefined when it does not start with a known `[CATEGORY]`. */
export function parseErrorEntry(entry: string | undefined): ErrorEntry | undefined {
  const m = entry ? /^\[([A-Z_]+)\] ?([\s\S]*)$/.exec(entry) : null;
  return m && isCategory(m[1]!) ? { category: m[1], reason: m[2]! } : undefined;
}

/** A failure's reason as an entry holds it: one line, bounded. */
export function oneLineReason(reason: string): string {
  return reason
    .replace(/\s*\n\s*/g, ' ')
    .trim()
    .slice(0, MAX_REASON_CHARS);
}

/**
 * The reason a task fails with once its agents' reported cost reached session_config.max_cost_usd
 * (`[TASK_EXEC] cost limit reached: …`): a failure no retry of the controller's can fix.
 */
export const COST_LIMIT_REASON = 'cost limit reached';

export function isCostLimitEntry(entry: string | undefined): boolean {
  const e = parseErrorEntry(entry);
  return e?.category === 'TASK_EXEC' && e.reason.startsWith(COST_LIMIT_REASON);
}
