// session_config as a person changes it (`launchpad config`): its keys, what each means, reading
// a value typed on a command line, and setting or unsetting one. The kinds, limits, defaults and
// descriptions are the schema's (taskFile/schema.ts); a value is checked by parsing a file that holds it.
import * as z from 'zod/mini';

import { resolveAgentSetting } from '../controller/runConfig';
import { InputError } from '../inputError';
import { parseTaskFile } from '../taskFile/parse';
import { type SessionConfig, sessionConfigSchema, type TaskFile } from '../taskFile/schema';
import { registerSchemaDocs } from '../taskFile/schemaDocs';

type Kind = 'integer' | 'number' | 'enum' | 'string' | 'json';

export interface ConfigKey {
  key: string;
  kind: Kind;
  /** A JSON value of the key's shape (json keys only). */
  example?: string;
  /** The schema's default; undefined when the key has none (absent means not set). */
  defaultValue: unknown;
  /** The values an enum allows. */
  values?: string[];
  description: string;
}

/** Every key of session_config, in the schema's order. */
// Each key's description, for `launchpad config`.
registerSchemaDocs();

export const CONFIG_KEYS: readonly ConfigKey[] = Object.entries(sessionConfigSchema._zod.def.shape).map(([key, schema]) =>
  describeKey(key, schema),
);

function describeKey(key: string, schema: unknown): ConfigKey {
  type Def = {
    type: string;
    innerType?: { _zod: { def: Def } };
    defaultValue?: unknown;
    format?: string;
    entries?: Record<string, string>;
  };
  let def = (schema as { _zod: { def: Def } })._zod.def;
  let defaultValue: unknown;
  while (def.innerType && ['default', 'prefault', 'optional', 'nullable'].includes(def.type)) {
    if (def.type === 'default')
      defaultValue = typeof def.defaultValue === 'function' ? (def.defaultValue as () => unknown)() : def.defaultValue;
    def = def.innerType._zod.def;
  }
  const kind: Kind =
    def.type === 'number'
      ? def.format === 'safeint'
        ? 'integer'
        : 'number'
      : def.type === 'enum'
        ? 'enum'
        : def.type === 'string'
          ? 'string'
          : 'json';
  const values = def.entries ? Object.values(def.entries) : undefined;
  // What a JSON value of this shape looks like, for the error of a value that is not JSON.
  const example =
    kind !== 'json'
      ? undefined
      : def.type === 'array'
        ? '["tests/", "fixtures/golden.json"]'
        : key === 'agent_args'
          ? '{"claude": ["--model", "sonnet"]}'
          : key === 'integration_check'
            ? '{"command": "npm test", "every": 1}'
            : '{"name": "value"}';
  return {
    key,
    kind,
    ...(example ? { example } : {}),
    defaultValue,
    ...(values ? { values } : {}),
    description: z.globalRegistry.get(schema as z.ZodMiniType)?.description ?? '',
  };
}

export function configKey(key: string): ConfigKey {
  const found = CONFIG_KEYS.find((k) => k.key === key);
  if (!found) throw new InputError(`config: unknown key "${key}"; keys: ${CONFIG_KEYS.map((k) => k.key).join(', ')}`, { field: key });
  return found;
}

/** A value as typed on a command line, read as the key's kind (checked against the schema when set). */
export function readConfigValue(key: ConfigKey, text: string): unknown {
  switch (key.kind) {
    case 'integer':
    case 'number': {
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n))
        throw new InputError(`${key.key}: expected ${key.kind === 'integer' ? 'a whole number' : 'a number'}, got "${text}"`, {
          field: key.key,
        });
      return n;
    }
    case 'json':
      try {
        return JSON.parse(text);
      } catch {
        throw new InputError(`${key.key}: expected JSON, e.g. ${key.example}, got ${JSON.stringify(text)}`, {
          field: key.key,
        });
      }
    default:
      if (text.trim() === '')
        throw new InputError(`${key.key}: empty value; to remove it: launchpad config --unset ${key.key}`, { field: key.key });
      return text;
  }
}

/** Sets one key after checking the value as the schema and the agent settings would. Returns the value before. */
export function setConfigValue(file: TaskFile, key: ConfigKey, value: unknown): unknown {
  const before = file.session_config[key.key];
  const other = key.key === 'agent' ? 'agent_command' : key.key === 'agent_command' ? 'agent' : undefined;
  if (other && typeof file.session_config[other] === 'string' && file.session_config[other].trim()) {
    throw new InputError(`${key.key}: ${other} is set too, and they are one setting; first: launchpad config --unset ${other}`, {
      field: key.key,
    });
  }
  checkConfig(file, { ...file.session_config, [key.key]: value });
  file.session_config[key.key] = value;
  return before;
}

/** Back to the default (a key without one is removed). Returns the value before. */
export function unsetConfigValue(file: TaskFile, key: ConfigKey): unknown {
  const before = file.session_config[key.key];
  if (key.defaultValue === undefined) delete file.session_config[key.key];
  else file.session_config[key.key] = key.defaultValue;
  return before;
}

function checkConfig(file: TaskFile, next: SessionConfig): void {
  const parsed = parseTaskFile(JSON.stringify({ version: file.version, session_config: next, tasks: [] }));
  if (!parsed.ok) {
    const problem = parsed.error.problems[0]!.replace(/^session_config\./, '');
    throw new InputError(problem, { field: parsed.error.field.replace(/^session_config\./, '') });
  }
  resolveAgentSetting({ env: {} }, parsed.file);
}
