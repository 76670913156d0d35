import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

import { Git } from '../../core/git/git';
import { allowListProblem } from '../../core/process/environment';
import { redact } from '../../core/queue/redact';
import { type Command, numberOption, splitList } from '../command';
import { UsageError } from '../exit';
import { stderrLogger } from '../io';

export const workerCommand: Command = {
  name: 'worker',
  usage:
    'launchpad worker --queue URL [--repo REMOTE] [--concurrency N] [--clone DIR] [--id ID] [--pass-env NAME[,NAME…]] [--idle-exit S] [--dir DIR] [--verbose]',
  summary: "Take attempts from a run's queue on this machine: clone, run the agent and the validation, push, report.",
  details: [
    'A worker serves "launchpad run --executor queue --queue URL" from any machine that reaches the queue (Redis) and the',
    'git remote. It keeps its own clone of the remote (--clone, default under ~/.cache/launchpad), and for each attempt job:',
    "fetches the attempt's base commit, makes a worktree on harness-<id>, runs the worktree set-up, the agent and the",
    "validation, pushes the work to refs/launchpad/queue/<id>/… on the remote, and returns the verdict, the validation's",
    'result, the output tail, the cost and the timings. The controller runs the validation again itself and merges only',
    'what passes there; the worker never writes the task file.',
    "A worker that dies mid-attempt stops renewing its job's lock: the job goes to another worker, which continues from the",
    "work pushed at the agent's last CHECKPOINT. A worker that loses a job's lock (a long pause, Redis unreachable) ends",
    "that job's agent at once. Ctrl-C (SIGTERM) stops: running agents end and their jobs go back to the queue.",
    "A worker that cannot run any job (its remote is not the run's: the base commit is not there; its clone is broken)",
    'gives the job back untouched, stops taking jobs and exits with 2, saying what to fix.',
    '',
    'The queue URL and the remote may carry credentials: pass them through the environment ($LAUNCHPAD_QUEUE_URL,',
    '$LAUNCHPAD_REMOTE); every message shows them as ***, and the clone keeps the remote without them.',
    "The worktree set-up, the agent and the validation get an allow-list of this process's environment, not all of it:",
    "PATH, HOME, USER, LOGNAME, SHELL, TMPDIR, TZ, TERM, LANG, LANGUAGE, LC_*, XDG_*_HOME, the agent tool's own variables",
    "(claude: ANTHROPIC_*, CLAUDE_CODE_*, CLAUDE_CONFIG_DIR, IS_SANDBOX; codex: OPENAI_*, CODEX_*; …; every preset's for a command that",
    "is not a preset), the attempt's LAUNCHPAD_* variables, and what --pass-env and $LAUNCHPAD_WORKER_PASS_ENV add (names,",
    "or PREFIX* for a prefix). Never $LAUNCHPAD_QUEUE_URL or $LAUNCHPAD_REMOTE, nor any variable holding the queue's or the",
    "remote's password or token. It is not isolation: the agent runs as this user. docs/scale-out.md has each preset's list.",
    'LAUNCHPAD_QUEUE_LOCK_MS and LAUNCHPAD_QUEUE_STALLED_MS set how long a job lock lives without renewal and how often',
    'stalled jobs are looked for (default 30000 each); use the same values on the workers and the run.',
    '',
    'examples:',
    '  LAUNCHPAD_QUEUE_URL=redis://queue.internal:6379 launchpad worker --repo git@github.com:acme/app.git --concurrency 4',
    "  launchpad worker --pass-env 'HTTPS_PROXY,NO_PROXY,NPM_CONFIG_*' --idle-exit 300",
  ].join('\n'),
  options: {
    queue: { type: 'string', value: 'URL', help: 'redis://[user:password@]host:port[/db] (default $LAUNCHPAD_QUEUE_URL)' },
    repo: {
      type: 'string',
      value: 'REMOTE',
      help: 'the shared git remote (default $LAUNCHPAD_REMOTE, else the origin of the repository at --dir or here)',
    },
    concurrency: { type: 'string', value: 'N', help: 'attempts at once on this machine (default 1)' },
    clone: { type: 'string', value: 'DIR', help: "the worker's own clone (default ~/.cache/launchpad/workers/<remote's hash>)" },
    id: { type: 'string', value: 'ID', help: 'the name the Tasks view and the log show for this worker (default <host>-<pid>)' },
    'pass-env': {
      type: 'string',
      value: 'NAME[,NAME…]',
      help: "variables the agents get beyond the allow-list (NAME, or PREFIX* for a prefix; added to $LAUNCHPAD_WORKER_PASS_ENV's)",
    },
    'idle-exit': { type: 'string', value: 'S', help: 'stop (exit 0) once no attempt has run here for S seconds (a pod of a scaled job)' },
    verbose: { type: 'boolean', short: 'v', help: 'print each job taken and delivered' },
  },
  globals: ['dir', 'no-color'],
  async run({ io, values, dir }) {
    const url = (values.queue as string | undefined) ?? io.env.LAUNCHPAD_QUEUE_URL;
    if (!url) throw new UsageError('--queue: required (redis://host:port), or set $LAUNCHPAD_QUEUE_URL');
    const remote = (values.repo as string | undefined) || io.env.LAUNCHPAD_REMOTE || (await originOf(dir ?? io.cwd));
    if (!remote)
      throw new UsageError(
        '--repo: required (the git remote the run pushes its base to), or set $LAUNCHPAD_REMOTE, or run it in a clone whose origin is that remote',
      );
    const concurrency = numberOption('concurrency', values.concurrency, { integer: true, min: 1 }) ?? 1;
    const idleExitS = numberOption('idle-exit', values['idle-exit'], { integer: true, min: 1 });
    const passEnv = [
      ...allowList('$LAUNCHPAD_WORKER_PASS_ENV', io.env.LAUNCHPAD_WORKER_PASS_ENV),
      ...allowList('--pass-env', values['pass-env']),
    ];
    const id = values.id as string | undefined;
    if (id !== undefined && !/^[A-Za-z0-9._:-]{1,80}$/.test(id))
      throw new UsageError(`--id: "${id}" may hold letters, digits, ".", "_", ":" and "-" only`);
    const cloneDir = values.clone
      ? resolve(values.clone as string)
      : join(
          io.env.XDG_CACHE_HOME || join(homedir(), '.cache'),
          'launchpad',
          'workers',
          createHash('sha256').update(remote).digest('hex').slice(0, 16),
        );
    const { connectionFor, leaseFromEnv, QueueUrlError } = await import('../../core/queue/bull');
    let lease;
    try {
      connectionFor(url);
      lease = leaseFromEnv(io.env);
    } catch (err) {
      if (err instanceof QueueUrlError) throw new UsageError(err.message);
      throw err;
    }
    const { runQueueWorker } = await import('../../core/queue/worker');
    const stop = new AbortController();
    const logger = stderrLogger(io, values.verbose === true);
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      if (++signals > 1) process.exit(signal === 'SIGINT' ? 130 : 143);
      io.err(`\n${signal}: stopping; running attempts end and their jobs go to other workers (again to exit at once)\n`);
      stop.abort();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      io.err(`worker: queue ${redact(url)}, remote ${redact(remote)}, clone ${cloneDir}\n`);
      const done = await runQueueWorker({
        queueUrl: url,
        remote,
        cloneDir,
        concurrency,
        workerId: id,
        lease,
        signal: stop.signal,
        logger,
        prefix: io.env.LAUNCHPAD_QUEUE_PREFIX || undefined,
        passEnv,
        idleExitMs: idleExitS === undefined ? undefined : idleExitS * 1000,
      });
      io.err(`worker stopped${done.idle ? ' (idle)' : ''}: ${done.completed} attempt(s) delivered, ${done.failed} failed\n`);
      if (!done.unusable) return 0;
      io.err(`worker: cannot run jobs: ${redact(done.unusable.problem)}\nto fix: ${done.unusable.advice}\n`);
      return 2;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  },
};

/** Names (or PREFIX*) separated by commas, each checked. */
function allowList(where: string, text: string | boolean | undefined): string[] {
  const names = splitList(text) ?? [];
  for (const name of names) {
    const problem = allowListProblem(name);
    if (problem) throw new UsageError(`${where}: ${problem}`);
  }
  return names;
}

/** The origin remote's URL of the repository at `dir`, if it is one. */
async function originOf(dir: string): Promise<string | undefined> {
  const r = await new Git(dir).run(['remote', 'get-url', 'origin'], { allowFail: true }).catch(() => undefined);
  return r?.code === 0 ? r.stdout.trim() || undefined : undefined;
}
