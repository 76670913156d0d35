// A person's stop of one task's agent (`launchpad stop ID`, VS Code's Stop Task): a request file
// .launchpad/stop/<id>.json naming the attempt's agent, which the run driving that attempt takes
// within a poll. Only the agent the request names is ended (a request outlived by its attempt
// stops nothing); the attempt then fails as its agent's failure, with its commits kept.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { replaceFile } from '../atomicFile';
import type { ProcessResult, ProcessSpec } from '../process/runProcess';
import type { StatePaths } from '../statePaths';
import type { TaskTerminal, TerminalFactory } from './types';

/** The reason a stopped attempt's failure records. */
export const STOPPED_BY_PERSON = 'stopped by a person (launchpad stop)';

/** How often a run looks for requests. */
export const STOP_POLL_MS = 500;

interface StopRequest {
  agent: string;
  requested_at: string;
}

export const requestFile = (paths: StatePaths, taskId: string) => join(paths.stopRequests, `${taskId}.json`);

/** Writes the request (replacing an earlier one for the task), whole or not at all. */
export function requestTaskStop(paths: StatePaths, taskId: string, agentId: string): void {
  replaceFile(
    requestFile(paths, taskId),
    JSON.stringify({ agent: agentId, requested_at: new Date().toISOString() } satisfies StopRequest) + '\n',
  );
}

export function readRequest(file: string): StopRequest | undefined {
  try {
    const r = JSON.parse(readFileSync(file, 'utf8')) as Partial<StopRequest>;
    return typeof r.agent === 'string' ? { agent: r.agent, requested_at: String(r.requested_at ?? '') } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The session's side: the front end's terminals, with each task's running agent stoppable, and
 * the requests polled. `driving(taskId)` is the agent id of the attempt the session drives.
 */
export class TaskStops {
  /** The running agent of each task, to end on a request. */
  private readonly running = new Map<string, AbortController>();
  /** The agent id each task's last agent process ran as. */
  private readonly ran = new Map<string, string>();
  /** Agents asked to stop before their process started (`taskId agentId`). */
  private readonly early = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly paths: StatePaths,
    private readonly driving: (taskId: string) => string | undefined,
    private readonly answered: (taskId: string, agentId: string, taken: boolean) => void,
  ) {}

  /** The terminals the session's attempts use: an agent's process can be ended on its own. */
  terminals(inner: TerminalFactory): TerminalFactory {
    return {
      open: (task, cwd) => {
        const terminal = inner.open(task, cwd);
        return { ...terminal, run: (kind, spec) => (kind === 'agent' ? this.runAgent(task.id, terminal, spec) : terminal.run(kind, spec)) };
      },
    };
  }

  private async runAgent(taskId: string, terminal: TaskTerminal, spec: ProcessSpec): Promise<ProcessResult> {
    const agentId = this.driving(taskId);
    const stop = new AbortController();
    if (agentId) {
      this.ran.set(taskId, agentId);
      if (this.early.delete(`${taskId} ${agentId}`)) stop.abort();
    }
    this.running.set(taskId, stop);
    try {
      return await terminal.run('agent', { ...spec, signal: spec.signal ? AbortSignal.any([spec.signal, stop.signal]) : stop.signal });
    } finally {
      if (this.running.get(taskId) === stop) this.running.delete(taskId);
    }
  }

  /** Polls for requests until `close`. */
  start(): void {
    this.timer = setInterval(() => this.poll(), STOP_POLL_MS);
    this.timer.unref();
  }

  /** Takes each request for an attempt this session drives; the others are left to their run. */
  poll(): void {
    let names: string[];
    try {
      names = readdirSync(this.paths.stopRequests).filter((n) => n.endsWith('.json'));
    } catch {
      return;
    }
    for (const name of names) {
      const taskId = name.slice(0, -'.json'.length);
      const file = join(this.paths.stopRequests, name);
      const request = readRequest(file);
      if (!request || this.driving(taskId) !== request.agent) continue;
      rmSync(file, { force: true });
      const agent = this.running.get(taskId);
      // Its agent has not started yet (the worktree is being set up): it ends as it starts.
      const before = !agent && this.ran.get(taskId) !== request.agent;
      if (before) this.early.add(`${taskId} ${request.agent}`);
      agent?.abort();
      this.answered(taskId, request.agent, agent !== undefined || before);
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}
