// launchpad <command> [options]: argv → a command → the core. Exit codes in exit.ts.
import { editDistance } from '../core/editDistance';
import { type Command, commandColours, commandHelp, GLOBAL_OPTIONS, parseCommandArgs } from './command';
import { addCommand } from './commands/add';
import { agentsCommand } from './commands/agents';
import { answerCommand } from './commands/answer';
import { configCommand } from './commands/config';
import { demoAgentCommand, demoCommand } from './commands/demo';
import { editCommand } from './commands/edit';
import { hookCommand } from './commands/hook';
import { hooksCommand } from './commands/hooks';
import { initCommand } from './commands/init';
import { journalCommand } from './commands/journal';
import { logCommand } from './commands/log';
import { milestonesCommand } from './commands/milestones';
import { poolCommand } from './commands/pool';
import { pruneAttemptsCommand } from './commands/pruneAttempts';
import { removeCommand } from './commands/remove';
import { restoreBackupCommand } from './commands/restoreBackup';
import { retryCommand } from './commands/retry';
import { approveCommand, requestChangesCommand, reviewCommand } from './commands/review';
import { runCommand } from './commands/run';
import { startCommand } from './commands/start';
import { statusCommand } from './commands/status';
import { stopCommand } from './commands/stop';
import { trustCommand } from './commands/trust';
import { workerCommand } from './commands/worker';
import { errorJson, EXIT, exitFor, UsageError } from './exit';
import { type Io, processIo } from './io';

export const COMMANDS: Command[] = [
  initCommand,
  addCommand,
  editCommand,
  removeCommand,
  runCommand,
  stopCommand,
  workerCommand,
  agentsCommand,
  statusCommand,
  poolCommand,
  retryCommand,
  answerCommand,
  reviewCommand,
  approveCommand,
  requestChangesCommand,
  configCommand,
  restoreBackupCommand,
  logCommand,
  hooksCommand,
  hookCommand,
  startCommand,
  journalCommand,
  milestonesCommand,
  pruneAttemptsCommand,
  trustCommand,
  demoCommand,
];
/** Commands that work but are not listed in the help. */
const INTERNAL_COMMANDS: Command[] = [demoAgentCommand];

declare const LAUNCHPAD_VERSION: string | undefined;

function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  return [
    'usage: launchpad [--dir DIR] <command> [options]',
    '',
    'Runs coding agents on a repository in parallel git worktrees, validates and merges their work,',
    'retries what fails, and recovers after any crash. State lives in harness-tasks.json and',
    'harness-progress.txt in the state root.',
    '',
    'commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary.split('. ')[0]!.replace(/\.$/, '')}`),
    '',
    'global options:',
    `  --dir DIR   ${GLOBAL_OPTIONS.dir.help}`,
    `  --no-color  ${GLOBAL_OPTIONS['no-color'].help}`,
    '  -h, --help  show help (launchpad <command> --help for a command)',
    '  --version   print the version',
    '',
    'exit codes: 0 done, 1 run stopped with tasks failed/blocked/not runnable, 2 usage, bad input or the machine (a lock file, a full disk, a missing program), 3 lock held by another session;',
    '            run also: 6 session_config.budget_usd reached, 7 an agent hit a usage or rate limit (run --wait-on-limit waits),',
    "            8 the work left waits on people: answers to agents' questions (launchpad answer) or reviews (launchpad review);",
    "            milestones run also: 4 waiting for a person's approval, 5 an agent hit a usage or rate limit; 130 a question answered with Ctrl-C (nothing changed)",
    '',
  ].join('\n');
}

export async function main(argv: string[], io: Io): Promise<number> {
  let command: Command | undefined;
  let json = false;
  try {
    // Global options may come before the command name; the command's parser checks them.
    const rest = [...argv];
    const globals: string[] = [];
    while (rest[0]?.startsWith('-')) {
      const arg = rest.shift()!;
      if (arg === '--dir') {
        if (rest[0] === undefined) throw new UsageError('--dir needs a directory');
        globals.push(arg, rest.shift()!);
      } else if (arg.startsWith('--dir=') || arg === '--no-color') globals.push(arg);
      else if (arg === '--help' || arg === '-h') {
        io.out(mainHelp());
        return EXIT.OK;
      } else if (arg === '--version') {
        io.out(`${typeof LAUNCHPAD_VERSION === 'string' ? LAUNCHPAD_VERSION : 'dev'}\n`);
        return EXIT.OK;
      } else throw new UsageError(`unknown option "${arg}"\n\n${mainHelp()}`);
    }
    const name = rest.shift();
    if (!name) {
      io.err(mainHelp());
      return EXIT.USAGE;
    }
    if (name === 'help') {
      const target = COMMANDS.find((c) => c.name === rest[0]);
      io.out(target ? commandHelp(target) : mainHelp());
      return EXIT.OK;
    }
    command = [...COMMANDS, ...INTERNAL_COMMANDS].find((c) => c.name === name);
    if (!command) {
      const near = COMMANDS.filter(
        (c) => editDistance(c.name, name) <= Math.max(1, Math.floor(c.name.length / 3)) || c.name.startsWith(name),
      );
      const hint = near.length ? `; did you mean ${near.map((c) => `"${c.name}"`).join(' or ')}?` : '';
      throw new UsageError(`unknown command "${name}"${hint}\ncommands: ${COMMANDS.map((c) => c.name).join(', ')}`);
    }
    // Known before parsing, so a usage error is JSON too.
    json = 'json' in command.options && rest.includes('--json');
    const { values, positionals } = parseCommandArgs(command, [...globals, ...rest], io.interactive);
    if (values.help) {
      io.out(commandHelp(command));
      return EXIT.OK;
    }
    const dir = typeof values.dir === 'string' ? values.dir : undefined;
    return await command.run({ io, dir, values, positionals, colour: commandColours(io, values) });
  } catch (err) {
    const failure = exitFor(err);
    io.err(`launchpad: ${failure.message}\n`);
    if (json) io.out(JSON.stringify({ error: errorJson(err, failure) }, null, 2) + '\n');
    return command?.failureExit ?? failure.code;
  }
}

if (require.main === module) {
  // VS Code starts runs with its own node (ELECTRON_RUN_AS_NODE=1): the agents and the programs
  // they start must not inherit that, or an Electron program they run would start as plain node.
  delete process.env.ELECTRON_RUN_AS_NODE;
  // A closed pipe (`launchpad log | head`) is not an error: processIo drops the output from then on.
  void main(process.argv.slice(2), processIo()).then((code) => {
    process.exitCode = code;
  });
}
