import { PRESET_NAMES } from '../../core/agents/presets';
import { Controller } from '../../core/controller/controller';
import { headlessTerminals } from '../../core/controller/headlessTerminals';
import { resolveAgentSetting, type RunSettings } from '../../core/controller/runConfig';
import { attachJournal } from '../../core/journal/attach';
import { killAllProcessGroupsNow } from '../../core/process/runProcess';
import type { StatePaths } from '../../core/statePaths';
import { buildStatus } from '../../core/statusReport';
import { taskFileSchema } from '../../core/taskFile/schema';
import { StateStore } from '../../core/taskFile/store';
import { numberOption, type Command } from '../command';
import { harnessRootForInit } from '../harness';
import { stderrLogger } from '../io';
import { prepareSpecRun, SPEC_RUN_OPTIONS } from '../scopePrompt';

export const runCommand: Command = {
  name: 'run',
  usage: 'launchpad run [--agent NAME|CMD] [--agent-args ARGS] [--max-parallel N] [--worktree-dir DIR] [--wait-on-limit] [--verbose] [--json] [--spec NAME [--task IDS] [--all]]',
  summary: 'Run the controller loop until every task is done or nothing more can run (creates the state files on first use).',
  details: [
    'Each task runs in its own git worktree on branch harness-<id>. The agent is the first of: --agent, $LAUNCHPAD_AGENT,',
    'session_config.agent (or agent_command) in harness-tasks.json: a preset name ("launchpad agents" lists them and the',
    'command each runs) or a shell command line. A command line gets the prompt on stdin and in $LAUNCHPAD_PROMPT_FILE, with',
    'LAUNCHPAD_TASK_ID, LAUNCHPAD_TASK_TITLE, LAUNCHPAD_WORKTREE, LAUNCHPAD_BRANCH and LAUNCHPAD_ATTEMPT set, and must print',
    'RESULT:SUCCESS or RESULT:FAIL <reason> as its last verdict.',
    `Presets: ${PRESET_NAMES.join(', ')}. Their extra arguments come from --agent-args,`,
    'else session_config.agent_args (e.g. {"claude": ["--model", "sonnet"]}).',
    'Exit codes: 0 all completed, 1 work left, 2 configuration or the machine, 3 locked, 6 session_config.budget_usd reached,',
    '7 an agent hit a usage or rate limit (the message says when it lifts; --wait-on-limit waits instead).',
    'Ctrl-C stops: agents end, their tasks stay in progress, and the next run recovers them. A second Ctrl-C exits at once.',
  ].join('\n'),
  options: {
    agent: { type: 'string', value: 'NAME|CMD', help: 'an agent preset (claude, codex, gemini, …) or a command line' },
    'agent-args': { type: 'string', value: 'ARGS', help: 'extra arguments for the preset, as shell words (with =: --agent-args="--model sonnet")' },
    'max-parallel': { type: 'string', value: 'N', help: 'agents at once (default session_config.max_parallel_agents, 3)' },
    'worktree-dir': { type: 'string', value: 'DIR', help: 'where task worktrees go (default <repo>/../<repo>.launchpad-worktrees)' },
    'wait-on-limit': {
      type: 'boolean',
      help: "on an agent's usage or rate limit, wait until it lifts (or back off) and go on, instead of exit 7",
    },
    verbose: { type: 'boolean', short: 'v', help: "also print every agent's and validation's output, prefixed by task id" },
    json: { type: 'boolean', help: 'print nothing while running, then the outcome and the final status as JSON' },
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
      waitOnLimit: values['wait-on-limit'] === true,
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
        io.out(`\n${outcome.message}\n`);
      }
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
