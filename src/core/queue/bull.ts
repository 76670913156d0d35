// BullMQ, loaded on first use: only the queue's paths of the CLI need it, so neither the
// extension nor a plain run loads it. It and ioredis are optional dependencies: an install
// without them runs everything but the queue, which then says how to add them. The connection
// comes from a redis:// URL (credentials in the URL come from the environment and are redacted in
// every message).
import type * as BullMQ from 'bullmq';

import { ExpectedError } from '../expectedErrors';
import { redact } from './redact';

export type Bull = typeof BullMQ;

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

/** The queue's packages (optional dependencies) are not installed. */
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
