// `launchpad worker`: takes attempt jobs from the queue and runs them in worktrees of its own clone
// of the shared remote. BullMQ holds a lock on each job it runs and renews it while the worker
// lives; a worker that dies stops renewing, its job stalls and goes to another worker, which
// resumes from the partial work pushed at the agent's checkpoints. A worker that lost its lock
// cannot complete the job (BullMQ refuses it), and the controller accepts a result only for the
// attempt it expects: a stale worker cannot deliver.
import { hostname } from 'node:os';
import { join } from 'node:path';

import type { Logger } from '../logger';
import { runAttemptJob } from './attempt';
import { connectionFor, type LeaseTimes, loadBullmq } from './bull';
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
  lease: LeaseTimes;
  /** Jobs a stalled job may come back from before it fails (BullMQ maxStalledCount). */
  maxStalledCount?: number;
  signal: AbortSignal;
  logger: Logger;
  /** Prefix of the queue's Redis keys (default "bull"). */
  prefix?: string | undefined;
}

export function defaultWorkerId(): string {
  return `${hostname()}-${process.pid}`;
}

/** Runs until `signal` aborts; then the jobs it holds are given back (their locks lapse) and it returns. */
export async function runQueueWorker(opts: QueueWorkerOptions): Promise<{ completed: number; failed: number }> {
  const { Worker } = loadBullmq();
  const workerId = opts.workerId ?? defaultWorkerId();
  const git = await ensureClone(opts.cloneDir, opts.remote);
  const workDir = `${opts.cloneDir}.work`;
  let chain: Promise<unknown> = Promise.resolve();
  const cloneLock = <T>(work: () => Promise<T>): Promise<T> => {
    const next = chain.then(work, work);
    chain = next.catch(() => undefined);
    return next;
  };
  const stop = new AbortController();
  opts.signal.addEventListener('abort', () => stop.abort(), { once: true });
  let completed = 0;
  let failed = 0;

  const worker = new Worker<AttemptJob, AttemptResult>(
    QUEUE_NAME,
    async (job) => {
      const data = parseOrExplain(attemptJobSchema, job.data, `job ${job.id}`);
      opts.logger.info(`${data.taskId}: attempt ${data.attempt} (agent ${data.agentId}) taken by ${workerId}`);
      return runAttemptJob(data, {
        git,
        workDir: join(workDir, workerIdPath(workerId)),
        workerId,
        signal: stop.signal,
        cloneLock,
        progress: (p) => void job.updateProgress(p).catch(() => undefined),
        log: (m) => opts.logger.info(redact(m)),
      });
    },
    {
      connection: connectionFor(opts.queueUrl, () => opts.signal.aborted),
      concurrency: opts.concurrency,
      lockDuration: opts.lease.lockDurationMs,
      stalledInterval: opts.lease.stalledIntervalMs,
      maxStalledCount: opts.maxStalledCount ?? 5,
      name: workerId,
      ...(opts.prefix ? { prefix: opts.prefix } : {}),
    },
  );
  worker.on('completed', (job) => {
    completed++;
    opts.logger.info(`${job.data.taskId}: delivered (${job.returnvalue?.verdict}, validation ${job.returnvalue?.validation.result})`);
  });
  worker.on('failed', (job, err) => {
    failed++;
    opts.logger.warn(`${job?.data.taskId ?? job?.id ?? 'a job'}: ${redactError(err)}`);
  });
  worker.on('error', (err) => opts.logger.warn(`queue: ${redactError(err)}`));
  opts.logger.info(
    `worker ${workerId}: taking jobs from ${redact(opts.queueUrl)} (concurrency ${opts.concurrency}), clone ${opts.cloneDir}`,
  );
  await new Promise<void>((resolve) => {
    if (opts.signal.aborted) resolve();
    opts.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  // Stopping: running agents end, their jobs are not completed and come back to another worker.
  await worker.close(true).catch(() => undefined);
  return { completed, failed };
}

function workerIdPath(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, '_');
}
