// One attempt on a queue worker: a worktree of the worker's clone at the job's base commit (or at
// the partial work a dead worker pushed: then the agent is told it resumes), the worktree's set-up
// command, the agent with its time limit (its CHECKPOINT lines reported and the work pushed at
// each), the uncommitted leftovers committed, the validation (protected paths as the base has
// them, controller/protectedPaths.ts), and the work pushed to the attempt's ref on the shared
// remote. The controller decides everything else.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { findPreset, toolVariables } from '../agents/presets';
import { AgentOutputScanner, lastMeaningfulLine, noVerdictReason } from '../controller/agentOutput';
import { guardProtectedPaths } from '../controller/protectedPaths';
import { Git } from '../git/git';
import { branchFor } from '../ids';
import { agentEnvironment } from '../process/environment';
import type { ProcessRecords } from '../process/processRecords';
import { runProcess } from '../process/runProcess';
import type { AttemptJob, AttemptProgress, AttemptResult } from './job';
import { refsFor } from './job';
import { redact } from './redact';
import { deleteRemoteRefs, fetchForAttempt, publishedBaseHolds, pushRef } from './remoteGit';

const TAIL_CHARS = 4000;
const CAPTURE_BYTES = 64 * 1024;

export interface AttemptContext {
  /** The worker's clone. */
  git: Git;
  /** Its remote, as the worker was given it (with its credentials: fetches and pushes name it). */
  remote: string;
  /** Where this worker keeps worktrees and attempt files (outside the clone). */
  workDir: string;
  workerId: string;
  /** Aborted when the worker stops or loses the job's lock: every process of the attempt ends. */
  signal: AbortSignal;
  /** Whether the worker still holds the job's lock (asked before and after pushing the result). */
  holdsLock: () => Promise<boolean>;
  /** Serialises what touches the clone's shared refs and worktree list. */
  cloneLock: <T>(work: () => Promise<T>) => Promise<T>;
  progress: (p: AttemptProgress) => void;
  log: (message: string) => void;
  /** Added to the environment of the attempt's processes (the worker's guard's token). */
  env?: NodeJS.ProcessEnv;
  /** The names (or `PREFIX*`) the worker's configuration adds to the attempt's allow-list. */
  passEnv: readonly string[];
  /** Credentials no variable of the attempt's environment may hold (the queue's, the remote's). */
  withhold: readonly string[];
  /** Where the attempt's processes are recorded while they run: a later worker on the clone ends what a dead one left. */
  records: ProcessRecords;
}

/** The worker cannot run any job (its remote is not the run's, its clone is broken): it stops taking them. */
export class WorkerUnusableError extends Error {
  constructor(
    readonly problem: string,
    readonly advice: string,
  ) {
    super(`${problem}\nto fix: ${advice}`);
    this.name = 'WorkerUnusableError';
  }
}

export async function runAttemptJob(job: AttemptJob, ctx: AttemptContext): Promise<AttemptResult> {
  const { git } = ctx;
  const refs = refsFor(job.taskId, job.agentId);
  const branch = branchFor(job.taskId);
  const name = `${job.taskId}-${job.agentId}`;
  const worktree = join(ctx.workDir, 'worktrees', name);
  const files = join(ctx.workDir, 'attempts', name);
  mkdirSync(files, { recursive: true });
  const t0 = Date.now();

  // The base, and the partial work of a worker that died in this attempt (the job came back).
  // A failure here is the worker's, whatever the job: its clone or its remote cannot serve any.
  const partial = await ctx.cloneLock(async () => {
    const found = await fetchForAttempt(git, ctx.remote, refs.partial)
      .catch(async () => {
        await new Promise((r) => setTimeout(r, 2000));
        return fetchForAttempt(git, ctx.remote, refs.partial);
      })
      .catch((err: Error) => {
        throw new WorkerUnusableError(
          `cannot fetch from ${redact(ctx.remote)}: ${err.message}`,
          'check that this machine reaches the remote and that its credentials are valid',
        );
      });
    // The run's remote holds the base the run published, and the job's base is in its history:
    // a clone of the same project elsewhere (a fork, a mirror) may hold the commit but not that.
    if (!(await publishedBaseHolds(git, job.baseCommit)))
      throw new WorkerUnusableError(
        `the base commit ${job.baseCommit} of ${job.taskId} is not published on ${redact(ctx.remote)}: it is not the remote the run publishes to`,
        "give this worker the run's remote (the --remote of launchpad run) with --repo or $LAUNCHPAD_REMOTE, then start it again",
      );
    const resumable = found && found !== job.baseCommit && (await git.isAncestor(job.baseCommit, found)) ? found : undefined;
    rmSync(worktree, { recursive: true, force: true });
    try {
      await git.run(['worktree', 'prune']);
      await git.run(['worktree', 'add', '--quiet', '--force', '-B', branch, worktree, resumable ?? job.baseCommit]);
    } catch (err) {
      throw new WorkerUnusableError(
        `its clone ${git.cwd} cannot make a worktree: ${(err as Error).message.split('\n')[0]}`,
        `check the disk holding ${git.cwd}, or remove the clone so the worker makes a new one`,
      );
    }
    return resumable;
  });
  const fetchMs = Date.now() - t0;
  ctx.progress({ kind: 'started', workerId: ctx.workerId, agentId: job.agentId, ...(partial ? { resumedFrom: partial } : {}) });
  if (partial) ctx.log(`${job.taskId}: resuming from ${partial.slice(0, 7)}, the work a stopped worker pushed`);

  try {
    const cwd = job.projectDir ? join(worktree, job.projectDir) : worktree;
    // The set-up, the agent and the validation get the allow-list, never the worker's environment.
    const allow = [...toolVariables(job.preset), ...ctx.passEnv];
    const env: NodeJS.ProcessEnv = { ...agentEnvironment(process.env, { allow, withhold: ctx.withhold }), ...ctx.env };
    const t1 = Date.now();
    if (job.worktreeSetup) {
      const setup = await runProcess({
        command: job.worktreeSetup,
        cwd,
        env,
        timeoutMs: job.agentTimeoutMs,
        signal: ctx.signal,
        record: { records: ctx.records, name: `${name}.setup`, label: `worktree setup of ${job.taskId}` },
      });
      if (setup.code !== 0)
        throw new Error(
          `worktree_setup "${job.worktreeSetup}" exited with ${setup.code ?? setup.signal}: ${lastMeaningfulLine(setup.tail) ?? ''}`,
        );
    }
    const setupMs = Date.now() - t1;

    const prompt = partial ? resumeNote(job, await commitsSince(git, job.baseCommit, partial)) + job.prompt : job.prompt;
    const promptFile = join(files, 'prompt.md');
    writeFileSync(promptFile, prompt);
    let pushing = Promise.resolve();
    const pushPartial = () => {
      pushing = pushing
        .then(async () => {
          // A worker that lost the job's lock pushes nothing: the attempt is another worker's now.
          if (ctx.signal.aborted) return;
          const head = await git.head(worktree);
          if (head && head !== (partial ?? job.baseCommit)) await pushRef(git, ctx.remote, head, refs.partial, worktree);
        })
        .catch((err: Error) => ctx.log(`${job.taskId}: could not push its partial work: ${redact(err.message)}`));
    };
    const parser = job.preset ? findPreset(job.preset)?.createParser({ now: () => new Date() }) : undefined;
    const scanner = new AgentOutputScanner((c) => {
      ctx.progress({ kind: 'checkpoint', workerId: ctx.workerId, agentId: job.agentId, ...c });
      pushPartial();
    }, parser);
    const t2 = Date.now();
    const agent = await runProcess({
      command: job.agentCommand,
      cwd,
      env: {
        ...env,
        LAUNCHPAD_TASK_ID: job.taskId,
        LAUNCHPAD_TASK_TITLE: job.title,
        LAUNCHPAD_PROMPT_FILE: promptFile,
        LAUNCHPAD_WORKTREE: worktree,
        LAUNCHPAD_BRANCH: branch,
        LAUNCHPAD_ATTEMPT: String(job.attempt),
        LAUNCHPAD_WORKER_ID: ctx.workerId,
      },
      stdin: prompt,
      timeoutMs: job.agentTimeoutMs,
      signal: ctx.signal,
      record: { records: ctx.records, name: `${name}.agent`, label: `agent of ${job.taskId}` },
      transcript: join(files, 'transcript.log'),
      captureBytes: CAPTURE_BYTES,
      onOutput: (text) => scanner.push(text),
    });
    const agentMs = Date.now() - t2;
    const v = scanner.finish();
    const report = scanner.report();
    await pushing;
    if (agent.aborted) throw new Error(`${job.taskId}: the worker was stopped while the agent ran`);

    const verdict: AttemptResult['verdict'] = agent.timedOut ? 'timeout' : v.kind;
    const reason = agent.timedOut
      ? `Agent timed out after ${job.agentTimeoutMs / 1000}s`
      : v.kind === 'fail'
        ? v.reason
        : v.kind === 'none'
          ? noVerdictReason(agent, agent.tail)
          : undefined;
    // A question travels back with the work so far, as a success does: the controller keeps both.
    if ((verdict === 'success' || verdict === 'question') && (await git.anyChanges(worktree)).length)
      await git.commitAll(worktree, `[${job.taskId}] ${job.title} (changes left uncommitted by the agent)`);

    let validation: AttemptResult['validation'] = { result: 'skipped' };
    const t3 = Date.now();
    const changed = verdict === 'success' ? await guardProtectedPaths(git, cwd, job.baseCommit, job.protectedPaths ?? []) : undefined;
    if (changed) validation = { result: 'fail', reason: changed };
    else if (verdict === 'success') {
      const r = await runProcess({
        command: job.validation.command,
        cwd,
        env: { ...env, LAUNCHPAD_TASK_ID: job.taskId, LAUNCHPAD_WORKTREE: worktree },
        timeoutMs: job.validation.timeoutMs,
        signal: ctx.signal,
        record: { records: ctx.records, name: `${name}.validation`, label: `validation of ${job.taskId}` },
        transcript: join(files, 'validation.log'),
        captureBytes: CAPTURE_BYTES,
      });
      if (r.aborted) throw new Error(`${job.taskId}: the worker was stopped while the validation ran`);
      validation = r.timedOut
        ? {
            result: 'timeout',
            reason: `Validation timed out after ${job.validation.timeoutMs / 1000}s: ${job.validation.command}`,
            tail: tailOf(r.tail),
          }
        : r.code === 0
          ? { result: 'pass' }
          : {
              result: 'fail',
              reason: `${job.validation.command} exited with ${r.code ?? r.signal}${lastMeaningfulLine(r.tail) ? `: ${lastMeaningfulLine(r.tail)}` : ''}`,
              tail: tailOf(r.tail),
            };
    }
    const validationMs = Date.now() - t3;

    const t4 = Date.now();
    const commit = (await git.head(worktree))!;
    const ref = refs.result(ctx.workerId);
    const lost = () => new Error(`${job.taskId}: the worker lost the job's lock; another worker continues the attempt`);
    if (ctx.signal.aborted || !(await ctx.holdsLock())) throw lost();
    await pushRef(git, ctx.remote, commit, ref, worktree);
    // Lost while pushing: the result would be refused, and its ref would be left behind.
    if (ctx.signal.aborted || !(await ctx.holdsLock())) {
      await deleteRemoteRefs(git, ctx.remote, [ref]);
      throw lost();
    }
    const pushMs = Date.now() - t4;
    return {
      taskId: job.taskId,
      agentId: job.agentId,
      workerId: ctx.workerId,
      verdict,
      ...(reason ? { reason: redact(reason) } : {}),
      ...(v.kind === 'question' && !agent.timedOut ? { question: redact(v.text) } : {}),
      validation,
      ref,
      commit,
      ...(partial ? { resumedFrom: partial } : {}),
      outputTail: redact(tailOf(agent.tail)),
      ...(report?.costUsd !== undefined ? { costUsd: report.costUsd } : {}),
      ...(report?.limit && verdict !== 'success' ? { limit: report.limit } : {}),
      timings: { fetchMs, setupMs, agentMs, validationMs, pushMs },
    };
  } finally {
    await ctx.cloneLock(() => git.run(['worktree', 'remove', '--force', worktree], { allowFail: true })).catch(() => undefined);
    rmSync(worktree, { recursive: true, force: true });
  }
}

function tailOf(text: string): string {
  return text.length > TAIL_CHARS ? text.slice(-TAIL_CHARS) : text;
}

async function commitsSince(git: Git, base: string, head: string): Promise<string[]> {
  return git.commitSubjects(`${base}..${head}`).catch(() => []);
}

function resumeNote(job: AttemptJob, commits: string[]): string {
  return [
    `NOTE: this attempt (${job.attempt}) of ${job.taskId} was interrupted on another machine; its committed work is in`,
    `this worktree already. Continue from it; do not start over.`,
    ...(commits.length ? ['Its commits:', ...commits.map((c) => `- ${c}`)] : []),
    '',
    '',
  ].join('\n');
}
