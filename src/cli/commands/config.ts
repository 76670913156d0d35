import { CONFIG_KEYS, configKey, readConfigValue } from '../../core/tasks/configOps';
import { setConfigLogged, unsetConfigLogged } from '../../core/tasks/edits';
import type { Command } from '../command';
import { EXIT, UsageError } from '../exit';
import { existingStateRoot } from '../stateRoot';
import { approveTypedIn } from '../trust';

export const configCommand: Command = {
  name: 'config',
  usage: 'launchpad config [KEY [VALUE]] [--unset KEY] [--json]',
  summary: 'List, read or change the session_config values of harness-tasks.json.',
  details: [
    'Without arguments: every key with its value and what it does. KEY: its value. KEY VALUE: sets it, checked',
    'against the task file schema (numbers, limits, the agent settings). --unset KEY: back to its default.',
    `keys: ${CONFIG_KEYS.map((k) => k.key).join(', ')}`,
    'examples:',
    '  launchpad config max_tasks_per_session 40',
    '  launchpad config agent claude',
    `  launchpad config agent_args '{"claude": ["--model", "sonnet"]}'`,
  ].join('\n'),
  options: {
    unset: { type: 'string', value: 'KEY', help: 'set KEY back to its default' },
    json: { type: 'boolean', help: 'print the values as JSON' },
  },
  positionals: { min: 0, max: 2 },
  async run(ctx) {
    const { io, values, positionals } = ctx;
    const store = existingStateRoot(ctx, 'config');
    if (typeof values.unset === 'string') {
      if (positionals.length) throw new UsageError('config: --unset KEY takes no other argument');
      const key = configKey(values.unset);
      const before = await unsetConfigLogged(store, key);
      io.out(`${key.key}: ${show(before)} -> ${key.defaultValue === undefined ? '(not set)' : `${show(key.defaultValue)} (default)`}\n`);
      return EXIT.OK;
    }
    const [name, text] = positionals;
    if (name !== undefined && text !== undefined) {
      const key = configKey(name);
      const value = readConfigValue(key, text);
      const before = await setConfigLogged(store, key, value);
      approveTypedIn(ctx, store.paths, (c) => c.field === `session_config.${key.key}` || c.field.startsWith(`session_config.${key.key}.`));
      io.out(`${key.key}: ${show(before)} -> ${show(value)}\n`);
      return EXIT.OK;
    }
    const config = store.load().file.session_config;
    if (name !== undefined) {
      const key = configKey(name);
      const value = config[key.key];
      if (values.json) io.out(JSON.stringify(value ?? null) + '\n');
      else if (value !== undefined && value !== null) io.out(`${typeof value === 'string' ? value : JSON.stringify(value)}\n`);
      return EXIT.OK;
    }
    if (values.json) {
      io.out(JSON.stringify(Object.fromEntries(CONFIG_KEYS.map((k) => [k.key, config[k.key] ?? null])), null, 2) + '\n');
      return EXIT.OK;
    }
    const width = Math.max(...CONFIG_KEYS.map((k) => k.key.length)) + 2;
    for (const k of CONFIG_KEYS) {
      const value = config[k.key];
      const isDefault = k.defaultValue !== undefined && JSON.stringify(value) === JSON.stringify(k.defaultValue);
      const shown = value === undefined || value === null ? '(not set)' : show(value) + (isDefault ? ' (default)' : '');
      io.out(
        `${k.key.padEnd(width)}${shown}\n${' '.repeat(width)}${ctx.colour.dim(k.description)}${k.values ? ctx.colour.dim(`: ${k.values.join(' | ')}`) : ''}\n`,
      );
    }
    const unknown = Object.keys(config).filter((k) => !CONFIG_KEYS.some((c) => c.key === k));
    for (const k of unknown) io.out(`${k.padEnd(width)}${show(config[k])}  (not a Launchpad setting; kept as it is)\n`);
    return EXIT.OK;
  },
};

function show(value: unknown): string {
  if (value === undefined || value === null) return '(not set)';
  return JSON.stringify(value);
}
