// The shape of a CLI command and its options, parsed with node's util.parseArgs.
import { parseArgs, type ParseArgsConfig } from 'node:util';

import { UsageError } from './exit';
import type { Io } from './io';
import { type Colours, colours, colourWanted } from './ui/colour';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>[string] & { help: string; value?: string };

export interface CommandContext {
  io: Io;
  /** --dir, when given. */
  dir: string | undefined;
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
  /** Colour for what goes to stdout (plain unless it is a terminal, see ui/colour.ts). */
  colour: Colours;
}

export interface Command {
  name: string;
  usage: string;
  summary: string;
  /** Longer text under the usage line in --help. */
  details?: string;
  options: Record<string, OptionSpec>;
  /** The global options the command honours (default: dir); only these are accepted and listed. */
  globals?: readonly GlobalOption[];
  /** `askable`: on a terminal, missing arguments are asked for (min becomes 0). */
  positionals?: { min: number; max: number; askable?: boolean };
  /**
   * The exit code for any error, usage errors included. The hook entry points use 1: agents
   * read exit 2 from a hook as "block", and a mistyped hook must not hold an agent back.
   */
  failureExit?: number;
  run(ctx: CommandContext): Promise<number>;
}

export const GLOBAL_OPTIONS = {
  dir: {
    type: 'string',
    value: 'DIR',
    help: 'state root: the directory holding harness-tasks.json (default: found upward from here, or $HARNESS_STATE_ROOT)',
  },
  'no-color': { type: 'boolean', help: 'no colour (also NO_COLOR=1; FORCE_COLOR=1 forces it)' },
} satisfies Record<string, OptionSpec>;
export type GlobalOption = keyof typeof GLOBAL_OPTIONS;

const HELP_OPTION: Record<string, OptionSpec> = { help: { type: 'boolean', short: 'h', help: 'show this help' } };

/** The options a command accepts: its own, the global ones it honours, --help. */
export function commandOptions(command: Command): Record<string, OptionSpec> {
  const globals = Object.fromEntries((command.globals ?? ['dir']).map((g) => [g, GLOBAL_OPTIONS[g]]));
  return { ...command.options, ...globals, ...HELP_OPTION };
}

export function parseCommandArgs(
  command: Command,
  argv: string[],
  interactive = false,
): { values: CommandContext['values']; positionals: string[] } {
  const options = commandOptions(command);
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: Object.fromEntries(Object.entries(options).map(([k, { help: _h, value: _v, ...o }]) => [k, o])),
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(`${command.name}: ${describeParseError(command, argv, (err as Error).message)}`);
  }
  const values = parsed.values as CommandContext['values'];
  if (!values.help && command.positionals) {
    const n = parsed.positionals.length;
    const { max, askable } = command.positionals;
    const min = askable && interactive ? 0 : command.positionals.min;
    if (n < min || n > max) {
      throw new UsageError(`${command.name}: expected ${describeCount({ min, max })}, got ${n}\nusage: ${command.usage}`);
    }
  } else if (!values.help && parsed.positionals.length) {
    throw new UsageError(`${command.name}: unexpected argument "${parsed.positionals[0]}"\nusage: ${command.usage}`);
  }
  return { values, positionals: parsed.positionals };
}

/**
 * parseArgs's message, shortened; for a command that takes arguments, an unknown option may be
 * an argument that starts with a dash (a title "-x"): say how to give it.
 */
function describeParseError(command: Command, argv: string[], message: string): string {
  const unknown = /^Unknown option '([^']+)'/.exec(message);
  const short = message.replace(/\. To specify a positional.*$/s, '');
  if (!unknown) return short;
  const token = unknown[1]!;
  if (GLOBAL_OPTIONS[token.slice(2) as GlobalOption]) return `${short}: "${command.name}" does not use it`;
  // parseArgs names the first letter of "-fix it"; the argument is the whole word.
  const arg = argv.find((a) => a.startsWith(token)) ?? token;
  if (command.positionals?.max && (/^-[^-]/.test(arg) || /\s/.test(arg))) {
    return `${short} (an argument that starts with "-" goes after "--": launchpad ${command.name} -- ${shellQuote(arg)})`;
  }
  return `${short} (launchpad ${command.name} --help lists the options)`;
}

/** The value as one shell word: as is when it is safe, else in single quotes. */
export function shellQuote(value: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The colours of a command's output, from its options and the environment. */
export function commandColours(io: Io, values: CommandContext['values']): Colours {
  return colours(colourWanted(io.env, io.stdoutTTY, values['no-color'] === true));
}

function describeCount({ min, max }: { min: number; max: number }): string {
  if (min === max) return `${min} argument${min === 1 ? '' : 's'}`;
  return `${min} to ${max} arguments`;
}

export function commandHelp(command: Command): string {
  const rows = Object.entries(commandOptions(command)).map(([name, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : ''}--${name}${o.value ? ` ${o.value}` : ''}`;
    return [flag, o.help] as const;
  });
  const width = Math.max(...rows.map(([f]) => f.length)) + 2;
  return [
    `usage: ${command.usage}`,
    '',
    command.summary,
    ...(command.details ? ['', command.details] : []),
    '',
    'options:',
    ...rows.map(([f, h]) => `  ${f.padEnd(width)}${h}`),
    '',
  ].join('\n');
}

/** `a,b, c` → ['a','b','c']; empty items dropped. */
export function splitList(value: string | boolean | undefined): string[] | undefined {
  if (typeof value !== 'string') return undefined;
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `above`: the bound itself is not allowed (a timeout of 0 seconds). */
export function numberOption(
  name: string,
  value: string | boolean | undefined,
  opts: { integer?: boolean; min: number; above?: boolean },
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  const tooSmall = opts.above ? n <= opts.min : n < opts.min;
  if (typeof value !== 'string' || value.trim() === '' || !Number.isFinite(n) || (opts.integer && !Number.isInteger(n)) || tooSmall) {
    const bound = opts.above ? `greater than ${opts.min}` : `of at least ${opts.min}`;
    throw new UsageError(`--${name}: expected ${opts.integer ? 'a whole number' : 'a number'} ${bound}, got "${String(value)}"`);
  }
  return n;
}
