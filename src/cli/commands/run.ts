import { existsSync } from 'node:fs';
import { basename } from 'node:path';

import { AGENT_PRESETS, PRESET_NAMES } from '../../core/agents/presets';
import { findOnPath } from '../../core/agents/probe';
import { Controller } from '../../core/controller/controller';
import { headlessTerminals } from '../../core/controller/headlessTerminals';
import { maxSessions, resolveAgentSetting, type RunSettings } from '../../core/controller/runConfig';
import type { RunOutcome } from '../../core/controller/types';
import { editDistance } from '../../core/editDistance';
import { InputError } from '../../core/inputError';
import { attachJournal } from '../../core/journal/attach';
import { AGENT_OS_DIR, JournalPaths } from '../../core/journal/journalPaths';
import { killAllProcessGroupsNow } from '../../core/process/runProcess';
import { askingTask, exhaustedTask, reviewTask, type RunNotice, runNotifyCommand } from '../../core/runNotices';
import type { StatePaths } from '../../core/statePaths';
import { buildStatus } from '../../core/statusReport';
import { type TaskFile, taskFileSchema } from '../../core/taskFile/schema';
import { StateStore } from '../../core/taskFile/store';
import { type Command, type CommandContext, numberOption, shellQuote } from '../command';
import { UsageError } from '../exit';
import { commandIn } from '../invocation';
import { type Io, stderrLogger } from '../io';
import { QUEUE_RUN_OPTIONS, queueExecutorFor } from '../queueOptions';
import { prepareSpecRun, SPEC_RUN_OPTIONS } from '../scopePrompt';
import { stateRootForInit } from '../stateRoot';
import { approveRunCommands, explicitApproval, TRUST_OPTION } from '../trust';
import { formatSummary, type RunSummary, summarizeRun } from '../ui/runSummary';
import { RunView } from '../ui/runView';
import { warnUnknownFields } from '../unknownFieldWarnings';

export const runCommand: Command = {
  name: 'run',
  usage:
    'launchpad run [--agent NAME|CMD] [--agent-args ARGS] [--max-parallel N] [--max-tasks N] [--agent-timeout S] [--max-sessions N] [--worktree-dir DIR] [--in-place] [--wait-on-limit] [--notify CMD] [--no-bell] [--trust] [--verbose] [--json|--events] [--spec NAME [--task IDS] [--all]] [--executor queue --queue URL [--remote REMOTE]]',
  summary: 'Run the controller loop until every task is done or nothing more can run (creates the state files on first use).',
  details: [
    'Each task runs in its own git worktree on branch harness-<id>. The agent is the first of: --agent, $LAUNCHPAD_AGENT,',
    'session_config.agent (or agent_command) in harness-tasks.json: a preset name ("launchpad agents" lists them and the',
    'command each runs) or a shell command line. A command line gets the prompt on stdin and in $LAUNCHPAD_PROMPT_FILE, with',
    'LAUNCHPAD_TASK_ID, LAUNCHPAD_TASK_TITLE, LAUNCHPAD_WORKTREE, LAUNCHPAD_BRANCH and LAUNCHPAD_ATTEMPT set, and must print',
    'RESULT:SUCCESS or RESULT:FAIL <reason> as its last verdict.',
    `Presets: ${PRESET_NAMES.join(', ')}. Their extra arguments come from --agent-args,`,
    'else session_config.agent_args (e.g. {"claude": ["--model", "sonnet"]}).',
    '',
    'examples:',
    '  launchpad run --agent claude',
    '  launchpad run --agent claude --agent-args="--model sonnet" --max-tasks 40',
    '  launchpad run --agent \'aider --yes-always --message-file "$LAUNCHPAD_PROMPT_FILE"\'',
    '  (a command line in single quotes: each agent expands the variables when it starts, not your shell now)',
    '',
    'On a terminal a table of the running tasks stays under the log; every run ends with a summary: each failure with its',
    'reason, its output file and the command that retries it. Only runs that dispatch something count toward max_sessions.',
    'Exit codes: 0 all completed, 1 work left, 2 configuration or the machine, 3 locked, 6 session_config.budget_usd reached,',
    '7 an agent hit a usage or rate limit (the message says when it lifts; --wait-on-limit waits instead).',
    'Ctrl-C stops: agents end, their tasks stay in progress, and the next run recovers them. A second Ctrl-C exits at once.',
    '"launchpad stop" does the same from another terminal (and "launchpad stop ID" ends one task\'s agent).',
    "--events prints the run's event stream on stdout instead of the log and the summary: one JSON object a line (task events,",
    'log lines, attempts and where their transcripts are, the end with its outcome); docs/events.md has the format. The',
    'same records are written to .launchpad/events/ for any client to follow.',
    '--notify CMD runs CMD (sh -c, in the state root, 30 s at most; its failure is a warning) when the run ends, when a',
    'task has used all its attempts and when an agent asks a question, with LAUNCHPAD_EVENT (run-ended, attempts-exhausted,',
    'question), LAUNCHPAD_SUMMARY, the counts (LAUNCHPAD_TOTAL, _COMPLETED, _FAILED, _BLOCKED, _PENDING), LAUNCHPAD_EXIT_CODE',
    'and LAUNCHPAD_SESSION at the end, or LAUNCHPAD_TASK_ID, LAUNCHPAD_TASK_TITLE and LAUNCHPAD_ERROR (or LAUNCHPAD_QUESTION)',
    'for the task. On a terminal the run rings the bell when it ends and when an agent asks a question, unless --no-bell or',
    'session_config.bell is false.',
    '--executor queue --queue redis://host:port publishes each attempt to a queue that "launchpad worker" processes on any',
    'machine take; they push the work to --remote (a git remote both sides reach) and this run fetches it, runs the',
    "task's validation on it again itself (a worker's pass is not enough) and merges it only if that passes.",
    'Credentials belong in the environment ($LAUNCHPAD_QUEUE_URL, $LAUNCHPAD_REMOTE): messages show them as ***, and no',
    'process the run starts (agent, set-up, validation) gets those two variables.',
    "Commands from the repository's files (the task file's agent and its agent_args, validations, clean-ups, worktree_setup, integration_check,",
    'harness-init.sh) run once approved: on a terminal the run shows them and asks; otherwise, and with --json or --events, it',
    'exits 2 listing them ("launchpad trust" approves them; --trust or LAUNCHPAD_TRUST=1 for this run only). An agent given',
    'with --agent or $LAUNCHPAD_AGENT needs no approval (docs/trust.md).',
  ].join('\n'),
  options: {
    agent: { type: 'string', value: 'NAME|CMD', help: 'an agent preset (claude, codex, gemini, …) or a command line' },
    'agent-args': {
      type: 'string',
      value: 'ARGS',
      help: 'extra arguments for the preset, as shell words (with =: --agent-args="--model sonnet")',
    },
    'max-parallel': { type: 'string', value: 'N', help: 'agents at once (default session_config.max_parallel_agents, 3)' },
    'max-tasks': {
      type: 'string',
      value: 'N',
      help: 'dispatches this run makes before it stops, retries included (default session_config.max_tasks_per_session, 20)',
    },
    'agent-timeout': {
      type: 'string',
      value: 'S',
      help: "an agent's time limit in seconds (default session_config.agent_timeout_seconds, 3600)",
    },
    'max-sessions': {
      type: 'string',
      value: 'N',
      help: 'refuse to start once this many runs have dispatched something (default session_config.max_sessions, 50)',
    },
    'worktree-dir': { type: 'string', value: 'DIR', help: 'where task worktrees go (default <repo>/../<repo>.launchpad-worktrees)' },
    'in-place': {
      type: 'boolean',
      help: 'run one task at a time in the main working tree: no worktree, no merge commit; a failure is rolled back',
    },
    'wait-on-limit': {
      type: 'boolean',
      help: "on an agent's usage or rate limit, wait until it lifts (or back off) and go on, instead of exit 7",
    },
    verbose: { type: 'boolean', short: 'v', help: "also print every agent's and validation's output, prefixed by task id" },
    json: { type: 'boolean', help: 'print nothing while running, then the outcome, a summary and the final status as JSON' },
    events: { type: 'boolean', help: 'print the event stream on stdout as JSON lines (see above) instead of the log and the summary' },
    notify: {
      type: 'string',
      value: 'CMD',
      help: 'run CMD when the run ends, a task has used all its attempts or an agent asks (see above)',
    },
    'no-bell': { type: 'boolean', help: 'no terminal bell at the end or at a question' },
    ...TRUST_OPTION,
    ...SPEC_RUN_OPTIONS,
    ...QUEUE_RUN_OPTIONS,
  },
  globals: ['dir', 'no-color'],
  async run(ctx) {
    const { io, values } = ctx;
    const json = values.json === true;
    const events = values.events === true;
    if (json && events) throw new UsageError(`run: --json or --events, not both\nusage: ${runCommand.usage}`);
    const approved = explicitApproval(ctx);
    const paths = stateRootForInit(ctx);
    const settings: RunSettings = {
      cliAgent: values.agent as string | undefined,
      ...editorSettings(io.env),
      cliAgentArgs: values['agent-args'] as string | undefined,
      maxParallel: numberOption('max-parallel', values['max-parallel'], { integer: true, min: 1 }),
      maxTasksPerSession: numberOption('max-tasks', values['max-tasks'], { integer: true, min: 1 }),
      agentTimeoutSeconds: numberOption('agent-timeout', values['agent-timeout'], { min: 0, above: true }),
      maxSessions: numberOption('max-sessions', values['max-sessions'], { integer: true, min: 1 }),
      worktreeDir: values['worktree-dir'] as string | undefined,
      inPlace: values['in-place'] === true,
      waitOnLimit: values['wait-on-limit'] === true,
      env: io.env,
    };
    checkAgentBeforeRun(settings, paths);
    warnUnknownFields(io, paths);
    const quiet = json || events;
    const spec = await prepareSpecRun(ctx, paths, quiet);
    if (!approved) await approveRunCommands(io, paths, settings, io.interactive && !quiet);
    const queue = await queueExecutorFor(values, io.env, paths.root);
    if (queue && !quiet) io.err(`attempts go to ${queue.describe}\n`);
    const view = quiet
      ? undefined
      : new RunView({
          paths,
          colour: ctx.colour,
          write: io.out,
          live: io.stdoutTTY,
          columns: io.columns,
          verbose: values.verbose === true,
          bell: io.interactive && values['no-bell'] !== true && bellWanted(paths),
          launchpad: commandIn(io, paths.root),
        });
    // Warnings go to stderr; on a terminal, around the live table.
    const errIo = view ? { ...io, err: (text: string) => view.stderr(() => io.err(text)) } : io;
    const controller = new Controller({
      paths,
      settings,
      logger: stderrLogger(errIo),
      terminals: headlessTerminals(view && values.verbose ? (taskId, kind, text) => view.processOutput(taskId, kind, text) : undefined),
      onLogLine: view ? (line, entry) => view.logLine(line, entry) : undefined,
      onEvent: events ? (line) => io.out(line) : undefined,
      ...(queue ? { executor: queue.executor } : {}),
    });

    // The journal (.agent-os/progress/) and the spec's files follow the run from its events.
    const journal = attachJournal(controller, paths, { logger: stderrLogger(errIo), spec });
    const newFiles = filesAppearing(paths);
    const notices = notifier(values.notify as string | undefined, paths, io);
    controller.onDidChangeTask((e) => e.kind === 'failed' && notices.taskFailed(e.taskId));
    controller.onDidChangeTask((e) => e.kind === 'question' && notices.taskAsked(e.taskId));
    controller.onDidChangeTask((e) => e.kind === 'review' && notices.taskInReview(e.taskId));
    const started = Date.now();
    let interrupts = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      interrupts++;
      if (interrupts > 1) {
        // Exiting now: the first stop's SIGKILL-after-grace timers would die with us.
        view?.close();
        controller.abandon();
        killAllProcessGroupsNow();
        process.exit(signal === 'SIGINT' ? 130 : 143);
      }
      if (!quiet) errIo.err(`\n${signal}: stopping; agents are being ended and their tasks left for recovery (again to exit at once)\n`);
      controller.stop();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      let outcome: RunOutcome;
      try {
        outcome = await journal.track(controller.run());
      } finally {
        view?.close();
      }
      const store = new StateStore(paths);
      const summary = outcome.reason === 'state-unrecoverable' ? undefined : endSummary(ctx, store, outcome, settings);
      if (json) {
        const status = summary ? await buildStatus(store) : null;
        io.out(
          JSON.stringify(
            {
              exit_code: outcome.exitCode,
              reason: outcome.reason,
              message: outcome.message,
              notes: outcome.notes ?? [],
              session: outcome.session,
              stats: outcome.stats,
              summary: summary ?? null,
              status,
            },
            null,
            2,
          ) + '\n',
        );
      } else if (!events) {
        // On a terminal the run ends with the bell (unless turned off): a person may be elsewhere.
        const bell = io.interactive && values['no-bell'] !== true && bellWanted(paths) ? '\x07' : '';
        const notes = (outcome.notes ?? []).map((n) => `${ctx.colour.yellow('note:')} ${n}`);
        const text = summary
          ? formatSummary(summary, outcome, ctx.colour, Date.now() - started).join('\n')
          : [`\n${outcome.message}`, ...notes].join('\n');
        // Before the summary: on a terminal the run's last words are the summary and the bell.
        for (const note of newFiles()) io.err(`note: ${note}\n`);
        io.out(`${text}\n${bell}`);
      }
      await notices.ended(outcome);
      return outcome.exitCode;
    } finally {
      journal.dispose();
      await queue?.executor.close();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  },
};

/**
 * The files a run may add to the person's repository besides the ones init made: named when
 * the first run makes them, not found later by surprise. Call the result after the run.
 */
function filesAppearing(paths: StatePaths): () => string[] {
  const journal = new JournalPaths(paths).agentOs;
  const watched = [
    {
      path: journal,
      note: `created ${AGENT_OS_DIR}/: the journal of this project's sessions (docs/journal.md); commit it or add it to .gitignore`,
    },
    {
      path: paths.backup,
      note: `created ${basename(paths.backup)}: the task file as it was before each write, kept by Launchpad to restore from`,
    },
  ].filter((f) => !existsSync(f.path));
  return () => watched.filter((f) => existsSync(f.path)).map((f) => f.note);
}

function endSummary(ctx: CommandContext, store: StateStore, outcome: RunOutcome, settings: RunSettings): RunSummary | undefined {
  let file;
  try {
    file = store.load().file;
  } catch {
    return undefined;
  }
  const launchpad = commandIn(ctx.io, store.paths.root);
  return summarizeRun(file, outcome, {
    paths: store.paths,
    launchpad,
    rerun: (extra) => `${launchpad} run${runArgs(ctx.values, extra)}`,
    maxTasksPerSession: settings.maxTasksPerSession ?? file.session_config.max_tasks_per_session,
    maxSessions: maxSessions(settings, file),
    agentMissing: agentMissing(settings, file),
    now: Date.now(),
  });
}

function agentMissing(settings: RunSettings, file: TaskFile): boolean {
  try {
    return resolveAgentSetting(settings, file) === undefined;
  } catch {
    return false;
  }
}

/** This run's options again as shell words (` --agent claude …`), `extra` replacing its own kind. */
function runArgs(values: CommandContext['values'], extra?: string): string {
  const replaced = extra?.split(' ')[0]?.slice(2);
  const words: string[] = [];
  for (const name of ['agent', 'agent-args', 'max-parallel', 'max-tasks', 'agent-timeout', 'max-sessions', 'worktree-dir']) {
    const v = values[name];
    if (typeof v !== 'string' || name === replaced) continue;
    words.push(name === 'agent-args' ? `--agent-args=${shellQuote(v)}` : `--${name} ${shellQuote(v)}`);
  }
  if (values.verbose) words.push('-v');
  if (extra) words.push(extra);
  return words.length ? ' ' + words.join(' ') : '';
}

/**
 * The agent settings, checked before the run starts so a mistake in them (an unknown preset in
 * agent_args, --agent-args for a command line, a preset whose program is not installed) exits
 * 2 with nothing changed. A task file that
 * does not load is left to the run, which restores its backup or reports it.
 */
function checkAgentBeforeRun(settings: RunSettings, paths: StatePaths): void {
  const store = new StateStore(paths);
  let file;
  try {
    file = store.exists() ? store.load().file : taskFileSchema.parse({ tasks: [] });
  } catch {
    return;
  }
  const agent = resolveAgentSetting(settings, file);
  // A preset whose program is not installed would fail every attempt of every task.
  if (agent?.preset && !findOnPath(agent.preset.executable, settings.env ?? process.env)) {
    throw new InputError(
      `${agent.source}: the ${agent.preset.name} preset runs "${agent.preset.executable}", which is not on PATH; install ${agent.preset.title}, or choose another agent ("launchpad agents" lists what is installed)`,
      { field: agent.source },
    );
  }
  // A plain program name that is neither a preset nor on PATH would stop the run at its first
  // dispatch, after the lock and a session: said now, with the preset it was likely meant to be.
  const program = agent && !agent.preset ? /^\s*([A-Za-z0-9._+-]+)(\s|$)/.exec(agent.command)?.[1] : undefined;
  if (program && !SHELL_WORDS.has(program) && !findOnPath(program, settings.env ?? process.env)) {
    const near = AGENT_PRESETS.map((p) => p.name).filter((name) => editDistance(name, program) <= 2);
    throw new InputError(
      `${agent!.source}: "${program}" is not an agent preset, and no program of that name is on PATH${near.length ? `; did you mean ${near.map((n) => `"${n}"`).join(' or ')}?` : ''} ("launchpad agents" lists the presets and which are installed)`,
      { field: agent!.source },
    );
  }
}

/** Words /bin/sh runs itself (keywords and builtins), which PATH need not hold. */
const SHELL_WORDS = new Set(
  'for while until if case exec cd export set eval source . command builtin env time ulimit umask trap wait read unset alias type hash readonly'.split(
    ' ',
  ),
);

/**
 * The agent VS Code chose for a run it starts (its launchpad.agent.* settings or the agent picked
 * for the run), ranked as the editor's setting is, below --agent and $LAUNCHPAD_AGENT. Taken out
 * of the environment here: the agents do not inherit it.
 */
function editorSettings(env: NodeJS.ProcessEnv): Pick<RunSettings, 'editorAgent' | 'editorAgentSource'> {
  const agent = env.LAUNCHPAD_EDITOR_AGENT || undefined;
  const source = env.LAUNCHPAD_EDITOR_AGENT_SOURCE || undefined;
  delete env.LAUNCHPAD_EDITOR_AGENT;
  delete env.LAUNCHPAD_EDITOR_AGENT_SOURCE;
  return agent ? { editorAgent: agent, ...(source ? { editorAgentSource: source } : {}) } : {};
}

/** session_config.bell: the bell rings unless the task file says false (or cannot be read). */
function bellWanted(paths: StatePaths): boolean {
  try {
    return new StateStore(paths).load().file.session_config.bell !== false;
  } catch {
    return false;
  }
}

/**
 * --notify: the command runs for each task that has used all its attempts (as it happens, the
 * run goes on meanwhile) and once at the end, after those. Its failures are warnings.
 */
function notifier(command: string | undefined, paths: StatePaths, io: Io) {
  const pending = new Set<Promise<void>>();
  const send = (notice: RunNotice) => {
    if (!command) return;
    const p = runNotifyCommand(command, paths.root, notice).then((warning) => void (warning && io.err(`warning: ${warning}\n`)));
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };
  const read = (then: (file: TaskFile) => void) => {
    if (!command) return;
    try {
      then(new StateStore(paths).load().file);
    } catch (err) {
      io.err(`warning: --notify: could not read ${paths.tasks}: ${(err as Error).message}\n`);
    }
  };
  return {
    taskFailed(taskId: string): void {
      read((file) => {
        const task = exhaustedTask(file, taskId);
        if (task) send({ event: 'attempts-exhausted', task, file });
      });
    },
    taskAsked(taskId: string): void {
      read((file) => {
        const task = askingTask(file, taskId);
        if (task) send({ event: 'question', task, file });
      });
    },
    taskInReview(taskId: string): void {
      read((file) => {
        const task = reviewTask(file, taskId);
        if (task) send({ event: 'review', task, file });
      });
    },
    async ended(outcome: RunOutcome): Promise<void> {
      await Promise.all(pending);
      send({ event: 'run-ended', outcome });
      await Promise.all(pending);
    },
  };
}
