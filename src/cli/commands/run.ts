import { PRESET_NAMES } from '../../core/agents/presets';
import { Controller } from '../../core/controller/controller';
import { headlessTerminals } from '../../core/controller/headlessTerminals';
import { resolveAgentSetting, type RunSettings } from '../../core/controller/runConfig';
import { attachJournal } from '../../core/journal/attach';
import { killAllProcessGroupsNow } from '../../core/process/runProcess';
import type { RunOutcome } from '../../core/controller/types';
import type { StatePaths } from '../../core/statePaths';
import { exhaustedTask, runNotifyCommand, type RunNotice } from '../../core/runNotices';
import { buildStatus } from '../../core/statusReport';
import { taskFileSchema } from '../../core/taskFile/schema';
import { StateStore } from '../../core/taskFile/store';
import { numberOption, type Command } from '../command';
import { harnessRootForInit } from '../harness';
import { stderrLogger, type Io } from '../io';
import { prepareSpecRun, SPEC_RUN_OPTIONS } from '../scopePrompt';

export const runCommand: Command = {
  name: 'run',
  usage:
    'launchpad run [--agent NAME|CMD] [--agent-args ARGS] [--max-parallel N] [--worktree-dir DIR] [--notify CMD] [--no-bell] [--verbose] [--json] [--spec NAME [--task IDS] [--all]]',
  summary: 'Run the controller loop until every task is done or nothing more can run (creates the state files on first use).',
  details: [
    'Each task runs in its own git worktree on branch harness-<id>. The agent is the first of: --agent, $LAUNCHPAD_AGENT,',
    'session_config.agent (or agent_command) in harness-tasks.json: a preset name ("launchpad agents" lists them and the',
    'command each runs) or a shell command line. A command line gets the prompt on stdin and in $LAUNCHPAD_PROMPT_FILE, with',
    'LAUNCHPAD_TASK_ID, LAUNCHPAD_TASK_TITLE, LAUNCHPAD_WORKTREE, LAUNCHPAD_BRANCH and LAUNCHPAD_ATTEMPT set, and must print',
    'RESULT:SUCCESS or RESULT:FAIL <reason> as its last verdict.',
    `Presets: ${PRESET_NAMES.join(', ')}. Their extra arguments come from --agent-args,`,
    'else session_config.agent_args (e.g. {"claude": ["--model", "sonnet"]}).',
    'Ctrl-C stops: agents end, their tasks stay in progress, and the next run recovers them. A second Ctrl-C exits at once.',
    '--notify CMD runs CMD (sh -c, in the state root, 30 s at most; its failure is a warning) when the run ends and when a',
    'task has used all its attempts, with LAUNCHPAD_EVENT (run-ended or attempts-exhausted), LAUNCHPAD_SUMMARY, the counts',
    '(LAUNCHPAD_TOTAL, _COMPLETED, _FAILED, _BLOCKED, _PENDING), LAUNCHPAD_EXIT_CODE and LAUNCHPAD_SESSION at the end, or',
    'LAUNCHPAD_TASK_ID, LAUNCHPAD_TASK_TITLE and LAUNCHPAD_ERROR for the task. On a terminal the run rings the bell when it',
    'ends, unless --no-bell or session_config.bell is false.',
  ].join('\n'),
  options: {
    agent: { type: 'string', value: 'NAME|CMD', help: 'an agent preset (claude, codex, gemini, …) or a command line' },
    'agent-args': { type: 'string', value: 'ARGS', help: 'extra arguments for the preset, as shell words (with =: --agent-args="--model sonnet")' },
    'max-parallel': { type: 'string', value: 'N', help: 'agents at once (default session_config.max_parallel_agents, 3)' },
    'worktree-dir': { type: 'string', value: 'DIR', help: 'where task worktrees go (default <repo>/../<repo>.launchpad-worktrees)' },
    verbose: { type: 'boolean', short: 'v', help: "also print every agent's and validation's output, prefixed by task id" },
    json: { type: 'boolean', help: 'print nothing while running, then the outcome and the final status as JSON' },
    notify: { type: 'string', value: 'CMD', help: 'run CMD when the run ends and when a task has used all its attempts (see above)' },
    'no-bell': { type: 'boolean', help: 'no terminal bell at the end' },
    ...SPEC_RUN_OPTIONS,
  },
  async run(ctx) {
    const { io, values } = ctx;
    const json = values.json === true;
    const paths = harnessRootForInit(ctx);
    const settings: RunSettings = {
      cliAgent: values.agent as string | undefined,
      cliAgentArgs: values['agent-args'] as string | undefined,
      maxParallel: numberOption('max-parallel', values['max-parallel'], { integer: true, min: 1 }),
      worktreeDir: values['worktree-dir'] as string | undefined,
      env: io.env,
    };
    checkAgentBeforeRun(settings, paths);
    const spec = await prepareSpecRun(ctx, paths, json);
    const controller = new Controller({
      paths,
      settings,
      logger: stderrLogger(io),
      terminals: headlessTerminals(
        values.verbose && !json
          ? (taskId, _kind, text) => io.out(text.split('\n').filter((l, i, a) => l || i < a.length - 1).map((l) => `  ${taskId} | ${l}\n`).join(''))
          : undefined,
      ),
      onLogLine: json ? undefined : (line) => io.out(line + '\n'),
    });

    // The journal (.agent-os/progress/) and the spec's files follow the run from its events.
    const journal = attachJournal(controller, paths, { logger: stderrLogger(io), spec });
    const notices = notifier(values.notify as string | undefined, paths, io);
    controller.onDidChangeTask((e) => e.kind === 'failed' && notices.taskFailed(e.taskId));

    let interrupts = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      interrupts++;
      if (interrupts > 1) {
        // Exiting now: the first stop's SIGKILL-after-grace timers would die with us.
        killAllProcessGroupsNow();
        process.exit(signal === 'SIGINT' ? 130 : 143);
      }
      if (!json) io.err(`\n${signal}: stopping; agents are being ended and their tasks left for recovery (again to exit at once)\n`);
      controller.stop();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      const outcome = await journal.track(controller.run());
      if (json) {
        const status = outcome.reason === 'state-unrecoverable' ? null : await buildStatus(new StateStore(paths), 0);
        io.out(JSON.stringify({ exit_code: outcome.exitCode, reason: outcome.reason, message: outcome.message, session: outcome.session, stats: outcome.stats, status }, null, 2) + '\n');
      } else {
        io.out(`\n${outcome.message}\n${io.interactive && values['no-bell'] !== true && bellWanted(paths) ? '\x07' : ''}`);
      }
      await notices.ended(outcome);
      return outcome.exitCode;
    } finally {
      journal.dispose();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  },
};

/**
 * The agent settings, checked before the run starts so a mistake in them (an unknown preset in
 * agent_args, --agent-args for a command line) exits 2 with nothing changed. A task file that
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
  resolveAgentSetting(settings, file);
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
  return {
    taskFailed(taskId: string): void {
      if (!command) return;
      try {
        const { file } = new StateStore(paths).load();
        const task = exhaustedTask(file, taskId);
        if (task) send({ event: 'attempts-exhausted', task, file });
      } catch (err) {
        io.err(`warning: --notify: could not read ${paths.tasks}: ${(err as Error).message}\n`);
      }
    },
    async ended(outcome: RunOutcome): Promise<void> {
      await Promise.all(pending);
      send({ event: 'run-ended', outcome });
      await Promise.all(pending);
    },
  };
}
