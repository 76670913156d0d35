// One hook call, from the agent's JSON on stdin to what goes on stdout. Without the marker
// .harness-active in the state root (found from the input's cwd, or HARNESS_STATE_ROOT) the
// hooks do nothing at all: no output, no file read beyond finding the marker. Inside an agent
// started by `launchpad run` (LAUNCHPAD_TASK_ID is set) they do nothing either: the controller
// drives that agent.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { liveLockHolder } from '../lock';
import { tailLog } from '../log/logReader';
import { findStateRoot, StatePaths } from '../statePaths';
import { StateStore } from '../taskFile/store';
import { AGENT_HOOKS, type HookAgent, type HookEvent } from './agents';
import { parseHookInput } from './input';
import { sessionStartContext } from './sessionContext';
import type { StateSnapshot } from './stateView';
import { decideStop, type StopMemory } from './stopDecision';

export interface HookCall {
  agent: HookAgent;
  event: HookEvent;
  /** The agent's JSON input. */
  stdin: string;
  /** Where the hook process runs, used when the input names no cwd. */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** --dir, when given. */
  dir?: string | undefined;
}

export interface HookResult {
  /** Empty: the agent carries on as if there were no hook. */
  stdout: string;
  /** Why, for a person debugging hooks (stderr). */
  note: string;
}

/** How much of the log is read to tell whether the current task has passed its validation. */
const LOG_LINES_READ = 200;

export function runHook(call: HookCall): HookResult {
  if (call.env.LAUNCHPAD_TASK_ID) return { stdout: '', note: 'inside an agent of launchpad run: nothing to do' };
  const input = parseHookInput(call.stdin);
  const root = findStateRoot(input.cwd ?? call.cwd, call.dir, call.env);
  if (!root) return { stdout: '', note: 'no harness-tasks.json here or above' };
  const paths = new StatePaths(root);
  if (!existsSync(paths.activeMarker)) return { stdout: '', note: `no ${paths.activeMarker}: hooks are off` };

  const snap = readSnapshot(paths, call.env);
  const spec = AGENT_HOOKS[call.agent];
  if (call.event === 'session-start')
    return { stdout: spec.contextOutput(sessionStartContext(snap, input.source)) + '\n', note: 'context given' };

  const memoryFile = join(memoryDir(), `${hash(paths.root)}-${call.agent}-${hash(input.sessionId ?? 'no-session')}.json`);
  const outcome = decideStop(input, snap, readMemory(memoryFile));
  writeMemory(memoryFile, outcome.memory);
  return outcome.decision.kind === 'continue'
    ? { stdout: spec.continueOutput(outcome.decision.reason) + '\n', note: 'asked to continue' }
    : { stdout: '', note: `stop allowed: ${outcome.decision.why}` };
}

export function readSnapshot(paths: StatePaths, env: NodeJS.ProcessEnv): StateSnapshot {
  let text = '';
  let file: StateSnapshot['file'];
  let fileError: string | undefined;
  try {
    const loaded = new StateStore(paths).load();
    ({ text, file } = loaded);
  } catch (err) {
    fileError = (err as Error).message;
    try {
      text = readFileSync(paths.tasks, 'utf8');
    } catch {
      // Missing or unreadable: the error says so.
    }
  }
  let progressBytes = 0;
  try {
    progressBytes = statSync(paths.progress).size;
  } catch {
    // No log yet.
  }
  const holder = liveLockHolder(paths.sessionLock);
  return {
    root: paths.root,
    file,
    fileError,
    recentLog: tailLog(paths.progress, LOG_LINES_READ),
    fingerprint: `${hash(text)}:${progressBytes}`,
    run: holder ? { pid: holder.pid, command: holder.command } : undefined,
    workerId: env.HARNESS_WORKER_ID || undefined,
  };
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

function readMemory(file: string): StopMemory | undefined {
  try {
    const m = JSON.parse(readFileSync(file, 'utf8')) as StopMemory;
    return typeof m.fingerprint === 'string' ? m : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where the Stop hook remembers its last refusal per agent session: outside the repository, so
 * the agent never sees (or commits) it; per user, so one user's files never block another's.
 */
function memoryDir(): string {
  return join(tmpdir(), `launchpad-hooks-${process.getuid?.() ?? 'user'}`);
}

/** Memories of sessions that ended while refused are dropped after this long. */
const MEMORY_MAX_AGE_MS = 24 * 3600_000;

function writeMemory(file: string, memory: StopMemory | null): void {
  if (!memory) {
    rmSync(file, { force: true });
    return;
  }
  const dir = join(file, '..');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(file, JSON.stringify(memory) + '\n');
  for (const name of readdirSync(dir)) {
    const other = join(dir, name);
    try {
      if (Date.now() - statSync(other).mtimeMs > MEMORY_MAX_AGE_MS) rmSync(other, { force: true });
    } catch {
      // Gone meanwhile.
    }
  }
}
