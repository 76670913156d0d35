// The long run: load and check the harness, show the status and the recovery plan, ask to
// continue, then rounds until nothing more can move — answer the gates a person can answer now,
// plan every milestone that may start (sequentially: plans are light), run the approved ones
// concurrently (run-plan → review-work, each in its own worktree), integrate and merge them
// lower-numbered first — and, when every milestone is done, the final E2E gate.
import { existsSync, mkdirSync } from 'node:fs';

import type { TerminalFactory } from '../controller/types';
import { Git } from '../git/git';
import { InputError } from '../inputError';
import { tryAcquireLock } from '../lock';
import { logTimestamp } from '../log/logLine';
import { type Logger, silentLogger } from '../logger';
import { ProcessRecords } from '../process/processRecords';
import { type AgentCommands, type LongRunContext, MilestoneControl, type PhaseEnd } from './context';
import { abortRun, approve, cleanUp, type DecisionResult, pauseRun, reject, retry, rollback, skip } from './decisions';
import { executeMilestone } from './executePhase';
import { finalGate } from './finalGate';
import { type Decision, describeGate, type Gate, type Gatekeeper, isApprovalGate, openGates, unattended } from './gates';
import { integrateMilestone } from './integratePhase';
import { logEntry, type LongRun, LongRunStore } from './longRun';
import { compareMilestoneIds } from './milestoneFile';
import { excludeLongRunFiles } from './milestoneGit';
import { HarnessPaths } from './paths';
import { planMilestone } from './planPhase';
import { reviewMilestone } from './reviewPhase';
import { blockingDependencies, startableMilestones, stateOf } from './schedule';
import { formatDuration } from './stateFile';
import { buildStatus, formatStatus } from './statusBlock';
import * as transitions from './transitions';

/** Exit codes of `launchpad milestones run` (3, another run holds the lock, comes from the lock). */
export const LONG_RUN_EXIT = {
  /** The long run is completed (or paused by a person's choice). */
  COMPLETED: 0,
  /** Stopped with a milestone failed or blocked, a stop, or an error that left the state as it was. */
  STOPPED: 1,
  /** Bad input: a malformed file (named with its line), a missing agent command. */
  USAGE: 2,
  /** Waiting for a person's approval or decision, and nobody could be asked. */
  AWAITING: 4,
  /** An agent hit a persistent usage or rate limit: state saved, run again later. */
  RATE_LIMITED: 5,
} as const;

export interface LongRunOutcome {
  exitCode: 0 | 1 | 4 | 5;
  reason: 'completed' | 'paused' | 'aborted' | 'awaiting' | 'failed' | 'blocked' | 'stopped' | 'rate-limited' | 'error';
  message: string;
  gates: Gate[];
  summary?: string;
}

export interface LongRunOptions {
  /** The harness directory (holding state.md and milestones/). */
  dir: string;
  /** Agent commands given by the front end; state.md's Agents section fills the rest. */
  agents?: Partial<AgentCommands>;
  gatekeeper?: Gatekeeper;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** Lines for the person watching. */
  say?: (text: string) => void;
  onControllerLine?: (id: string, line: string) => void;
  terminals?: TerminalFactory;
  /** How often the duration guard looks (ms). */
  guardTickMs?: number;
}

/** Agent commands from the environment, after the front end's and state.md's. */
const ENV_AGENTS: Record<keyof AgentCommands, string[]> = {
  planner: ['LAUNCHPAD_PLANNER'],
  worker: ['LAUNCHPAD_WORKER', 'LAUNCHPAD_AGENT'],
  reviewer: ['LAUNCHPAD_REVIEWER'],
};

/** The harness directory's paths, with the repository it belongs to. */
export async function openHarness(dir: string): Promise<HarnessPaths> {
  const top = await new Git(dir).toplevel().catch(() => undefined);
  if (!top) throw new InputError(`${dir}: not inside a git repository (a long run merges its milestones with git)`);
  // A harness inside a worktree still belongs to the main checkout that owns the repository.
  return new HarnessPaths(dir, top);
}

export class LongRunner {
  private stopRequested = false;
  private readonly controls = new Map<string, MilestoneControl>();
  /** Gates a person chose to decide later in this run: not asked again until something else changes them. */
  private readonly deferred = new Set<string>();
  private readonly say: (text: string) => void;

  constructor(private readonly opts: LongRunOptions) {
    this.say = opts.say ?? (() => undefined);
  }

  /** Ends every agent and controller of this run; their milestones resume where they were. */
  stop(): void {
    this.stopRequested = true;
    for (const c of this.controls.values()) c.stop('stop');
  }

  async run(): Promise<LongRunOutcome> {
    const paths = await openHarness(this.opts.dir);
    const store = new LongRunStore(paths);
    // Checked before the lock folder is made: a directory without a harness is left as it was.
    if (!existsSync(paths.state)) store.read();
    mkdirSync(paths.artefacts, { recursive: true });
    const lock = tryAcquireLock(paths.lock, 'launchpad milestones run');
    let guard: NodeJS.Timeout | undefined;
    try {
      const run = store.load();
      const git = new Git(paths.repoTop);
      await excludeLongRunFiles(paths, git);
      const records = new ProcessRecords(paths.processRecords);
      for (const label of records.killAll()) store.log(`recovery: ended ${label}, left running by an interrupted run`);

      if (run.state.overall.status === 'failed')
        return this.outcome(1, 'aborted', `this long run ${run.state.overall.reason ?? 'failed'}; nothing more runs`, run);
      if (run.state.overall.status === 'completed') return this.outcome(0, 'completed', 'this long run is already completed', run);
      if (!run.milestones.size)
        throw new InputError(`${paths.rel(paths.milestonesDir)}/: no milestone files (M1-<name>.md); see _example.md there`);

      const baseBranch = run.state.overall.baseBranch ?? (await git.currentBranch());
      if (!baseBranch) throw new InputError(`${paths.repoTop}: HEAD is detached; check out the branch the milestones merge into`);
      const current = await git.currentBranch();
      if (current !== baseBranch)
        throw new InputError(
          `${paths.repoTop} is on ${current ?? 'a detached HEAD'}, but this long run merges into ${baseBranch}: check out ${baseBranch} first`,
        );
      if ((await git.run(['var', 'GIT_COMMITTER_IDENT'], { allowFail: true })).code !== 0) {
        throw new InputError('git has no identity for merge commits: set user.name and user.email');
      }
      const agents = this.resolveAgents(run);
      const ctx: LongRunContext = {
        paths,
        store,
        git,
        baseBranch,
        agents,
        env: this.opts.env ?? process.env,
        logger: this.opts.logger ?? silentLogger,
        records,
        say: (text, id) => this.say(`${id ? `[${id}] ` : ''}${text}`),
        onControllerLine: this.opts.onControllerLine,
        terminals: this.opts.terminals,
        control: (id) => {
          let c = this.controls.get(id);
          if (!c) this.controls.set(id, (c = new MilestoneControl()));
          if (this.stopRequested) c.stop('stop');
          return c;
        },
      };

      const report = formatStatus(buildStatus(run), { recovery: true });
      this.say(report);
      const gatekeeper = this.opts.gatekeeper ?? unattended;
      const start = await gatekeeper.decide({ kind: 'session', text: report });
      if (start?.kind === 'pause') return this.outcome(0, 'paused', pauseRun(store).message, store.load());
      if (start?.kind === 'abort')
        return this.outcome(1, 'aborted', abortRun(store, run, start.reason ?? 'at the start of a run').message, store.load());

      store.update((s) => {
        s.overall.baseBranch ??= baseBranch;
        s.overall.started ??= logTimestamp();
        if (s.overall.status !== 'completing') transitions.startRun(s.overall);
        s.log.push(
          logEntry(
            `run started (pid ${process.pid}); agents: planner ${agents.planner}, worker ${agents.worker}, reviewer ${agents.reviewer}`,
          ),
        );
      });
      guard = setInterval(() => this.checkDurations(store), this.opts.guardTickMs ?? 1000);
      guard.unref();
      return await this.loop(ctx, gatekeeper);
    } finally {
      clearInterval(guard);
      lock.release();
    }
  }

  private resolveAgents(run: LongRun): AgentCommands {
    const env = this.opts.env ?? process.env;
    const missing: string[] = [];
    const pick = (role: keyof AgentCommands): string => {
      const found = [this.opts.agents?.[role], run.state.agents[role], ...ENV_AGENTS[role].map((k) => env[k])].find((c) => c && c.trim());
      if (!found)
        missing.push(
          `${role} (--${role}, "- ${role[0]!.toUpperCase()}${role.slice(1)}:" under "## Agents" in state.md, or $${ENV_AGENTS[role][0]})`,
        );
      return found ?? '';
    };
    const agents = { planner: pick('planner'), worker: pick('worker'), reviewer: pick('reviewer') };
    if (missing.length) throw new InputError(`no agent command for the ${missing.join('; ')}`);
    return agents;
  }

  private async loop(ctx: LongRunContext, gatekeeper: Gatekeeper): Promise<LongRunOutcome> {
    for (;;) {
      if (this.stopRequested) return this.stopped(ctx);
      const round = await this.round(ctx, gatekeeper);
      if (round.halt) return round.halt;
      if (round.progressed) continue;

      const run = ctx.store.load();
      const allDone = run.state.milestones.every((m) => m.status === 'completed' || m.status === 'skipped');
      if (allDone && run.state.overall.awaiting !== 'e2e') {
        const c = ctx.control('final');
        const end = await finalGate(ctx, c.signal);
        this.controls.delete('final');
        if (end.kind === 'stopped') return this.stopped(ctx);
        if (end.kind === 'completed') {
          this.say(end.summary);
          return this.outcome(
            0,
            'completed',
            'long run completed: every milestone passed and the final E2E gate passed',
            ctx.store.load(),
            end.summary,
          );
        }
        if (end.kind === 'corrective') {
          this.say(`final E2E gate failed: corrective milestone ${end.id} added`);
          continue;
        }
        // A gate: asked at the top of the next round.
        continue;
      }
      return this.idle(run);
    }
  }

  /** One round; `progressed` when any milestone or gate moved. */
  private async round(ctx: LongRunContext, gatekeeper: Gatekeeper): Promise<{ progressed: boolean; halt?: LongRunOutcome }> {
    let progressed = false;
    // 1. Gates: a person who can be asked answers now; the others stay open.
    for (const gate of openGates(ctx.store.load())) {
      const key = gateKey(gate);
      if (this.deferred.has(key)) continue;
      const decision = await gatekeeper.decide(gate);
      if (!decision) {
        this.deferred.add(key);
        continue;
      }
      const result = await this.applyDecision(ctx, gate, decision);
      if (result.halt) return { progressed: true, halt: result.halt };
      this.say(result.message);
      progressed = true;
    }
    if (this.stopRequested) return { progressed, halt: this.stopped(ctx) };

    // 2. Plan-crafting for restarted plans and every milestone that may start, one at a time.
    let run = ctx.store.load();
    const toPlan = [
      ...run.state.milestones.filter((m) => m.status === 'planning' && !m.awaiting).map((m) => m.id),
      ...startableMilestones(run, run.state.settings.maxParallel),
    ];
    for (const id of toPlan) {
      const halt = this.settle(ctx, id, await this.phase(ctx, id, planMilestone));
      if (halt) return { progressed: true, halt };
    }
    if (toPlan.length) return { progressed: true };

    // 3. Approved milestones run their plan and review concurrently, each in its own worktree.
    run = ctx.store.load();
    const running = run.state.milestones
      .filter((m) => (m.status === 'executing' || m.status === 'validating') && !m.awaiting)
      .map((m) => m.id);
    if (running.length) {
      const ends = await Promise.all(running.map(async (id) => [id, await this.pipeline(ctx, id)] as const));
      const rateLimited = ends.find(([, e]) => e.kind === 'rate-limited');
      if (rateLimited) return { progressed: true, halt: this.rateLimited(ctx, rateLimited[1]) };
      for (const [id, end] of ends) {
        const halt = this.settle(ctx, id, end);
        if (halt) return { progressed: true, halt };
      }
      return { progressed: true };
    }

    // 4. Integration and merge, lower-numbered first: each is checked against the base as the ones before it left it.
    run = ctx.store.load();
    const integrating = run.state.milestones
      .filter((m) => m.status === 'integrating' && !m.awaiting)
      .map((m) => m.id)
      .sort(compareMilestoneIds);
    for (const id of integrating) {
      const halt = this.settle(ctx, id, await this.phase(ctx, id, integrateMilestone));
      if (halt) return { progressed: true, halt };
      progressed = true;
    }
    return { progressed };
  }

  /** run-plan → review-work for one milestone, until it leaves those two statuses. */
  private async pipeline(ctx: LongRunContext, id: string): Promise<PhaseEnd> {
    for (;;) {
      const m = stateOf(ctx.store.load(), id);
      if (m.awaiting) return { kind: 'gate' };
      const step = m.status === 'executing' ? executeMilestone : m.status === 'validating' ? reviewMilestone : undefined;
      if (!step) return { kind: 'advanced' };
      const end = await this.phase(ctx, id, step);
      if (end.kind !== 'advanced') return end;
    }
  }

  private async phase(ctx: LongRunContext, id: string, step: (ctx: LongRunContext, id: string) => Promise<PhaseEnd>): Promise<PhaseEnd> {
    try {
      return await step(ctx, id);
    } catch (err) {
      // A file a person broke is bad input (exit 2); anything else stops the run with the state as it was.
      if (err instanceof InputError) throw err;
      ctx.logger.error(err instanceof Error ? err : String(err));
      return { kind: 'error', message: `${id}: ${err instanceof Error ? err.message : String(err)}` };
    } finally {
      this.controls.delete(id);
    }
  }

  /** A phase's end as the run sees it; returns an outcome when the run must stop. */
  private settle(ctx: LongRunContext, id: string, end: PhaseEnd): LongRunOutcome | undefined {
    switch (end.kind) {
      case 'advanced':
      case 'gate':
      case 'failed':
        return undefined;
      case 'rate-limited':
        return this.rateLimited(ctx, end);
      case 'error':
        ctx.store.log(`stopped: ${end.message}`, id);
        return this.outcome(1, 'error', end.message, ctx.store.load());
      case 'awaiting-people':
        return this.outcome(4, 'awaiting', `waiting for a person:\n- ${id}: ${end.message}`, ctx.store.load());
      case 'stopped':
        if (end.cause === 'duration') {
          this.durationGate(ctx, id);
          return undefined;
        }
        return end.cause === 'rate-limit' ? undefined : this.stopped(ctx);
    }
  }

  private durationGate(ctx: LongRunContext, id: string): void {
    const run = ctx.store.load();
    const m = stateOf(run, id);
    const elapsed = m.since ? (Date.now() - Date.parse(m.since)) / 1000 : 0;
    const reason = `has been ${m.status} for ${formatDuration(elapsed)}, longer than its share (${formatDuration(guardLimit(run))}: the greater of the Duration Guard and Duration Guard Factor × the mean duration of the completed milestones); continue, re-scope, or abort?`;
    ctx.store.updateMilestone(
      id,
      (x) => {
        x.awaiting = 'duration';
        x.reason = reason;
      },
      `duration guard: ${reason}`,
    );
  }

  /** Stops planning and run-plan work that has gone on for longer than its share. */
  private checkDurations(store: LongRunStore): void {
    let state;
    try {
      state = store.read();
    } catch {
      return;
    }
    const limit = guardLimit({ state } as LongRun) * 1000;
    for (const m of state.milestones) {
      if ((m.status !== 'planning' && m.status !== 'executing') || m.awaiting || !m.since) continue;
      const control = this.controls.get(m.id);
      if (control && !control.stopped && Date.now() - Date.parse(m.since) > limit) control.stop('duration');
    }
  }

  private async applyDecision(ctx: LongRunContext, gate: Gate, d: Decision): Promise<{ message: string; halt?: LongRunOutcome }> {
    const { store } = ctx;
    const run = store.load();
    if (d.kind === 'pause') return { message: '', halt: this.outcome(0, 'paused', pauseRun(store).message, store.load()) };
    if (d.kind === 'abort')
      return {
        message: '',
        halt: this.outcome(1, 'aborted', abortRun(store, run, d.reason ?? `at the gate: ${describeGate(gate)}`).message, store.load()),
      };
    const target = 'milestone' in gate ? gate.milestone : 'final';
    let result: DecisionResult;
    switch (d.kind) {
      case 'approve':
        result = approve(store, run, target, d.reason);
        break;
      case 'reject':
        result = reject(store, run, target, d.reason);
        break;
      case 'retry':
        result = retry(store, run, target);
        break;
      case 'skip':
        result = skip(store, run, target, d.reason);
        break;
      case 'rollback':
        result = rollback(store, run, d.to);
        break;
      default:
        return { message: '' };
    }
    await cleanUp(ctx.paths, ctx.git, result);
    return { message: result.message };
  }

  private rateLimited(ctx: LongRunContext, end: PhaseEnd): LongRunOutcome {
    for (const c of this.controls.values()) c.stop('rate-limit');
    const who = end.kind === 'rate-limited' ? end.who : 'an agent';
    ctx.store.log(
      `rate limit: ${who} hit a persistent usage limit; state saved; resume with "launchpad milestones run" when it has passed`,
    );
    return this.outcome(
      5,
      'rate-limited',
      `rate limit hit by ${who}. State saved. Resume with "launchpad milestones run" when ready.`,
      ctx.store.load(),
    );
  }

  private stopped(ctx: LongRunContext): LongRunOutcome {
    ctx.store.log('stopped by request; milestones in progress resume where they were on the next run');
    return this.outcome(
      1,
      'stopped',
      'stopped; run again to resume (the recovery plan says what happens to each milestone)',
      ctx.store.load(),
    );
  }

  /** Nothing more can move: say what waits for whom. */
  private idle(run: LongRun): LongRunOutcome {
    const gates = openGates(run);
    const approvals = gates.filter(isApprovalGate);
    const blocked = run.state.milestones.filter((m) => m.status === 'pending' && blockingDependencies(run, m.id).length);
    const lines = gates.map((g) => `- ${describeGate(g)}`);
    for (const m of blocked)
      lines.push(
        `- ${m.id} is blocked by ${blockingDependencies(run, m.id).join(', ')}; "launchpad milestones unblock ${m.id} --despite ${blockingDependencies(run, m.id)[0]}" lets it start anyway`,
      );
    if (approvals.length) return this.outcome(4, 'awaiting', `waiting for a person:\n${lines.join('\n')}`, run);
    if (gates.length) return this.outcome(1, 'failed', `stopped with a milestone failed:\n${lines.join('\n')}`, run);
    if (blocked.length) return this.outcome(1, 'blocked', `stopped: nothing more can run\n${lines.join('\n')}`, run);
    return this.outcome(1, 'blocked', 'stopped: nothing more can run', run);
  }

  private outcome(
    exitCode: LongRunOutcome['exitCode'],
    reason: LongRunOutcome['reason'],
    message: string,
    run: LongRun,
    summary?: string,
  ): LongRunOutcome {
    return { exitCode, reason, message, gates: openGates(run), ...(summary ? { summary } : {}) };
  }
}

function gateKey(gate: Gate): string {
  return `${gate.kind}:${'milestone' in gate ? gate.milestone : ''}:${gate.kind === 'plan' ? gate.plan : 'reason' in gate ? gate.reason : ''}`;
}

/**
 * A milestone's share of the run: the greater of the Duration Guard setting and Duration Guard
 * Factor × the mean duration (first planning to completion) of the milestones completed so far.
 */
export function guardLimit(run: Pick<LongRun, 'state'>): number {
  const { settings, milestones } = run.state;
  const durations = milestones
    .filter((m) => m.status === 'completed' && m.started && m.completed)
    .map((m) => (Date.parse(m.completed!) - Date.parse(m.started!)) / 1000);
  const mean = durations.length ? durations.reduce((a, b) => a + b, 0) / durations.length : 0;
  return Math.max(settings.guardMinimumSeconds, settings.guardFactor * mean);
}
