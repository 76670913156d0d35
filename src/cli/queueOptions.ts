// run's queue options: --executor, --queue, --remote. The queue's code (and BullMQ) is loaded only
// when a run asks for it.
import type { AttemptExecutor } from '../core/executor/types';
import { Git } from '../core/git/git';
import { redact } from '../core/queue/redact';
import type { OptionSpec } from './command';
import { UsageError } from './exit';

export const QUEUE_RUN_OPTIONS: Record<string, OptionSpec> = {
  executor: {
    type: 'string',
    value: 'local|queue',
    help: 'who runs the attempts: this machine (local, the default) or launchpad workers through a queue (queue)',
  },
  queue: {
    type: 'string',
    value: 'URL',
    help: 'the queue for --executor queue: redis://[user:password@]host:port (default $LAUNCHPAD_QUEUE_URL; implies --executor queue)',
  },
  remote: {
    type: 'string',
    value: 'REMOTE',
    help: 'the git remote workers clone and push to, a name or a URL (default $LAUNCHPAD_REMOTE, else origin)',
  },
};

export interface QueueRun {
  executor: AttemptExecutor & { ready(): Promise<void>; close(): Promise<void> };
  describe: string;
}

/** The queue executor when the options ask for one, connected; undefined for a local run. */
export async function queueExecutorFor(
  values: Record<string, string | boolean | undefined>,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<QueueRun | undefined> {
  const executor = values.executor as string | undefined;
  if (executor !== undefined && executor !== 'local' && executor !== 'queue')
    throw new UsageError(`--executor: expected local or queue, got "${executor}"`);
  const url = (values.queue as string | undefined) ?? env.LAUNCHPAD_QUEUE_URL;
  if (executor === 'local') {
    if (values.queue !== undefined) throw new UsageError('--queue is for --executor queue, not --executor local');
    return undefined;
  }
  if (executor !== 'queue' && values.queue === undefined) return undefined;
  if (!url) throw new UsageError('--executor queue needs --queue redis://host:port (or $LAUNCHPAD_QUEUE_URL)');
  const remote = (values.remote as string | undefined) ?? env.LAUNCHPAD_REMOTE ?? 'origin';
  const { leaseFromEnv, QueueUrlError } = await import('../core/queue/bull');
  const { QueueExecutor } = await import('../core/queue/executor');
  let q;
  try {
    q = new QueueExecutor({ queueUrl: url, remote, lease: leaseFromEnv(env), prefix: env.LAUNCHPAD_QUEUE_PREFIX || undefined });
  } catch (err) {
    if (err instanceof QueueUrlError) throw new UsageError(err.message);
    throw err;
  }
  try {
    await withTimeout(q.ready(), 10_000, `cannot reach the queue at ${redact(url)} within 10 s`);
  } catch (err) {
    await q.close();
    throw new UsageError((err as Error).message);
  }
  // The remote is where workers fetch the base and push their work: unreachable, nothing can run.
  const reach = await new Git(cwd).run(['ls-remote', '--heads', remote], { allowFail: true, timeoutMs: 60_000 });
  if (reach.code !== 0) {
    await q.close();
    const why = (reach.stderr || reach.spawnError || '').trim().split('\n').slice(-2).join(' ');
    throw new UsageError(redact(`--remote: cannot reach "${remote}" from ${cwd}: ${why}`));
  }
  return { executor: q, describe: `queue ${redact(url)}, remote ${redact(remote)}` };
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]).finally(() =>
    clearTimeout(timer),
  );
}
