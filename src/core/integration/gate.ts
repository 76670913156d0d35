// The integration gate: session_config.integration_check run on the base branch after merges,
// because two tasks that each pass their own validation can still break the base together.
// Every step is a job of the merge queue (and, for concurrent workers, under the merge lock), so
// no merge lands while the base is checked, bisected or reverted. A red result is run once more
// on the same commit (a pass then is flaky: logged, nothing reverted); red twice bisects the
// first-parent merges since the last green commit, reverts the first red one with a new commit
// (and, newest first, the merges of its dependents after it), requeues it with what broke and
// what it collided with, and checks again. What cannot be put right stops the run, uncharged.
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import type { EnvFailure } from '../controller/envFailure';
import type { MergeQueue } from '../controller/mergeQueue';
import { reasonLine } from '../controller/reasonLine';
import type { RunConfig } from '../controller/runConfig';
import type { Session } from '../controller/session';
import type { Git } from '../git/git';
import { keepAttempt } from '../git/keptAttempts';
import { logTimestamp } from '../log/logLine';
import { escapedMessage, runProcess } from '../process/runProcess';
import type { TaskFile } from '../taskFile/schema';
import { ERROR_TAIL_CHARS, requeueAfterIntegration } from '../tasks/transitions';
import {
  emptyIntegrationState,
  type IntegrationState,
  IntegrationStateError,
  readIntegrationState,
  setResult,
  writeIntegrationState,
} from './state';

export type IntegrationCheck = NonNullable<RunConfig['integrationCheck']>;

/** The merge queue's id of the gate's jobs (merges wait behind one that runs, whatever their ids). */
const GATE_JOB = 'integration check';
/** Output kept of one check run. */
const CAPTURE_BYTES = 64 * 1024;
/** Of the check's output, what a requeued task's error_tail holds; the rest goes to the diffs. */
const TAIL_OUTPUT_CHARS = 1200;
/** Each colliding task's diff in an error_tail, as merge.ts bounds a conflict's. */
const DIFF_CHARS = 1600;

type CheckResult = { kind: 'pass' } | { kind: 'fail'; reason: string; tail: string } | { kind: 'interrupted' };

/** A first-parent merge of a task into the base branch. */
interface TaskMerge {
  commit: string;
  firstParent: string;
  branchTip: string;
  taskId: string;
}

export class IntegrationGate {
  /** Set once the base cannot be put right: no merge lands for the rest of the session. */
  refusal: EnvFailure | undefined;
  private readonly jobs = new Set<Promise<unknown>>();
  /** The head an idle check last ran at, so going idle twice at the same head checks once. */
  private idleHead: string | undefined;
  /** The state file could not be read (said once). */
  private unreadable = false;
  /** Tasks requeued by the gate and not yet seen by the run loop going idle. */
  private requeued = false;

  constructor(readonly check: IntegrationCheck) {}

  /** The session's gate: only with a check configured, and not in place (nothing merges there). */
  static of(s: Session): IntegrationGate | undefined {
    const check = s.config.integrationCheck;
    if (!check) return undefined;
    if (s.inPlace) {
      s.log({ type: 'WARN', message: 'session_config.integration_check is ignored in place: nothing is merged there' });
      return undefined;
    }
    return new IntegrationGate(check);
  }

  /**
   * Why no merge may land now: this session's stop for a base it could not put right, or another
   * concurrent worker's (the shared state says red outside a check).
   */
  refusalOf(s: Session): EnvFailure | undefined {
    if (this.refusal) return this.refusal;
    const state = this.read(s);
    if (state.status !== 'red') return undefined;
    return {
      category: 'ENV_SETUP',
      cause: `the base branch ${s.baseBranch} failed its integration check at ${state.commit?.slice(0, 7) ?? '?'} and was not put right`,
      advice: `fix the base (the check: ${this.check.command}), or remove session_config.integration_check`,
    };
  }

  /** At the session's start: the queue's first job checks the base unless it is the last green commit. */
  start(s: Session, merges: MergeQueue): void {
    void this.track(merges.enqueue(GATE_JOB, () => this.gate(s, { atStart: true }))).catch((err: unknown) => this.failed(s, err));
  }

  /** Inside a merge's queue job, once it is recorded: checks when `every` merges wait unchecked. */
  async afterMerge(s: Session): Promise<void> {
    if (this.refusal || s.stopping) return;
    if ((await this.unchecked(s, this.read(s))) >= this.check.every) await this.gate(s, {});
  }

  /**
   * The run would go idle: merges not checked yet are checked now. True when a check ran (the
   * loop looks at the pool again: a task may have been requeued).
   */
  async beforeIdle(s: Session, merges: MergeQueue): Promise<boolean> {
    await this.settled();
    if (this.refusal || s.stopping) return false;
    // The start's check requeued a task after the loop's pass: the pool has work again.
    if (this.requeued) {
      this.requeued = false;
      return true;
    }
    const head = await s.git.resolve('HEAD');
    if (!head || head === this.idleHead || !(await this.unchecked(s, this.read(s)))) return false;
    this.idleHead = head;
    await this.track(merges.enqueue(GATE_JOB, () => this.gate(s, {}))).catch((err: unknown) => this.failed(s, err));
    return true;
  }

  /** Resolves when the gate's jobs started so far have ended. */
  async settled(): Promise<void> {
    while (this.jobs.size) await Promise.allSettled([...this.jobs]);
  }

  private track<T>(job: Promise<T>): Promise<T> {
    const tracked = job.finally(() => this.jobs.delete(tracked));
    this.jobs.add(tracked);
    return tracked;
  }

  /** The state; one that cannot be read is said once and taken as none: the base is checked again. */
  private read(s: Session): IntegrationState {
    try {
      return readIntegrationState(s.paths.integrationState) ?? emptyIntegrationState();
    } catch (err) {
      if (!(err instanceof IntegrationStateError)) throw err;
      if (!this.unreadable) s.log({ type: 'WARN', message: `${err.message}: taken as no state, the base is checked again` });
      this.unreadable = true;
      return emptyIntegrationState();
    }
  }

  private update(s: Session, change: (state: IntegrationState) => void): IntegrationState {
    const state = this.read(s);
    change(state);
    writeIntegrationState(s.paths.integrationState, state);
    return state;
  }

  /** Commits on the base branch's first-parent line since the last green one (all of them when none was). */
  private async unchecked(s: Session, state: IntegrationState): Promise<number> {
    const range = state.last_green && (await s.git.commitExists(state.last_green)) ? `${state.last_green}..HEAD` : 'HEAD';
    const r = await s.git.run(['rev-list', '--count', '--first-parent', range], { cwd: s.toplevel, allowFail: true });
    return r.code === 0 ? Number(r.stdout.trim()) : 1;
  }

  /** The check, the re-run of a red result, and the bisect and reverts of a red base. */
  private async gate(s: Session, opts: { atStart?: boolean }): Promise<void> {
    try {
      await this.gateSteps(s, opts);
    } catch (err) {
      this.failed(s, err);
    }
  }

  /** The gate's own failure (git, the disk, the merge lock) is the machine's: the session stops, nothing charged. */
  private failed(s: Session, err: unknown): void {
    const message = (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
    this.stop(s, {
      category: 'ENV_SETUP',
      cause: `the integration check could not run: ${message}`,
      advice: 'fix what stopped it (see harness-progress.txt), then run again',
    });
  }

  private async gateSteps(s: Session, opts: { atStart?: boolean }): Promise<void> {
    if (this.refusal || s.stopping) return;
    // A session that stopped mid-bisect or mid-revert left the state red.
    if (opts.atStart && this.read(s).status === 'red') await this.requeueReverted(s);
    const head = await s.git.resolve('HEAD');
    const before = this.read(s);
    if (!head) return;
    // At the last green commit again (a person reset the base): nothing to check.
    if (head === before.last_green) {
      if (before.status !== 'green') this.update(s, (st) => setResult(st, 'green', head));
      return;
    }
    const short = head.slice(0, 7);
    const worktree = await this.openWorktree(s, head);
    try {
      this.update(s, (st) => setResult(st, 'checking', head));
      s.log({ type: 'VALIDATE', category: 'INTEGRATION', message: `commit=${short} command="${this.check.command}" started` });
      const first = await this.runCheck(s, worktree, head);
      if (first.kind === 'interrupted') return this.interrupted(s, before);
      if (first.kind === 'pass') return this.green(s, head, 'PASS');
      s.log({ type: 'VALIDATE', category: 'INTEGRATION', message: `commit=${short} result=FAIL: ${first.reason} (running it once more)` });
      const again = await this.checkAgain(s, worktree, head);
      if (again.kind === 'interrupted') return this.interrupted(s, before);
      if (again.kind === 'pass') return this.green(s, head, 'FLAKY');
      s.log({ type: 'VALIDATE', category: 'INTEGRATION', message: `commit=${short} result=FAIL: ${again.reason}` });
      this.update(s, (st) => setResult(st, 'red', head, logTimestamp()));
      const lastGreen = before.last_green && (await s.git.commitExists(before.last_green)) ? before.last_green : undefined;
      if (opts.atStart || !lastGreen) {
        return this.stop(s, {
          category: 'ENV_SETUP',
          cause: `the base branch ${s.baseBranch} fails its integration check at ${short} before this run merged anything: ${again.reason}`,
          advice: `fix the base, or remove session_config.integration_check (the check: ${this.check.command})`,
        });
      }
      const culprit = await this.bisect(s, worktree, lastGreen, head, again);
      if (!culprit) return;
      await this.revert(s, worktree, culprit.merges, culprit.index, culprit.failure);
    } finally {
      await this.closeWorktree(s, worktree);
    }
  }

  /**
   * Tasks whose merge the gate reverted (since the last green commit) but a crash kept from being
   * requeued: still completed, their work no longer on the base. Requeued, not charged.
   */
  private async requeueReverted(s: Session): Promise<void> {
    const lastGreen = this.read(s).last_green;
    if (!lastGreen || !(await s.git.commitExists(lastGreen))) return;
    const out = (await s.git.run(['log', '--first-parent', '--reverse', '--format=%H%x09%s', `${lastGreen}..HEAD`], { cwd: s.toplevel }))
      .stdout;
    const reverted = new Map<string, string>();
    for (const line of out.split('\n')) {
      const [commit = '', subject = ''] = line.split('\t');
      const revert = /^Revert "Merge \[([^\]]+)\] /.exec(subject)?.[1];
      const merge = /^Merge \[([^\]]+)\] /.exec(subject)?.[1];
      if (revert) reverted.set(revert, commit);
      else if (merge) reverted.delete(merge);
    }
    const { file } = s.store.load();
    for (const [id, revert] of reverted) {
      if (file.tasks.find((t) => t.id === id)?.status !== 'completed') continue;
      await s.transact((f) => requeueAfterIntegration(f, id, { charged: false }));
      this.requeued = true;
      s.log({
        type: 'RECOVERY',
        taskId: id,
        message: `action="requeued" reason="its merge was reverted by ${revert.slice(0, 7)} for the integration check, and the run stopped before requeuing it" (not charged)`,
      });
    }
  }

  private green(s: Session, commit: string, result: 'PASS' | 'FLAKY'): void {
    s.log({ type: 'VALIDATE', category: 'INTEGRATION', message: `commit=${commit.slice(0, 7)} result=${result}` });
    this.update(s, (st) => setResult(st, 'green', commit, logTimestamp()));
  }

  /** A stop interrupted the check: the state says what it said before. */
  private interrupted(s: Session, before: IntegrationState): void {
    this.update(s, (st) => setResult(st, before.status, before.commit));
  }

  /** The base cannot be put right by the gate: no merge lands, the session stops (exit 2), nothing charged. */
  private stop(s: Session, failure: EnvFailure): void {
    this.refusal ??= failure;
    s.log({ type: 'ERROR', category: 'INTEGRATION', message: failure.cause });
    s.stopForEnvironment(failure);
  }

  /**
   * The check run once more at `commit` after it failed there: a pass now is a flaky result,
   * logged with the commit and counted, and taken as a pass.
   */
  private async checkAgain(s: Session, worktree: string, commit: string): Promise<CheckResult> {
    const again = await this.runCheck(s, worktree, commit);
    if (again.kind === 'pass') {
      s.log({
        type: 'WARN',
        message: `integration check flaky at commit=${commit.slice(0, 7)}: it failed, then passed on the same commit`,
      });
      this.update(s, (st) => st.flaky.push({ commit, at: logTimestamp() }));
    }
    return again;
  }

  /**
   * The first red merge among the first-parent merges after `lastGreen`, by binary search: each
   * step runs the check at a merge, and once more where it fails. Undefined when the session stopped instead.
   */
  private async bisect(
    s: Session,
    worktree: string,
    lastGreen: string,
    head: string,
    headFailure: { reason: string; tail: string },
  ): Promise<{ merges: TaskMerge[]; index: number; failure: { reason: string; tail: string } } | undefined> {
    const merges = await taskMerges(s, `${lastGreen}..${head}`);
    const notMerge = () =>
      this.stop(s, {
        category: 'ENV_SETUP',
        cause: `the base branch ${s.baseBranch} fails its integration check at ${head.slice(0, 7)}, and no task's merge since ${lastGreen.slice(0, 7)} is the first to fail: ${headFailure.reason}`,
        advice: `fix the commit that broke it (git log --first-parent ${lastGreen.slice(0, 7)}..${s.baseBranch}), or remove session_config.integration_check`,
      });
    if (!merges.length) return (notMerge(), undefined);
    let lo = -1;
    let hi = merges.length - 1;
    let failure = headFailure;
    const steps = Math.ceil(Math.log2(merges.length + 1));
    let step = 0;
    const probe = async (i: number): Promise<CheckResult> => {
      const m = merges[i]!;
      // A failure is believed only when it fails again: a flaky check must not blame an innocent merge.
      let r = await this.runCheck(s, worktree, m.commit);
      if (r.kind === 'fail') r = await this.checkAgain(s, worktree, m.commit);
      if (r.kind === 'interrupted') return r;
      s.log({
        type: 'VALIDATE',
        category: 'INTEGRATION',
        message: `bisect step ${++step}/${steps}: commit=${m.commit.slice(0, 7)} (merge of ${m.taskId}) result=${r.kind === 'pass' ? 'PASS' : 'FAIL'}`,
      });
      return r;
    };
    // The head is red; when it is not the last merge itself (a commit came after it), that merge is checked too.
    if (merges[hi]!.commit !== head) {
      const r = await probe(hi);
      if (r.kind === 'interrupted') return undefined;
      if (r.kind === 'pass') return (notMerge(), undefined);
      failure = r;
    }
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      const r = await probe(mid);
      if (r.kind === 'interrupted') return undefined;
      if (r.kind === 'pass') lo = mid;
      else {
        hi = mid;
        failure = r;
      }
    }
    return { merges, index: hi, failure };
  }

  /**
   * Reverts the culprit's merge with a new commit (after those of its dependents merged after it,
   * newest first), requeues it charged and them uncharged, then checks the base again.
   */
  private async revert(s: Session, worktree: string, merges: TaskMerge[], index: number, failure: { reason: string; tail: string }) {
    const culprit = merges[index]!;
    const { file } = s.store.load();
    const dependents = dependentsOf(file, culprit.taskId);
    const later = merges.slice(index + 1).filter((m) => dependents.has(m.taskId));
    const collided = await collisions(s, culprit);
    const together = collided.length ? ` together with ${collided.map((c) => c.taskId).join(', ')}` : '';
    const reason = `reverted: the base failed its integration check after it merged${together}: ${failure.reason}`;
    const tail = await this.tailFor(s, culprit, collided, failure);
    for (const m of [...later.reverse(), culprit]) {
      const isCulprit = m === culprit;
      // Its commits stay reachable through the merge, but a kept ref names them for a person.
      const attempts = file.tasks.find((t) => t.id === m.taskId)?.attempts ?? 0;
      await keepAttempt(s.git, m.taskId, attempts, m.branchTip, `refs/heads/${s.baseBranch}`, { merged: true });
      const revert = await this.revertMerge(s, m);
      if (!revert) return;
      const why = isCulprit ? reason : `reverted with ${culprit.taskId}, which it depends on: ${culprit.taskId} broke the base`;
      this.update(s, (st) =>
        st.reverted.push({
          task: m.taskId,
          merge: m.commit,
          revert,
          reason: why,
          collided_with: isCulprit ? collided.map((c) => c.taskId) : [],
          at: logTimestamp(),
        }),
      );
      this.requeued = true;
      const entry = await s.transact((f) =>
        requeueAfterIntegration(f, m.taskId, isCulprit ? { charged: true, reason, tail } : { charged: false }),
      );
      if (entry) s.log({ type: 'ERROR', taskId: m.taskId, category: 'INTEGRATION', message: entry.reason });
      else s.log({ type: 'WARN', taskId: m.taskId, message: `${why}; requeued, not charged` });
      s.note(`${m.taskId}'s merge ${m.commit.slice(0, 7)} was reverted by ${revert.slice(0, 7)}: ${why.replace(/^reverted: /, '')}`);
    }
    const head = (await s.git.head())!;
    s.state.head = head;
    s.pool.baseMoved();
    const r = await this.runCheck(s, worktree, head);
    if (r.kind === 'interrupted') return;
    if (r.kind === 'pass') return this.green(s, head, 'PASS');
    s.log({ type: 'VALIDATE', category: 'INTEGRATION', message: `commit=${head.slice(0, 7)} result=FAIL: ${r.reason}` });
    this.update(s, (st) => setResult(st, 'red', head, logTimestamp()));
    this.stop(s, {
      category: 'ENV_SETUP',
      cause: `the base branch ${s.baseBranch} still fails its integration check after ${culprit.taskId}'s merge was reverted: ${r.reason}\n${boundedText(r.tail.trimEnd(), TAIL_OUTPUT_CHARS, 'end')}`,
      advice: `fix ${s.baseBranch} by hand (the check: ${this.check.command}), or remove session_config.integration_check`,
    });
  }

  /**
   * `git revert -m 1` of a task's merge in the main working tree. One that fails (a conflict with
   * what merged after it, a hook, a lock) is aborted and stops the run: the person reverts it.
   */
  private async revertMerge(s: Session, m: TaskMerge): Promise<string | undefined> {
    const top = { cwd: s.toplevel, allowFail: true };
    const r = await s.git.run(['revert', '-m', '1', '--no-edit', m.commit], top);
    if (r.code !== 0) {
      const conflicts = (await s.git.run(['diff', '--name-only', '--diff-filter=U'], top)).stdout.trim().split('\n').filter(Boolean);
      if (existsSync(await s.git.gitPath('REVERT_HEAD'))) await s.git.run(['revert', '--abort'], top);
      const why = conflicts.length
        ? `conflicts in ${conflicts.join(', ')}`
        : `failed: ${(r.stderr.trim() || r.stdout.trim()).split('\n')[0] ?? `exit ${r.code}`}`;
      s.log({ type: 'ROLLBACK', taskId: m.taskId, message: `git revert --abort (reverting merge ${m.commit.slice(0, 7)} ${why})` });
      this.stop(s, {
        category: 'ENV_SETUP',
        cause: `${m.taskId}'s merge ${m.commit.slice(0, 7)} broke the base's integration check, and reverting it ${why}`,
        advice: `revert it by hand (git revert -m 1 ${m.commit}, resolving the conflict and keeping git's message): the next run requeues ${m.taskId}`,
      });
      return undefined;
    }
    const revert = (await s.git.head())!;
    s.log({
      type: 'ROLLBACK',
      taskId: m.taskId,
      category: 'INTEGRATION',
      message: `git revert -m 1 ${m.commit.slice(0, 7)}: new commit ${revert.slice(0, 7)} on ${s.baseBranch}`,
    });
    return revert;
  }

  /** What the culprit's next attempt is shown: why it was reverted, the check's output, the changes it never saw. */
  private async tailFor(s: Session, culprit: TaskMerge, collided: TaskMerge[], failure: { reason: string; tail: string }): Promise<string> {
    const names = collided.map((c) => c.taskId).join(', ');
    const lines = [
      `Your work was merged into ${s.baseBranch} (merge ${culprit.commit.slice(0, 7)}), then reverted: the base failed its integration check after it merged${names ? ` together with ${names}` : ''}.`,
      `The check: ${this.check.command}`,
      `Its error: ${failure.reason}`,
      'Its output (tail):',
      boundedText(failure.tail.trimEnd(), TAIL_OUTPUT_CHARS, 'end'),
    ];
    for (const c of collided) {
      const diff = await s.git.run(['diff', c.firstParent, c.commit], { cwd: s.toplevel, allowFail: true });
      lines.push(
        `What ${c.taskId} changed, merged after your attempt started (git diff ${c.firstParent.slice(0, 7)} ${c.commit.slice(0, 7)}):`,
        boundedText(diff.stdout.trimEnd() || '(no change)', DIFF_CHARS),
      );
    }
    lines.push(`Start from ${s.baseBranch} as it is now (your change is not in it) and make your change work with what is there.`);
    return lines.join('\n').slice(0, ERROR_TAIL_CHARS);
  }

  /** Runs the check at `commit` in the gate's worktree, in its own process group, with its time limit. */
  private async runCheck(s: Session, worktree: string, commit: string): Promise<CheckResult> {
    await s.git.run(['checkout', '-q', '--detach', '-f', commit], { cwd: worktree });
    // Ignored files (installed dependencies) stay: the check may reuse them.
    await s.git.run(['clean', '-q', '-ffd'], { cwd: worktree });
    const cwd = s.projectDirIn(worktree);
    const r = await runProcess({
      command: this.check.command,
      cwd,
      env: { ...process.env, LAUNCHPAD_INTEGRATION_COMMIT: commit, LAUNCHPAD_WORKTREE: worktree },
      timeoutMs: this.check.timeoutMs,
      signal: s.stopSignal,
      captureBytes: CAPTURE_BYTES,
      record: { records: s.records, name: 'integration-check', label: 'integration check' },
    });
    if (r.escaped) s.log({ type: 'WARN', message: escapedMessage('integration check', r.escaped) });
    if (r.aborted && s.stopping) return { kind: 'interrupted' };
    if (r.spawnError) throw new Error(`could not start the integration check in ${cwd}: ${r.spawnError}`);
    if (r.code === 0 && !r.timedOut) return { kind: 'pass' };
    const line = reasonLine(r.tail);
    const reason = r.timedOut
      ? `${this.check.command} timed out after ${this.check.timeoutMs / 1000}s`
      : `${this.check.command} exited with ${r.code ?? r.signal}${line ? `: ${line}` : ''}`;
    return { kind: 'fail', reason, tail: r.tail };
  }

  /** The gate's own worktree under the worktree root, detached at `commit` (one left by a crash is replaced). */
  private async openWorktree(s: Session, commit: string): Promise<string> {
    const path = gateWorktree(s);
    await this.closeWorktree(s, path);
    await s.git.addDetachedWorktree(path, commit);
    return path;
  }

  private async closeWorktree(s: Session, path: string): Promise<void> {
    if (!existsSync(path)) return;
    await s.git.removeWorktree(path);
    rmSync(path, { recursive: true, force: true });
  }
}

/** The gate's worktree: a name no task id can take (ids start with a letter or digit). */
export function gateWorktree(s: Pick<Session, 'config'>): string {
  return join(s.config.worktreeRoot, '.integration');
}

/**
 * A revert of one of our merges that a crash left half done (REVERT_HEAD in the main
 * repository): aborted before anything else. Returns its subject, or undefined when there was none.
 */
export async function abortInterruptedRevert(git: Git): Promise<string | undefined> {
  if (!existsSync(await git.gitPath('REVERT_HEAD'))) return undefined;
  const msg = (await git.run(['show', '-s', '--format=%s', 'REVERT_HEAD'], { allowFail: true })).stdout.trim();
  if (!/^Merge \[[^\]]+\] /.test(msg)) return undefined;
  await git.run(['revert', '--abort'], { allowFail: true });
  return msg;
}

/** The first-parent merges of tasks in `range` of the base branch, oldest first. */
async function taskMerges(s: Session, range: string): Promise<TaskMerge[]> {
  const out = (await s.git.run(['log', '--first-parent', '--merges', '--reverse', '--format=%H %P%x09%s', range], { cwd: s.toplevel }))
    .stdout;
  return out.split('\n').flatMap((line) => {
    const [hashes = '', subject = ''] = line.split('\t');
    const [commit, firstParent, branchTip] = hashes.split(' ');
    const id = /^Merge \[([^\]]+)\] /.exec(subject)?.[1];
    return commit && firstParent && branchTip && id ? [{ commit, firstParent, branchTip, taskId: id }] : [];
  });
}

/** The tasks merged between the culprit's attempt's start and its merge: what its agent never saw. */
async function collisions(s: Session, culprit: TaskMerge): Promise<TaskMerge[]> {
  const base = await s.git.run(['merge-base', culprit.firstParent, culprit.branchTip], { cwd: s.toplevel, allowFail: true });
  if (base.code !== 0) return [];
  return (await taskMerges(s, `${base.stdout.trim()}..${culprit.firstParent}`)).filter((m) => m.taskId !== culprit.taskId);
}

/** Every task that depends on `id`, directly or through others. */
function dependentsOf(file: TaskFile, id: string): Set<string> {
  const found = new Set<string>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const t of file.tasks) {
      if (found.has(t.id) || t.id === id) continue;
      if (t.depends_on.some((d) => d === id || found.has(d))) {
        found.add(t.id);
        grew = true;
      }
    }
  }
  return found;
}

function boundedText(text: string, max: number, keep: 'start' | 'end' = 'start'): string {
  if (text.length <= max) return text;
  return keep === 'start'
    ? `${text.slice(0, max)}\n… (${text.length - max} more characters)`
    : `… (${text.length - max} earlier characters)\n${text.slice(-max)}`;
}
