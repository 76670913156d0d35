// `launchpad worker`: takes attempt jobs from the queue and runs them in worktrees of its own clone
// of the shared remote. BullMQ holds a lock on each job it runs and renews it while the worker
// lives; a worker that dies stops renewing, its job stalls and goes to another worker, which
// resumes from the partial work pushed at the agent's checkpoints.
// A worker that loses a job's lock (a long pause, Redis unreachable or restarted) ends that job's
// agent at once: the attempt is another worker's from then on, and two agents must never bill for
// it together. BullMQ refuses a stale worker's completion, and the controller accepts a result
// only for the attempt it expects.
// A worker that cannot run any job (its remote is not the run's, its clone is broken) gives the job
// back untouched, stops taking jobs and exits with the reason: one misconfigured worker must not
// fail everyone's jobs. A stopped worker gives its jobs back the same way.
// A worker killed outright cannot end its agents: a guard process beside it does, the moment it
// is gone (every process of an attempt carries the guard's token in its environment).
// An attempt's processes get an allow-list of the worker's environment (process/environment.ts):
// its queue URL, its remote and whatever else the machine holds stay with the worker.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import type { Logger } from '../logger';
import { credentialsIn } from '../process/environment';
import { ProcessRecords } from '../process/processRecords';
import { runAttemptJob, WorkerUnusableError } from './attempt';
import { connectionFor, type LeaseTimes, loadBullmq, withinMs } from './bull';
import { type AttemptJob, attemptJobSchema, type AttemptResult, parseOrExplain, QUEUE_NAME } from './job';
import { redact, redactError } from './redact';
import { ensureClone } from './remoteGit';

export interface QueueWorkerOptions {
  queueUrl: string;
  remote: string;
  /** The worker's own clone; worktrees and attempt files go beside it. */
  cloneDir: string;
  concurrency: number;
  workerId?: string | undefined;
  lease: Pick<LeaseTimes, 'lockDurationMs' | 'stalledIntervalMs'>;
  /** Jobs a stalled job may come back from before it fails (BullMQ maxStalledCount). */
  maxStalledCount?: number;
  signal: AbortSignal;
  logger: Logger;
  /** Prefix of the queue's Redis keys (default "bull"). */
  prefix?: string | undefined;
  /** Variable names (or `PREFIX*`) the attempts' processes get beyond the basics and their tool's own. */
  passEnv?: readonly string[];
  /** Stops (and the process exits 0) once no attempt has run here for this long: a pod that ends when the queue is dry. */
  idleExitMs?: number | undefined;
}

export interface WorkerEnd {
  completed: number;
  failed: number;
  /** Why the worker stopped taking jobs on its own, and what to do. */
  unusable?: { problem: string; advice: string };
  /** It stopped because it had run nothing for `idleExitMs`. */
  idle?: boolean;
}

export function defaultWorkerId(): string {
  return `${hostname()}-${process.pid}`;
}

/** Why a job's work was cut short. */
type Cut = 'stop' | 'lock-lost';

interface Running {
  jobId: string;
  abort: AbortController;
  /** When its lock was last known to be renewed (performance.now()). */
  renewedAt: number;
}

/** How long a give-back to the queue may take before the job is left to lapse instead. */
const GIVE_BACK_MS = 5000;

/** Runs until `signal` aborts or the worker finds it cannot run jobs; then it gives its jobs back and returns. */
export async function runQueueWorker(opts: QueueWorkerOptions): Promise<WorkerEnd> {
  const { Worker, WaitingError } = loadBullmq();
  const workerId = opts.workerId ?? defaultWorkerId();
  const git = await ensureClone(opts.cloneDir, opts.remote);
  const workDir = `${opts.cloneDir}.work`;
  // What a worker killed on this clone left running ends before this one takes a job.
  const records = new ProcessRecords(join(workDir, 'procs'));
  for (const { label } of records.endAll()) opts.logger.warn(`ended ${label}, left running by a worker that died`);
  const guard = startGuard();
  let chain: Promise<unknown> = Promise.resolve();
  const cloneLock = <T>(work: () => Promise<T>): Promise<T> => {
    const next = chain.then(work, work);
    chain = next.catch(() => undefined);
    return next;
  };
  const stop = new AbortController();
  opts.signal.addEventListener('abort', () => stop.abort('stop'), { once: true });
  const end: WorkerEnd = { completed: 0, failed: 0 };
  const running = new Map<string, Running>();
  /** The attempt of each task running here, until it has ended (its worktree removed). */
  const ending = new Map<string, Promise<void>>();
  const lockMs = opts.lease.lockDurationMs;
  // No attempt's process may carry the queue's or the remote's credentials, whatever it is called.
  const withhold = [...credentialsIn(opts.queueUrl), ...credentialsIn(opts.remote)];
  let idleSince = performance.now();

  /** The job's lock is gone: its agent and every other process of the attempt end now. */
  const lockLost = (r: Running, why: string) => {
    if (r.abort.signal.aborted) return;
    opts.logger.warn(`${r.jobId}: lost its lock (${why}); its agent is ended, another worker continues the attempt`);
    r.abort.abort('lock-lost' satisfies Cut);
  };
  const unusable = (err: WorkerUnusableError) => {
    if (end.unusable) return;
    end.unusable = { problem: err.problem, advice: err.advice };
    opts.logger.warn(`worker ${workerId} cannot run jobs (${redact(err.problem)}): it gives its jobs back and stops`);
    stop.abort('stop');
  };

  const worker = new Worker<AttemptJob, AttemptResult>(
    QUEUE_NAME,
    async (job, token) => {
      const r: Running = { jobId: job.id!, abort: new AbortController(), renewedAt: performance.now() };
      const onStop = () => r.abort.abort('stop' satisfies Cut);
      if (stop.signal.aborted) onStop();
      stop.signal.addEventListener('abort', onStop, { once: true });
      running.set(token!, r);
      try {
        if (r.abort.signal.aborted) throw new Error(`${job.id}: the worker is stopping`);
        const data = parseOrExplain(attemptJobSchema, job.data, `job ${job.id}`);
        opts.logger.info(`${data.taskId}: attempt ${data.attempt} (agent ${data.agentId}) taken by ${workerId}`);
        // A task's attempts share its worktree's branch here: one still ending (its job published
        // again after its lock was lost) ends first.
        const before = ending.get(data.taskId);
        let done!: () => void;
        const mine = new Promise<void>((resolve) => (done = resolve));
        ending.set(data.taskId, mine);
        await before;
        try {
          return await runAttemptJob(data, {
            git,
            remote: opts.remote,
            workDir: join(workDir, workerIdPath(workerId)),
            workerId,
            signal: r.abort.signal,
            holdsLock: async () => {
              const extended = await withinMs(job.extendLock(token!, lockMs), lockMs / 2).catch(() => 0);
              if (extended === 1) r.renewedAt = performance.now();
              return extended === 1;
            },
            cloneLock,
            records,
            env: { [GUARD_VAR]: guard },
            passEnv: opts.passEnv ?? [],
            withhold,
            progress: (p) => void job.updateProgress(p).catch(() => undefined),
            log: (m) => opts.logger.info(redact(m)),
          });
        } finally {
          done();
          if (ending.get(data.taskId) === mine) ending.delete(data.taskId);
        }
      } catch (err) {
        if (err instanceof WorkerUnusableError) unusable(err);
        // Stopped (or unusable): the job goes back to the queue as it was, for another worker.
        if (r.abort.signal.reason === 'stop' || err instanceof WorkerUnusableError) {
          const back = await withinMs(job.moveToWait(token), GIVE_BACK_MS).catch(() => undefined);
          if (back !== undefined) {
            opts.logger.info(`${job.id}: given back to the queue`);
            throw new WaitingError();
          }
        }
        throw err;
      } finally {
        stop.signal.removeEventListener('abort', onStop);
        running.delete(token!);
        idleSince = performance.now();
      }
    },
    {
      connection: connectionFor(opts.queueUrl, () => opts.signal.aborted || stop.signal.aborted),
      concurrency: opts.concurrency,
      lockDuration: lockMs,
      stalledInterval: opts.lease.stalledIntervalMs,
      maxStalledCount: opts.maxStalledCount ?? 5,
      name: workerId,
      ...(opts.prefix ? { prefix: opts.prefix } : {}),
    },
  );
  const byJob = (ids: readonly string[]) => [...running.values()].filter((r) => ids.includes(r.jobId));
  worker.on('locksRenewed', ({ jobIds }) => {
    for (const r of byJob(jobIds)) r.renewedAt = performance.now();
  });
  worker.on('lockRenewalFailed', (jobIds) => {
    for (const r of byJob(jobIds)) lockLost(r, 'its renewal was refused');
  });
  // A lock not renewed for its whole duration has lapsed, whatever Redis says later (the process
  // was paused, Redis was unreachable): the monotonic clock decides.
  const lapse = setInterval(
    () => {
      const now = performance.now();
      for (const r of running.values()) if (now - r.renewedAt > lockMs) lockLost(r, `not renewed for ${Math.round(now - r.renewedAt)} ms`);
      if (running.size) idleSince = now;
      else if (opts.idleExitMs !== undefined && now - idleSince >= opts.idleExitMs && !stop.signal.aborted) {
        opts.logger.info(`worker ${workerId}: no attempt for ${Math.round(opts.idleExitMs / 1000)} s: stopping`);
        end.idle = true;
        stop.abort('stop');
      }
    },
    Math.max(50, Math.floor(lockMs / 8)),
  );
  worker.on('completed', (job) => {
    end.completed++;
    opts.logger.info(`${job.data.taskId}: delivered (${job.returnvalue?.verdict}, validation ${job.returnvalue?.validation.result})`);
  });
  worker.on('failed', (job, err) => {
    end.failed++;
    opts.logger.warn(`${job?.data.taskId ?? job?.id ?? 'a job'}: ${redactError(err)}`);
  });
  worker.on('error', (err) => opts.logger.warn(`queue: ${redactError(err)}`));
  opts.logger.info(
    `worker ${workerId}: taking jobs from ${redact(opts.queueUrl)} (concurrency ${opts.concurrency}), clone ${opts.cloneDir}`,
  );
  await new Promise<void>((resolve) => {
    if (stop.signal.aborted) resolve();
    stop.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  // Stopping: running agents end and their jobs go back to the queue; then the connections close.
  // Redis unreachable, nothing can be given back: the locks lapse and the jobs come back stalled.
  const closed = await withinMs(
    worker.close().then(
      () => true,
      () => true,
    ),
    GIVE_BACK_MS * 2,
  );
  clearInterval(lapse);
  if (!closed)
    await withinMs(
      worker.disconnect().catch(() => undefined),
      1000,
    );
  return end;
}

/** The variable that carries the guard's token in the environment of every attempt's process. */
const GUARD_VAR = 'LAUNCHPAD_WORKER_GUARD';

// $1 the worker's pid, $2 the token: once the worker is gone, every process whose environment
// holds the token ends (SIGTERM, SIGKILL 2 s later). Linux only (/proc); elsewhere the next worker
// on the clone ends them through their records.
const GUARD_SCRIPT = `
w=$1 t=$2
while kill -0 "$w" 2>/dev/null; do sleep 0.5; done
[ -d /proc/self ] || exit 0
signal_all() { for f in $(grep -alsF -- "$t" /proc/[0-9]*/environ); do f=\${f#/proc/}; kill -"$1" "\${f%/environ}" 2>/dev/null; done; }
signal_all TERM
sleep 2
signal_all KILL
`;

/** Starts this worker's guard (its own session, not waited for); returns its token. */
function startGuard(): string {
  const token = `${GUARD_VAR}=${randomBytes(12).toString('hex')}`;
  const child = spawn('/bin/sh', ['-c', GUARD_SCRIPT, 'launchpad-worker-guard', String(process.pid), token], {
    detached: true,
    stdio: 'ignore',
  });
  child.on('error', () => undefined);
  child.unref();
  return token.slice(GUARD_VAR.length + 1);
}

function workerIdPath(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, '_');
}
