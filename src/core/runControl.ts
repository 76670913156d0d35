// What a client does to a run it did not start (the CLI's `launchpad stop`, VS Code's Stop and
// Stop Task): find the live runs of a state root on this machine, ask one to stop as Ctrl-C does,
// end it at once when it is asked again, or ask it to stop one task's agent. Every signal goes to
// a process whose identity is checked first, so a reused pid is never signalled.
import { readFileSync, rmSync, statSync } from 'node:fs';
import { hostname } from 'node:os';

import { readRequest, requestFile, requestTaskStop } from './controller/taskStops';
import { liveLockHolder } from './lock';
import { isSameProcessAlive } from './processIdentity';
import { EventFileReader, liveSessions, recordsOf, sessionFiles } from './runEvents/reader';
import type { StatePaths } from './statePaths';

export interface LiveRun {
  pid: number;
  identity: string | undefined;
  host: string;
  /** When it started (its session, or its lock). */
  since: string;
  /** Holds the session lock (not a concurrent worker). */
  holdsLock: boolean;
  /** Its event stream, when it writes one. */
  eventsFile: string | undefined;
  session: number | undefined;
}

/** The session lock's holder and the live concurrent workers, each once. */
export function liveRuns(paths: StatePaths): LiveRun[] {
  const holder = liveLockHolder(paths.sessionLock);
  const runs: LiveRun[] = liveSessions(paths).map(({ file, session }) => ({
    pid: session.pid,
    identity: session.identity ?? undefined,
    host: session.host,
    since: session.at,
    holdsLock: holder?.host === session.host && holder.pid === session.pid,
    eventsFile: file,
    session: session.session,
  }));
  if (holder && !runs.some((r) => r.holdsLock)) {
    runs.unshift({
      pid: holder.pid,
      identity: holder.identity,
      host: holder.host,
      since: holder.acquired_at,
      holdsLock: true,
      eventsFile: undefined,
      session: undefined,
    });
  }
  return runs;
}

/** Whether the run has been asked to stop already (its stream says so). */
export function isStopping(run: LiveRun): boolean {
  if (!run.eventsFile) return false;
  return recordsOf(new EventFileReader(run.eventsFile).read(), 'stop').some((r) => r.scope === 'run');
}

export type StopAction =
  /** Asked to stop, as Ctrl-C does: its agents end, their tasks stay in progress for the next run. */
  | 'asked'
  /** It was stopping already: ended at once, as a second Ctrl-C does. */
  | 'ended'
  /** It did not end when asked again: its process (group) was killed. */
  | 'killed'
  /** Another machine's run: it cannot be signalled from here. */
  | 'elsewhere';

/** How long a run asked a second time has to exit before it is killed. */
const AT_ONCE_MS = 5000;

/**
 * Stops `run`: the first time it is asked to stop (SIGINT), the second time (its stream records
 * the first) it ends at once (SIGINT again, which the CLI takes as a second Ctrl-C; SIGKILL of its
 * process group if it is still there after five seconds).
 */
export async function stopRun(run: LiveRun): Promise<StopAction> {
  if (run.host !== hostname()) return 'elsewhere';
  const stopping = isStopping(run);
  if (!signal(run, 'SIGINT')) return 'ended';
  if (!stopping) return 'asked';
  for (const end = Date.now() + AT_ONCE_MS; Date.now() < end; await sleep(100)) if (!alive(run)) return 'ended';
  if (!alive(run)) return 'ended';
  // Its process group when it leads one (a run VS Code started does), else the process alone.
  const group = processGroup(run.pid) === run.pid;
  try {
    process.kill(group ? -run.pid : run.pid, 'SIGKILL');
  } catch {
    // Gone meanwhile.
  }
  return 'killed';
}

function alive(run: LiveRun): boolean {
  return isSameProcessAlive(run.pid, run.identity);
}

/** Signals the run's process if it is still the same process; false when it is gone. */
function signal(run: LiveRun, sig: NodeJS.Signals): boolean {
  if (!alive(run)) return false;
  try {
    process.kill(run.pid, sig);
    return true;
  } catch {
    return false;
  }
}

/** The process group of a pid (Linux /proc; elsewhere undefined, and only the process is killed). */
function processGroup(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return undefined;
  }
}

export type StopTaskAnswer =
  /** Its agent is being ended; the attempt fails as "stopped by a person". */
  | 'stopped'
  /** Its agent had ended (the attempt is validating or merging): the attempt goes on. */
  | 'agent-ended'
  /** No run on this machine drives that attempt: the request was withdrawn. */
  | 'not-taken';

/**
 * Asks the run driving agent `agentId`'s attempt of `taskId` to stop that agent, and waits (up to
 * `timeoutMs`) for the run's answer in its event stream.
 */
export async function stopTask(paths: StatePaths, taskId: string, agentId: string, timeoutMs = 10_000): Promise<StopTaskAnswer> {
  const asked = Date.now();
  requestTaskStop(paths, taskId, agentId);
  const readers = new Map<string, EventFileReader>();
  for (const end = asked + timeoutMs; ; await sleep(100)) {
    // The answer is in the stream of the run that took it, which may end right after: every
    // session file written since the request is read (on from where it was read last).
    for (const { file } of sessionFiles(paths)) {
      if (!readers.has(file) && (statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0) < asked - 1000) continue;
      if (!readers.has(file)) readers.set(file, new EventFileReader(file));
      const answer = recordsOf(readers.get(file)!.read(), 'stop').findLast(
        (r) => r.scope === 'task' && r.task === taskId && r.agent === agentId,
      );
      if (answer?.scope === 'task') return answer.taken ? 'stopped' : 'agent-ended';
    }
    if (Date.now() >= end) break;
  }
  const file = requestFile(paths, taskId);
  if (readRequest(file)?.agent === agentId) rmSync(file, { force: true });
  return 'not-taken';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
