// BullMQ, loaded on first use: only the queue's paths of the CLI need it, so neither the
// extension nor a plain run loads it. It and ioredis are optional peer dependencies, not part of
// a default install (they bring a native add-on): an install without them runs everything but
// the queue, which then says how to add them. The part of BullMQ's API the queue uses is typed
// here, so the project builds without them. The connection comes from a redis:// URL
// (credentials in the URL come from the environment and are redacted in every message).
import { ExpectedError } from '../expectedErrors';
import { redact } from './redact';

/** A BullMQ job, as far as the queue reads and moves one. */
export interface Job<D, R> {
  id?: string | undefined;
  data: D;
  returnvalue: R;
  failedReason: string;
  attemptsMade: number;
  updateProgress(progress: object): Promise<void>;
  moveToWait(token?: string): Promise<number>;
  extendLock(token: string, durationMs: number): Promise<number>;
}

export interface Queue<D, R> {
  on(event: 'error', listener: (err: Error) => void): this;
  waitUntilReady(): Promise<unknown>;
  close(): Promise<void>;
  disconnect(): Promise<void>;
  add(name: string, data: D, opts: object): Promise<Job<D, R>>;
  getJob(id: string): Promise<Job<D, R> | undefined>;
  getJobs(states: string[]): Promise<Array<Job<D, R> | undefined>>;
  getJobState(id: string): Promise<string>;
  remove(id: string): Promise<number>;
}

export interface QueueEvents {
  on(event: 'progress', listener: (e: { jobId: string; data: unknown }) => void): this;
  on(event: 'completed' | 'failed' | 'removed', listener: (e: { jobId: string }) => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  waitUntilReady(): Promise<unknown>;
  close(): Promise<void>;
  disconnect(): Promise<void>;
}

export interface Worker<D, R> {
  on(event: 'locksRenewed', listener: (e: { jobIds: string[] }) => void): this;
  on(event: 'lockRenewalFailed', listener: (jobIds: string[]) => void): this;
  on(event: 'completed', listener: (job: Job<D, R>) => void): this;
  on(event: 'failed', listener: (job: Job<D, R> | undefined, err: Error) => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  close(): Promise<void>;
  disconnect(): Promise<void>;
}

/** The constructors the queue takes from the bullmq package. */
export interface Bull {
  Queue: new <D, R>(name: string, opts: object) => Queue<D, R>;
  QueueEvents: new (name: string, opts: object) => QueueEvents;
  Worker: new <D, R>(name: string, processor: (job: Job<D, R>, token?: string) => Promise<R>, opts: object) => Worker<D, R>;
  /** Thrown by a processor that moved its job back to the waiting list itself. */
  WaitingError: new () => Error;
}

let loaded: Bull | undefined;

export function loadBullmq(): Bull {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    loaded ??= require('bullmq') as Bull;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') throw new QueuePackagesMissing((err as Error).message);
    throw err;
  }
  return loaded;
}

/** The queue's packages (optional peer dependencies) are not installed. */
export class QueuePackagesMissing extends ExpectedError {
  constructor(cause: string) {
    super(
      `the queue executor and worker need the packages bullmq and ioredis, which are not installed (${cause.split('\n')[0]}); ` +
        'install them with "npm install bullmq ioredis" in the folder of Launchpad\'s package.json',
    );
    this.name = 'QueuePackagesMissing';
  }
}

export interface Connection {
  url: string;
  maxRetriesPerRequest: null;
  connectTimeout: number;
  retryStrategy: (times: number) => number | null;
}

/**
 * BullMQ's connection options for a redis:// or rediss:// URL; a clear error for anything else.
 * A lost connection is retried (up to every 5 s) until `giveUp` says the process is closing.
 */
export function connectionFor(url: string, giveUp: () => boolean = () => false): Connection {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new QueueUrlError(`--queue: "${redact(url)}" is not a URL; expected redis://[user:password@]host:port[/db]`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')
    throw new QueueUrlError(`--queue: "${redact(url)}" is not a redis:// or rediss:// URL`);
  return {
    url,
    maxRetriesPerRequest: null,
    connectTimeout: 10_000,
    retryStrategy: (times) => (giveUp() ? null : Math.min(times * 500, 5000)),
  };
}

export class QueueUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'QueueUrlError';
  }
}

/**
 * The queue's clocks. A worker's lock on a job lives `lockDurationMs` without renewal; stalled
 * jobs are looked for every `stalledIntervalMs`; the controller stops the run once Redis has not
 * answered for `outageMs`.
 */
export interface LeaseTimes {
  lockDurationMs: number;
  stalledIntervalMs: number;
  outageMs: number;
}

export const DEFAULT_LEASE: LeaseTimes = { lockDurationMs: 30_000, stalledIntervalMs: 30_000, outageMs: 60_000 };

/** Test and operator overrides: LAUNCHPAD_QUEUE_LOCK_MS, LAUNCHPAD_QUEUE_STALLED_MS, LAUNCHPAD_QUEUE_OUTAGE_MS. */
export function leaseFromEnv(env: NodeJS.ProcessEnv): LeaseTimes {
  const read = (name: string, fallback: number) => {
    const v = env[name];
    if (v === undefined || v === '') return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 100) throw new QueueUrlError(`${name}: "${v}" is not a whole number of milliseconds (at least 100)`);
    return n;
  };
  return {
    lockDurationMs: read('LAUNCHPAD_QUEUE_LOCK_MS', DEFAULT_LEASE.lockDurationMs),
    stalledIntervalMs: read('LAUNCHPAD_QUEUE_STALLED_MS', DEFAULT_LEASE.stalledIntervalMs),
    outageMs: read('LAUNCHPAD_QUEUE_OUTAGE_MS', DEFAULT_LEASE.outageMs),
  };
}

/** How often the controller reads the state of each job it follows. */
export function pollMs(lease: LeaseTimes): number {
  return Math.min(5000, Math.max(250, Math.floor(lease.lockDurationMs / 4)));
}

/** `work`, or what `stop` ends it with; the work's own rejection is handled either way. */
export function raceStop<T>(work: Promise<T>, stop: AbortSignal): Promise<T | 'stopped'> {
  work.catch(() => undefined);
  if (stop.aborted) return Promise.resolve('stopped');
  return new Promise<T | 'stopped'>((resolve, reject) => {
    const onStop = () => resolve('stopped');
    stop.addEventListener('abort', onStop, { once: true });
    work.then(resolve, reject).finally(() => stop.removeEventListener('abort', onStop));
  });
}

/** `work`, or undefined once `ms` have passed. */
export function withinMs<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  work.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([work, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]).finally(() =>
    clearTimeout(timer),
  );
}
