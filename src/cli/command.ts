// The shape of a CLI command and its options, parsed with node's util.parseArgs.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './exit';
import type { Io } from './io';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>[string] & { help: string; value?: string };

export interface CommandContext {
  io: Io;
  /** --dir, when given. */
  dir: string | undefined;
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

export interface Command {
  name: string;
  usage: string;
  summary: string;
  /** Longer text under the usage line in --help. */
  details?: string;
  options: Record<string, OptionSpec>;
  positionals?: { min: number; max: number };
  /**
   * The exit code for any error, usage errors included. The hook entry points use 1: agents
   * read exit 2 from a hook as "block", and a mistyped hook must not hold an agent back.
   */
  failureExit?: number;
  run(ctx: CommandContext): Promise<number>;
}

export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  dir: { type: 'string', value: 'DIR', help: 'state root: the directory holding harness-tasks.json (default: found upward from here, or $HARNESS_STATE_ROOT)' },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
};

export function parseCommandArgs(command: Command, argv: string[]): { values: CommandContext['values']; positionals: string[] } {
  const options = { ...GLOBAL_OPTIONS, ...command.options };
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: Object.fromEntries(Object.entries(options).map(([k, { help: _h, value: _v, ...o }]) => [k, o])),
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(`${command.name}: ${(err as Error).message.replace(/\. To specify a positional.*$/s, '')}`);
  }
  const values = parsed.values as CommandContext['values'];
  if (!values.help && command.positionals) {
    const n = parsed.positionals.length;
    if (n < command.positionals.min || n > command.positionals.max) {
      throw new UsageError(`${command.name}: expected ${describeCount(command.positionals)}, got ${n}\nusage: ${command.usage}`);
    }
  } else if (!values.help && parsed.positionals.length) {
    throw new UsageError(`${command.name}: unexpected argument "${parsed.positionals[0]}"\nusage: ${command.usage}`);
  }
  return { values, positionals: parsed.positionals };
}

function describeCount({ min, max }: { min: number; max: number }): string {
  if (min === max) return `${min} argument${min === 1 ? '' : 's'}`;
  return `${min} to ${max} arguments`;
}

export function commandHelp(command: Command): string {
  const rows = Object.entries({ ...command.options, ...GLOBAL_OPTIONS }).map(([name, o]) => {
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
export function numberOption(name: string, value: string | boolean | undefined, opts: { integer?: boolean; min: number; above?: boolean }): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  const tooSmall = opts.above ? n <= opts.min : n < opts.min;
  if (typeof value !== 'string' || value.trim() === '' || !Number.isFinite(n) || (opts.integer && !Number.isInteger(n)) || tooSmall) {
    const bound = opts.above ? `greater than ${opts.min}` : `of at least ${opts.min}`;
    throw new UsageError(`--${name}: expected ${opts.integer ? 'a whole number' : 'a number'} ${bound}, got "${String(value)}"`);
  }
  return n;
}
