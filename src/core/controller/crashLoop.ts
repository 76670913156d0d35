// A crash (the controller killed, the machine rebooted) is never charged to the tasks it
// interrupted: they are resumed as the same attempt. What ends a crash loop instead is this rule,
// per session: when the last CRASH_LOOP_LIMIT sessions each ended in a crash without any progress,
// the run stops before dispatching anything and says so. The log is the record: a session is the
// lines from its `LOCK acquired` on; one that ended has its STATS line; progress is a line of a
// task's work done (AGENT_DONE, CHECKPOINT, VALIDATE, MERGE, Completed) or, for an attempt the next
// session resumed, different work found by the next session's recovery than by its own.
import { parseLogLine } from '../log/logLine';
import { tailLog } from '../log/logReader';

/** Sessions in a row that ended in a crash without progress before a run stops. */
export const CRASH_LOOP_LIMIT = 3;

const PROGRESS = new Set(['AGENT_DONE', 'CHECKPOINT', 'VALIDATE', 'MERGE', 'Completed']);

interface LoggedSession {
  /** Its SESSION-N. */
  number: number;
  lines: string[];
}

/**
 * The sessions before the current one (which has logged its recovery) that ended in a crash
 * without progress, newest first, counted back to the first that ended or made progress; at
 * most `limit`.
 */
export function crashesWithoutProgress(logFile: string, limit = CRASH_LOOP_LIMIT): number[] {
  for (let count = 512; ; count *= 4) {
    const lines = tailLog(logFile, count);
    const sessions = splitSessions(lines);
    const whole = lines.length < count ? sessions : sessions.slice(1); // the first may be cut
    const found = streak(whole, limit);
    if (found.complete || lines.length < count) return found.crashed;
  }
}

function splitSessions(lines: string[]): LoggedSession[] {
  const sessions: LoggedSession[] = [];
  for (const line of lines) {
    const e = parseLogLine(line);
    if (!e) continue;
    if (e.type === 'LOCK' && e.message.startsWith('acquired')) sessions.push({ number: e.session, lines: [] });
    sessions.at(-1)?.lines.push(line);
  }
  return sessions;
}

/** The streak read from whole sessions (oldest first, the current one last). */
function streak(sessions: LoggedSession[], limit: number): { crashed: number[]; complete: boolean } {
  const crashed: number[] = [];
  for (let i = sessions.length - 2; i >= 0; i--) {
    const s = sessions[i]!;
    if (ended(s) || madeProgress(s, sessions[i + 1]!)) return { crashed, complete: true };
    crashed.push(s.number);
    if (crashed.length >= limit) return { crashed, complete: true };
  }
  return { crashed, complete: false };
}

function ended(s: LoggedSession): boolean {
  return s.lines.some((l) => parseLogLine(l)?.type === 'STATS');
}

function madeProgress(s: LoggedSession, next: LoggedSession): boolean {
  // A task's work: the integration check of the base (a VALIDATE line of no task) is not progress.
  if (
    s.lines.some((l) => {
      const e = parseLogLine(l);
      return !!e?.taskId && PROGRESS.has(e.type);
    })
  )
    return true;
  // What the next session's recovery found of each attempt it resumed, against what this one's found.
  const before = resumed(s);
  for (const [task, found] of resumed(next)) if (before.get(task) !== found) return true;
  return false;
}

/** Each task a session's recovery resumed, with what it found left ("N commit(s), …"). */
function resumed(s: LoggedSession): Map<string, string> {
  const found = new Map<string, string>();
  for (const line of s.lines) {
    const e = parseLogLine(line);
    const left =
      e?.type === 'RECOVERY' && e.taskId ? /action="resumed agent" reason="interrupted without a verdict: ([^"]*)"/.exec(e.message) : null;
    if (left) found.set(e!.taskId!, left[1]!);
  }
  return found;
}
