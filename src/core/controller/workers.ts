// Concurrent mode: several `launchpad run` processes (workers) work one task DAG. There is no
// session lock; the state lock guards each transaction. A worker owns a task through its claim
// (claimed_by, lease_expires_at, claim_generation — see tasks/transitions.ts): a heartbeat
// renews its leases, a lapsed lease is taken over by any worker, and before a worker writes or
// merges its task it checks under the lock that its claim generation is still the task's (the
// fencing check). Merges into the base branch take a repository-level merge lock, so they stay
// one at a time across workers.
import { hostname } from 'node:os';
import { join } from 'node:path';

import { acquireLock } from '../lock';
import type { TaskFile } from '../taskFile/schema';
import { claimLapsed, ClaimLostError, type ClaimToken, renewLease, takeOverClaim, type WorkerLease } from '../tasks/transitions';
import type { TaskEnd } from './merge';
import { abortInterruptedMerge } from './recovery';
import type { Session } from './session';

export { DEFAULT_LEASE_SECONDS } from '../taskFile/schema';
/** A merge waits this long for another worker's merge before giving up (the task stays claimed). */
const MERGE_LOCK_WAIT_MS = 30 * 60_000;

/** The worker id: HARNESS_WORKER_ID, else host:pid (stable for the process's life). */
export function workerIdFrom(env: NodeJS.ProcessEnv): string {
  const id = env.HARNESS_WORKER_ID?.trim();
  return id || `${hostname()}:${process.pid}`;
}

/** The repository-level merge lock: under the artefact folder of the state root. */
export function mergeLockPath(artefacts: string): string {
  return join(artefacts, 'merge.lock');
}

export class Worker implements WorkerLease {
  private readonly held = new Map<string, ClaimToken>();
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    readonly workerId: string,
    readonly leaseSeconds: number,
    private readonly s: () => Session,
  ) {}

  hold(token: ClaimToken | undefined): void {
    if (token) this.held.set(token.taskId, token);
  }
  release(taskId: string): void {
    this.held.delete(taskId);
  }
  tokenOf(taskId: string): ClaimToken | undefined {
    return this.held.get(taskId);
  }

  /** Inside a transaction: renews the task's lease if we hold it (a checkpoint). */
  renewIn(file: TaskFile, taskId: string): void {
    const token = this.held.get(taskId);
    if (token) renewLease(file, token, this.leaseSeconds);
  }

  /** Renews every lease we hold every lease/3 seconds until stop(). */
  start(): void {
    const every = Math.max(250, (this.leaseSeconds * 1000) / 3);
    this.heartbeat = setInterval(() => void this.renewAll(), every);
    this.heartbeat.unref();
  }
  stop(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  private async renewAll(): Promise<void> {
    if (!this.held.size) return;
    const s = this.s();
    try {
      const lost = await s.transact((file) => [...this.held.values()].filter((t) => renewLease(file, t, this.leaseSeconds) === 'lost'));
      for (const t of lost)
        s.log({
          type: 'WARN',
          taskId: t.taskId,
          message: `worker=${this.workerId} lost its claim (generation ${t.generation}): another worker took the task over`,
        });
    } catch (err) {
      s.logger.warn(`could not renew the leases of ${this.workerId}: ${(err as Error).message}`);
    }
  }

  /**
   * Takes over every in-progress task whose claim lapsed (or that this worker id held before),
   * except those running here, and hands each to `recover`. Returns their ends by task id.
   */
  async takeOverLapsed(
    running: ReadonlySet<string>,
    recover: (taskId: string) => Promise<TaskEnd>,
  ): Promise<Map<string, Promise<TaskEnd>>> {
    const s = this.s();
    const taken = await s.transact((file) =>
      file.tasks
        .filter((t) => t.status === 'in_progress' && !running.has(t.id) && (t.claimed_by === this.workerId || claimLapsed(t)))
        .map((t) => takeOverClaim(file, t.id, this))
        .filter((x) => x !== undefined),
    );
    const ends = new Map<string, Promise<TaskEnd>>();
    for (const { token, previous } of taken) {
      this.hold(token);
      const was = previous.claimedBy
        ? `claim of ${previous.claimedBy} (generation ${previous.generation}) lapsed at ${previous.leaseExpiresAt ?? 'no lease'}`
        : 'no claim';
      s.log({
        type: 'RECOVERY',
        taskId: token.taskId,
        message: `action="took over claim" worker=${this.workerId} generation=${token.generation} reason="${was}"`,
      });
      // Its processes are those of a worker that died or stalled: end them before touching its worktree.
      for (const { label } of s.records.endTask(token.taskId)) {
        s.log({ type: 'RECOVERY', taskId: token.taskId, message: `action="ended orphaned process" reason="${label} outlived its claim"` });
      }
      ends.set(
        token.taskId,
        recover(token.taskId).finally(() => this.release(token.taskId)),
      );
    }
    return ends;
  }

  /**
   * Runs a merge under the repository-level merge lock, after checking (and renewing) our claim
   * under the state lock: a worker that lost its task never merges it.
   */
  async mergeGuard<T>(taskId: string, merge: () => Promise<T>): Promise<T> {
    const s = this.s();
    const lock = await acquireLock(
      mergeLockPath(s.paths.artefacts),
      `launchpad run (merge of ${taskId}, worker ${this.workerId})`,
      MERGE_LOCK_WAIT_MS,
    );
    try {
      // Merges into the base branch happen only under this lock: a merge in progress now is one
      // whose worker died holding it (its lock reclaimed as stale). Left alone, it would fail
      // every later merge and charge tasks for the machine's fault.
      const interrupted = await abortInterruptedMerge(s.git);
      if (interrupted) s.log({ type: 'ROLLBACK', message: `git merge --abort (interrupted: ${interrupted})` });
      const token = this.held.get(taskId);
      if (token) {
        const renewed = await s.transact((file) => renewLease(file, token, this.leaseSeconds));
        if (renewed === 'lost') throw new ClaimLostError(token, undefined);
      }
      return await merge();
    } finally {
      lock.release();
    }
  }
}
