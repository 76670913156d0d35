// The progress log grammar, one event per line:
//   [ISO-8601 UTC timestamp] [SESSION-N] TYPE [task-id]? [CATEGORY]? message
// Pure functions, tested on literal strings.

export const LOG_TYPES = [
  'INIT',
  'LOCK',
  'BATCH',
  'DISPATCH',
  'AGENT_DONE',
  'VALIDATE',
  'MERGE',
  'DISCARD',
  'Completed',
  'ERROR',
  'ROLLBACK',
  'RECOVERY',
  'STATS',
  'WARN',
  'Starting',
  'CHECKPOINT',
  'QUESTION',
  'REVIEW',
] as const;
export type LogType = (typeof LOG_TYPES)[number];

export const CATEGORIES = [
  'ENV_SETUP',
  'CONFIG',
  'TASK_EXEC',
  'TEST_FAIL',
  'AGENT_FAIL',
  'MERGE_CONFLICT',
  'TIMEOUT',
  'DEPENDENCY',
  'SESSION_TIMEOUT',
  'INTEGRATION',
] as const;
export type Category = (typeof CATEGORIES)[number];

/** What a writer appends: the controller and the edit commands build these. */
export interface LogEvent {
  type: LogType;
  taskId?: string | undefined;
  category?: Category | undefined;
  message: string;
}

/** One line as written and as parsed: an event with its time and session. */
export interface LogEntry extends LogEvent {
  timestamp: string;
  session: number;
}

const typeSet = new Set<string>(LOG_TYPES);
const categorySet = new Set<string>(CATEGORIES);

export function isLogType(value: string): value is LogType {
  return typeSet.has(value);
}
export function isCategory(value: string): value is Category {
  return categorySet.has(value);
}

/** UTC, seconds precision: 2025-07-01T10:00:00Z. */
export function logTimestamp(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A message never spans lines: CR and LF become the two characters `\r` and `\n`. */
export function escapeMessage(message: string): string {
  return message.replace(/\r/g, '\\r').replace(/\n/g, '\\n');
}

export function formatLogLine(entry: LogEntry): string {
  let line = `[${entry.timestamp}] [SESSION-${entry.session}] ${entry.type}`;
  if (entry.taskId) line += ` [${entry.taskId}]`;
  if (entry.category) line += ` [${entry.category}]`;
  if (entry.message) line += ` ${escapeMessage(entry.message)}`;
  return line;
}

// N is written as formatLogLine writes it (no leading zeros), so a filter for session 1 can look
// for the literal `[SESSION-1] ` and agree with this parser on every line.
const LINE_RE = /^\[([^\]]+)\] \[SESSION-(0|[1-9]\d*)\] (\S+)(?: \[([A-Za-z0-9][A-Za-z0-9._-]{0,63})\])?(?: \[([A-Z_]+)\])?(?: (.*))?$/;

/** Parses one line (without its newline); undefined when it is not in the grammar. */
export function parseLogLine(line: string): LogEntry | undefined {
  const m = LINE_RE.exec(line.endsWith('\r') ? line.slice(0, -1) : line);
  if (!m || !isLogType(m[3]!)) return undefined;
  let taskId: string | undefined = m[4];
  let category: string | undefined = m[5];
  let message = m[6] ?? '';
  // `ERROR [ENV_SETUP] …` has a category but no task: the first bracket was the category.
  if (taskId && !category && isCategory(taskId)) {
    category = taskId;
    taskId = undefined;
  }
  if (category && !isCategory(category)) {
    message = `[${category}]${message ? ' ' + message : ''}`;
    category = undefined;
  }
  return {
    timestamp: m[1]!,
    session: Number(m[2]),
    type: m[3] as LogType,
    taskId,
    category: category as Category | undefined,
    message,
  };
}
