// launchpad milestones <subcommand>: a long run of milestones (plan → approve → run → review →
// integrate → checkpoint → merge) over the controller. The rules live in src/core/milestones; this
// file maps argv to them, asks at the gates on a terminal, and prints.
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { Git } from '../../core/git/git';
import { InputError } from '../../core/inputError';
import { tryAcquireLock } from '../../core/lock';
import {
  abortRun,
  addCorrective,
  approve,
  cleanUp,
  type DecisionResult,
  reject,
  retry,
  rollback,
  skip,
  unblock,
} from '../../core/milestones/decisions';
import { type Decision, type Gate, type Gatekeeper, unattended } from '../../core/milestones/gates';
import { createHarness } from '../../core/milestones/init';
import { loadLongRun, LongRunStore } from '../../core/milestones/longRun';
import { MILESTONE_ID } from '../../core/milestones/milestoneFile';
import { findRepoTop, HARNESS_PARENT, type HarnessPaths, listHarnessDirs } from '../../core/milestones/paths';
import { LONG_RUN_EXIT, LongRunner, openHarness } from '../../core/milestones/runner';
import { buildStatus, formatStatus } from '../../core/milestones/statusBlock';
import { allows } from '../../core/milestones/transitions';
import { killAllProcessGroupsNow } from '../../core/process/runProcess';
import { longRunCommands, planCommands } from '../../core/trust/repoCommands';
import { type Command, type CommandContext, splitList } from '../command';
import { EXIT, UsageError } from '../exit';
import { type Io, stderrLogger } from '../io';
import { approveLongRunCommands, approveTyped, explicitApproval, TRUST_OPTION } from '../trust';

const SUBCOMMANDS = ['init', 'status', 'run', 'approve', 'reject', 'retry', 'skip', 'unblock', 'correct', 'abort'] as const;
type Sub = (typeof SUBCOMMANDS)[number];

export const milestonesCommand: Command = {
  name: 'milestones',
  usage: 'launchpad milestones init NAME | status|run|approve|reject|retry|skip|unblock|correct|abort [ARGS] [DIR]',
  summary: 'Run a multi-day piece of work as milestones: plan, approve, run, review, integrate, checkpoint, merge.',
  details: [
    'A long run lives in a harness directory (docs/engineering-discipline/harness/<session>/ by default): state.md, milestones/M<N>-<name>.md',
    'and checkpoints/. Each milestone is planned by the planner agent, approved by a person, run as Launchpad tasks by the worker agent',
    'in its own worktree on branch milestone-<session>-M<N>, reviewed by the reviewer agent (VERDICT: PASS|FAIL), checked against the',
    'base branch, checkpointed and merged --no-ff. DIR is the harness directory; without it, the one in the current directory or the',
    'only one of the repository.',
    '',
    '  init NAME [--verify CMD] [--test CMD] [--planner CMD] [--worker CMD] [--reviewer CMD]   a new harness directory',
    '  status [DIR] [--json]                       the Long Run Status block, the gates and the recovery plan',
    '  run [DIR] [--planner/--worker/--reviewer CMD] [--yes] [--trust] [--verbose] [--json]   run until done or a gate',
    '  approve M<N>|final [--reason T] [DIR]      approve a plan; accept an integration gap; continue past the duration guard;',
    '                                             "final" accepts a failed final E2E gate',
    '  reject M<N> --reason T [DIR]               reject a plan: it is planned again with your reason',
    '  retry M<N> [DIR]                           plan a failed milestone again (Attempts is kept)',
    '  skip M<N> --reason T [DIR]                 skip a milestone for good; its dependents stay blocked',
    '  unblock M<N> --despite M<K> [DIR]          let M<N> start although M<K> was skipped or failed (logged)',
    '  correct add --name T --goal T --scope a,b --criterion T... [--depends-on M1] [--blocks M3] [--reason T] [DIR]',
    '                                             add a corrective milestone to the DAG',
    "  correct rollback M<N> [DIR]                re-plan from M<N>'s checkpoint: later milestones back to pending, Attempts 0",
    '  abort [--reason T] [DIR]                   stop the long run for good (overall status failed)',
    '',
    'On a terminal, run asks at each gate; otherwise it does all the work it can and exits 4 naming the approvals awaited.',
    "Commands from the repository's files (state.md's verification, test suite and agents, the plans of running milestones) run",
    'once approved: run asks on a terminal, otherwise exits 2 naming them ("launchpad trust" at the repository\'s top approves',
    'them; --trust for this run only). Approving a plan approves its validation commands.',
    `Exit codes: ${LONG_RUN_EXIT.COMPLETED} completed (or paused), ${LONG_RUN_EXIT.STOPPED} stopped with a milestone failed or blocked, ${LONG_RUN_EXIT.USAGE} bad input (file:line: field),`,
    `3 another run holds the harness lock, ${LONG_RUN_EXIT.AWAITING} waiting for a person's approval, ${LONG_RUN_EXIT.RATE_LIMITED} an agent hit a usage or rate limit (state saved).`,
  ].join('\n'),
  options: {
    json: { type: 'boolean', help: 'status, run: print JSON' },
    yes: { type: 'boolean', short: 'y', help: 'run: continue without asking at the start (gates are still asked on a terminal)' },
    verbose: { type: 'boolean', short: 'v', help: "run: also print every milestone controller's progress log lines" },
    planner: { type: 'string', value: 'CMD', help: 'init, run: the planner agent command' },
    worker: { type: 'string', value: 'CMD', help: 'init, run: the worker agent command (Launchpad task agent)' },
    reviewer: { type: 'string', value: 'CMD', help: 'init, run: the reviewer agent command' },
    verify: { type: 'string', value: 'CMD', help: "init: the project's verification command" },
    test: { type: 'string', value: 'CMD', help: "init: the project's full test suite" },
    reason: { type: 'string', value: 'TEXT', help: 'reject, skip, abort, approve, correct add: why (goes into the execution log)' },
    despite: { type: 'string', value: 'M<K>', help: 'unblock: the skipped or failed dependency to proceed without' },
    name: { type: 'string', value: 'TEXT', help: 'correct add: the milestone name' },
    goal: { type: 'string', value: 'TEXT', help: 'correct add: the goal' },
    scope: { type: 'string', value: 'PATHS', help: 'correct add: comma-separated files/folders it may change' },
    criterion: { type: 'string', value: 'TEXT', multiple: true, help: 'correct add: a success criterion (repeat for more)' },
    'depends-on': { type: 'string', value: 'IDS', help: 'correct add: milestones it depends on' },
    blocks: { type: 'string', value: 'IDS', help: 'correct add: milestones (not started) that must wait for it' },
    trust: { ...TRUST_OPTION.trust!, help: `run: ${TRUST_OPTION.trust!.help}` },
  },
  positionals: { min: 1, max: 4 },
  async run(ctx) {
    const [sub, ...args] = ctx.positionals;
    if (!SUBCOMMANDS.includes(sub as Sub))
      throw new UsageError(`milestones: unknown subcommand "${sub}"; one of ${SUBCOMMANDS.join(', ')}`);
    switch (sub as Sub) {
      case 'init':
        return init(ctx, args);
      case 'status':
        return status(ctx, args);
      case 'run':
        return runLongRun(ctx, args);
      default:
        return decide(ctx, sub as Sub, args);
    }
  },
};

async function init(ctx: CommandContext, args: string[]): Promise<number> {
  if (args.length !== 1)
    throw new UsageError(
      'usage: launchpad milestones init NAME [--verify CMD] [--test CMD] [--planner CMD] [--worker CMD] [--reviewer CMD]',
    );
  const top = findRepoTop(ctx.dir ? resolve(ctx.io.cwd, ctx.dir) : ctx.io.cwd);
  if (!top) throw new InputError(`${ctx.io.cwd}: not inside a git repository`);
  const v = ctx.values;
  const paths = createHarness(top, args[0]!, {
    verify: v.verify as string | undefined,
    testSuite: v.test as string | undefined,
    planner: v.planner as string | undefined,
    worker: v.worker as string | undefined,
    reviewer: v.reviewer as string | undefined,
  });
  // The commands given here are the person's own: no question about them later.
  approveTyped(ctx, paths.repoTop, longRunCommands(paths));
  ctx.io.out(`created ${paths.rel(paths.dir)}/ (state.md, milestones/_example.md, checkpoints/)\n`);
  ctx.io.out(`Next: write milestones/M1-<name>.md (see _example.md), then: launchpad milestones run ${paths.rel(paths.dir)}\n`);
  return EXIT.OK;
}

/** The harness directory: DIR, --dir, the current directory, or the repository's only one. */
async function harnessDir(ctx: CommandContext, explicit: string | undefined): Promise<HarnessPaths> {
  const given = explicit ?? ctx.dir;
  if (given) {
    const dir = resolve(ctx.io.cwd, given);
    if (!existsSync(join(dir, 'state.md')))
      throw new InputError(`${dir}: no state.md here; create a harness with "launchpad milestones init NAME"`);
    return openHarness(dir);
  }
  if (existsSync(join(ctx.io.cwd, 'state.md'))) return openHarness(ctx.io.cwd);
  const top = findRepoTop(ctx.io.cwd);
  const found = top ? listHarnessDirs(top) : [];
  if (found.length === 1) return openHarness(found[0]!);
  if (!found.length)
    throw new InputError(
      `no long run found in ${top ? `${top}/${HARNESS_PARENT}` : ctx.io.cwd}; create one with "launchpad milestones init NAME"`,
    );
  throw new UsageError(
    `several long runs in ${top}/${HARNESS_PARENT}: name one (${found.map((f) => f.slice(top!.length + 1)).join(', ')})`,
  );
}

async function status(ctx: CommandContext, args: string[]): Promise<number> {
  if (args.length > 1) throw new UsageError('usage: launchpad milestones status [DIR] [--json]');
  const paths = await harnessDir(ctx, args[0]);
  // Read-only: no lock, nothing written (a milestone file new to state.md is shown, not added).
  const st = buildStatus(loadLongRun(paths));
  ctx.io.out(ctx.values.json ? JSON.stringify(st, null, 2) + '\n' : formatStatus(st, { recovery: true }));
  return EXIT.OK;
}

async function runLongRun(ctx: CommandContext, args: string[]): Promise<number> {
  if (args.length > 1)
    throw new UsageError(
      'usage: launchpad milestones run [DIR] [--planner CMD] [--worker CMD] [--reviewer CMD] [--yes] [--verbose] [--json]',
    );
  const { io, values } = ctx;
  const json = values.json === true;
  const approved = explicitApproval(ctx);
  const paths = await harnessDir(ctx, args[0]);
  const agents = {
    planner: values.planner as string | undefined,
    worker: values.worker as string | undefined,
    reviewer: values.reviewer as string | undefined,
  };
  const canAsk = io.interactive && !!io.ask && !json;
  if (!approved) await approveLongRunCommands(io, paths, agents, canAsk);
  // A plan a person approves here runs now; its validation commands are theirs from then on.
  const onPlanApproved = (plan: string) => {
    if (!approved) approveTyped(ctx, paths.repoTop, planCommands(paths, plan));
  };
  const runner = new LongRunner({
    dir: paths.dir,
    agents,
    gatekeeper: canAsk ? terminalGatekeeper(io, values.yes === true, onPlanApproved) : unattended,
    env: io.env,
    logger: stderrLogger(io),
    say: json ? undefined : (text) => io.out(text.endsWith('\n') ? text : `${text}\n`),
    onControllerLine: values.verbose && !json ? (id, line) => io.out(`  ${id} | ${line}\n`) : undefined,
  });
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (++interrupts > 1) {
      killAllProcessGroupsNow();
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    if (!json) io.err(`\n${signal}: stopping; agents are being ended and every milestone resumes where it was (again to exit at once)\n`);
    runner.stop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const outcome = await runner.run();
    if (json) {
      const st = buildStatus(loadLongRun(paths));
      io.out(
        JSON.stringify(
          { exit_code: outcome.exitCode, reason: outcome.reason, message: outcome.message, gates: st.gates, status: st },
          null,
          2,
        ) + '\n',
      );
    } else {
      io.out(`\n${outcome.message}\n`);
    }
    return outcome.exitCode;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

async function decide(ctx: CommandContext, sub: Sub, args: string[]): Promise<number> {
  const v = ctx.values;
  const text = (name: string) => (typeof v[name] === 'string' ? (v[name] as string) : '');
  // correct add | correct rollback M<N>
  const action = sub === 'correct' ? args.shift() : undefined;
  if (sub === 'correct' && action !== 'add' && action !== 'rollback')
    throw new UsageError('usage: launchpad milestones correct add … | correct rollback M<N> [DIR]');
  const takesId = sub !== 'abort' && action !== 'add';
  const id = takesId ? args.shift() : undefined;
  if (takesId && (!id || !(MILESTONE_ID.test(id) || (sub === 'approve' && id === 'final')))) {
    throw new UsageError(
      `milestones ${sub}${action ? ` ${action}` : ''}: expected a milestone id (M1, M2, …)${sub === 'approve' ? ' or "final"' : ''}, got ${id ? `"${id}"` : 'nothing'}`,
    );
  }
  if (args.length > 1) throw new UsageError(`milestones ${sub}: unexpected argument "${args[1]}"`);
  const paths = await harnessDir(ctx, args[0]);
  mkdirSync(paths.artefacts, { recursive: true });
  const lock = tryAcquireLock(paths.lock, `launchpad milestones ${sub}`);
  try {
    const store = new LongRunStore(paths);
    const run = store.load();
    let result: DecisionResult;
    switch (sub) {
      case 'approve': {
        const plan = run.state.milestones.find((m) => m.id === id && m.plan && allows('approvePlan', m.status))?.plan;
        result = approve(store, run, id!, text('reason') || undefined);
        // The plan's validation commands run once it is approved: a person's approval is theirs.
        if (plan) approveTyped(ctx, paths.repoTop, planCommands(paths, plan));
        break;
      }
      case 'reject':
        result = reject(store, run, id!, text('reason'));
        break;
      case 'retry':
        result = retry(store, run, id!);
        break;
      case 'skip':
        result = skip(store, run, id!, text('reason'));
        break;
      case 'unblock':
        if (!text('despite')) throw new UsageError('milestones unblock: --despite M<K> names the skipped or failed dependency');
        result = unblock(store, run, id!, text('despite'));
        break;
      case 'abort':
        result = abortRun(store, run, text('reason'));
        break;
      default:
        if (action === 'rollback') {
          result = rollback(store, run, id!);
        } else {
          const criteria = ([] as string[]).concat((v.criterion as unknown as string[] | undefined) ?? []);
          const missing = ['name', 'goal', 'scope'].filter((k) => !text(k));
          if (missing.length || !criteria.length)
            throw new UsageError(
              `milestones correct add: needs --name, --goal, --scope and at least one --criterion (missing ${[...missing.map((m) => `--${m}`), ...(criteria.length ? [] : ['--criterion'])].join(', ')})`,
            );
          result = addCorrective(store, run, {
            name: text('name'),
            goal: text('goal'),
            scope: splitList(v.scope) ?? [],
            criteria,
            dependencies: splitList(v['depends-on']) ?? [],
            blocks: splitList(v.blocks) ?? [],
            reason: text('reason'),
          });
        }
    }
    await cleanUp(paths, new Git(paths.repoTop), result);
    ctx.io.out(`${result.message}\n`);
    return EXIT.OK;
  } finally {
    lock.release();
  }
}

/** Asks at each gate on the terminal; Enter leaves it for later (the run then does what it can and stops). */
function terminalGatekeeper(io: Io, yes: boolean, onPlanApproved: (plan: string) => void): Gatekeeper {
  const ask = async (q: string) => (await io.ask!(q)).trim();
  return {
    async decide(gate: Gate): Promise<Decision | undefined> {
      switch (gate.kind) {
        case 'session': {
          if (yes) return { kind: 'continue' };
          const a = (await ask('Continue, pause or abort? [C/p/a] ')).toLowerCase();
          if (a.startsWith('p')) return { kind: 'pause' };
          if (a.startsWith('a')) return { kind: 'abort', reason: (await ask('Reason for aborting: ')) || 'at the start of a run' };
          return { kind: 'continue' };
        }
        case 'plan': {
          io.out(
            `\n${gate.milestone} (${gate.name}): plan ${gate.plan} — ${gate.tasks} task(s)\n${gate.warnings.map((w) => `  ! ${w}\n`).join('')}`,
          );
          const a = (
            await ask(`Approve ${gate.milestone}'s plan? [y]es / [n]o, reject with a reason / Enter: decide later `)
          ).toLowerCase();
          if (a.startsWith('y')) {
            onPlanApproved(gate.plan);
            return { kind: 'approve' };
          }
          if (a.startsWith('n'))
            return { kind: 'reject', reason: (await ask('Reason (the next plan is made with it): ')) || 'rejected without a reason' };
          return undefined;
        }
        case 'failed': {
          io.out(`\n${gate.milestone} (${gate.name}) failed: ${gate.reason}\n`);
          const a = (await ask('[r]etry / [s]kip / Enter: decide later ')).toLowerCase();
          if (a.startsWith('r')) return { kind: 'retry' };
          if (a.startsWith('s')) return { kind: 'skip', reason: (await ask('Reason for skipping: ')) || 'skipped after a failure' };
          return undefined;
        }
        case 'integration': {
          io.out(`\n${gate.milestone} (${gate.name}): ${gate.reason}\n`);
          const a = (
            await ask(
              '[a]ccept and continue / [r]oll back to a checkpoint / Enter: decide later (a corrective milestone: "launchpad milestones correct add") ',
            )
          ).toLowerCase();
          if (a.startsWith('a')) return { kind: 'approve', reason: (await ask('Why accept the gap? ')) || undefined };
          if (a.startsWith('r')) return { kind: 'rollback', to: await ask('Roll back to the checkpoint of which completed milestone? ') };
          return undefined;
        }
        case 'duration': {
          io.out(`\n${gate.milestone} (${gate.name}) ${gate.reason}\n`);
          const a = (
            await ask('[c]ontinue / [a]bort the long run / Enter: decide later (re-scope with "correct" or "skip") ')
          ).toLowerCase();
          if (a.startsWith('c')) return { kind: 'approve' };
          if (a.startsWith('a')) return { kind: 'abort', reason: 'a milestone ran too long' };
          return undefined;
        }
        case 'e2e': {
          io.out(`\n${gate.reason}\n`);
          const a = (
            await ask(
              '[a]ccept and complete / [x] abort / Enter: decide later (a corrective milestone: "launchpad milestones correct add") ',
            )
          ).toLowerCase();
          if (a.startsWith('a')) return { kind: 'approve', reason: (await ask('Why accept? ')) || undefined };
          if (a.startsWith('x')) return { kind: 'abort', reason: 'the final E2E gate failed' };
          return undefined;
        }
      }
    },
  };
}
