// launchpad <command> [options]: argv → a command → the core. Exit codes in exit.ts.
import { addCommand } from './commands/add';
import { agentsCommand } from './commands/agents';
import { demoAgentCommand, demoCommand } from './commands/demo';
import { hookCommand } from './commands/hook';
import { hooksCommand } from './commands/hooks';
import { initCommand } from './commands/init';
import { journalCommand } from './commands/journal';
import { logCommand } from './commands/log';
import { restoreBackupCommand } from './commands/restoreBackup';
import { milestonesCommand } from './commands/milestones';
import { pruneAttemptsCommand } from './commands/pruneAttempts';
import { retryCommand } from './commands/retry';
import { runCommand } from './commands/run';
import { startCommand } from './commands/start';
import { statusCommand } from './commands/status';
import { commandHelp, GLOBAL_OPTIONS, parseCommandArgs, type Command } from './command';
import { EXIT, exitFor, UsageError } from './exit';
import { processIo, type Io } from './io';

export const COMMANDS: Command[] = [
  initCommand,
  addCommand,
  runCommand,
  agentsCommand,
  statusCommand,
  retryCommand,
  restoreBackupCommand,
  logCommand,
  hooksCommand,
  hookCommand,
  startCommand,
  journalCommand,
  milestonesCommand,
  pruneAttemptsCommand,
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
    `  --dir DIR   ${GLOBAL_OPTIONS.dir!.help}`,
    '  -h, --help  show help (launchpad <command> --help for a command)',
    '  --version   print the version',
    '',
    'exit codes: 0 done, 1 run stopped with tasks failed/blocked/not runnable, 2 usage or bad input, or run stopped by the machine',
    '            (a lock file, a full disk, a missing program), 3 lock held by another session;',
    '            run also: 6 session_config.budget_usd reached, 7 an agent hit a usage or rate limit (run --wait-on-limit waits);',
    '            milestones run also: 4 waiting for a person\'s approval, 5 an agent hit a usage or rate limit',
    '',
  ].join('\n');
}

export async function main(argv: string[], io: Io): Promise<number> {
  let command: Command | undefined;
  try {
    // Global options may come before the command name.
    const rest = [...argv];
    let dir: string | undefined;
    while (rest[0]?.startsWith('-')) {
      const arg = rest.shift()!;
      if (arg === '--dir') dir = rest.shift();
      else if (arg.startsWith('--dir=')) dir = arg.slice(6);
      else if (arg === '--help' || arg === '-h') {
        io.out(mainHelp());
        return EXIT.OK;
      } else if (arg === '--version') {
        io.out(`${typeof LAUNCHPAD_VERSION === 'string' ? LAUNCHPAD_VERSION : 'dev'}\n`);
        return EXIT.OK;
      } else throw new UsageError(`unknown option "${arg}"\n\n${mainHelp()}`);
      if (dir === undefined) throw new UsageError('--dir needs a directory');
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
    if (!command) throw new UsageError(`unknown command "${name}"; commands: ${COMMANDS.map((c) => c.name).join(', ')}`);
    const { values, positionals } = parseCommandArgs(command, rest);
    if (values.help) {
      io.out(commandHelp(command));
      return EXIT.OK;
    }
    if (typeof values.dir === 'string') dir = values.dir;
    return await command.run({ io, dir, values, positionals });
  } catch (err) {
    const { code, message } = exitFor(err);
    io.err(`launchpad: ${message}\n`);
    return command?.failureExit ?? code;
  }
}

if (require.main === module) {
  // A closed pipe (`launchpad log | head`) is not an error: processIo drops the output from then on.
  main(process.argv.slice(2), processIo()).then((code) => {
    process.exitCode = code;
  });
}
