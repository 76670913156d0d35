// A progress-log filter as a person writes it (`launchpad log --type error --grep …`, or the
// editor's Filter Progress Log): named string values, checked and turned into the core's
// LogFilter. One parser, so the CLI and the extension accept and refuse the same filters.
import { isValidTaskId } from '../ids';
import { InputError } from '../inputError';
import { CATEGORIES, LOG_TYPES } from './logLine';
import type { LogFilter } from './logReader';

/** The filter options by name, as the CLI parses them (a flag without a value is `true`). */
export type LogFilterValues = Partial<Record<'type' | 'category' | 'task' | 'session' | 'grep', string | boolean | undefined>>;

/** A filter value that cannot be used; the message names the option (`--grep: …`). */
export class LogFilterError extends InputError {
  constructor(
    readonly option: keyof LogFilterValues,
    /** What is wrong, without the option's name. */
    readonly reason: string,
  ) {
    super(`--${option}: ${reason}`, { field: `--${option}` });
    this.name = 'LogFilterError';
  }
}

/** Types and categories match case-insensitively; the regex is a JavaScript one, no flags. */
export function parseLogFilter(values: LogFilterValues): LogFilter {
  const filter: LogFilter = {};
  if (typeof values.type === 'string') {
    // A comma list (ERROR,WARN) matches any of its types.
    const types = values.type.split(',').map((one) => {
      const want = one.trim().toLowerCase();
      const type = LOG_TYPES.find((t) => t.toLowerCase() === want);
      if (!type)
        throw new LogFilterError('type', `unknown type "${one.trim()}"; one of ${LOG_TYPES.join(', ')} (or several, comma-separated)`);
      return type;
    });
    filter.type = types.length === 1 ? types[0] : [...new Set(types)];
  }
  if (typeof values.category === 'string') {
    const want = values.category.toLowerCase();
    const category = CATEGORIES.find((c) => c.toLowerCase() === want);
    if (!category) throw new LogFilterError('category', `unknown category "${values.category}"; one of ${CATEGORIES.join(', ')}`);
    filter.category = category;
  }
  if (typeof values.task === 'string') {
    if (!isValidTaskId(values.task)) throw new LogFilterError('task', `"${values.task}" is not a valid task id`);
    filter.taskId = values.task;
  }
  if (values.session !== undefined) filter.session = sessionNumber(values.session);
  if (typeof values.grep === 'string') {
    try {
      filter.regex = new RegExp(values.grep);
    } catch (err) {
      throw new LogFilterError('grep', (err as Error).message);
    }
  }
  return filter;
}

function sessionNumber(value: string | boolean): number {
  const n = Number(value);
  if (typeof value !== 'string' || value.trim() === '' || !Number.isInteger(n) || n < 0) {
    throw new LogFilterError('session', `expected a whole number of at least 0, got "${String(value)}"`);
  }
  return n;
}
