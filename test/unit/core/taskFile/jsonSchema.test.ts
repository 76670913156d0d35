import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import { isValidTaskId, TASK_ID_PATTERN } from '../../../../src/core/ids';
import { taskFileJsonSchema } from '../../../../src/core/taskFile/jsonSchema';
import { parseTaskFile } from '../../../../src/core/taskFile/parse';
import {
  MAX_COMMAND_CHARS,
  MAX_CONTEXT_CHARS,
  MAX_PATH_CHARS,
  MAX_TIMEOUT_SECONDS,
  MAX_TITLE_CHARS,
  PRIORITIES,
  STATUSES,
} from '../../../../src/core/taskFile/schema';
import { fixtureText } from '../fixtures';

type Schema = Record<string, unknown>;

/**
 * A tiny draft-07 checker for the keywords this schema uses, so the test needs no validator
 * dependency. Any keyword it does not know fails the test: the schema cannot grow a rule
 * this check silently ignores.
 */
function validate(schema: Schema, value: unknown, path = '$'): string[] {
  const known = new Set([
    '$schema',
    'title',
    'description',
    'default',
    'type',
    'const',
    'enum',
    'anyOf',
    'properties',
    'required',
    'additionalProperties',
    'items',
    'minimum',
    'maximum',
    'exclusiveMinimum',
    'minLength',
    'maxLength',
    'pattern',
  ]);
  for (const k of Object.keys(schema)) if (!known.has(k)) throw new Error(`checker does not know "${k}" at ${path}`);
  const errors: string[] = [];
  const typeOf = (v: unknown) =>
    v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' && Number.isInteger(v) ? 'integer' : typeof v;
  if (schema.type !== undefined) {
    const types = ([] as string[]).concat(schema.type as string | string[]);
    const t = typeOf(value);
    if (!types.some((want) => want === t || (want === 'number' && t === 'integer'))) return [`${path}: type ${t}, want ${types}`];
  }
  if ('const' in schema && value !== schema.const) errors.push(`${path}: not const ${String(schema.const)}`);
  if (schema.enum && !(schema.enum as unknown[]).includes(value)) errors.push(`${path}: not in enum`);
  if (schema.anyOf && !(schema.anyOf as Schema[]).some((s) => validate(s, value, path).length === 0))
    errors.push(`${path}: no anyOf branch`);
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) errors.push(`${path}: below minimum`);
    if (typeof schema.maximum === 'number' && value > schema.maximum) errors.push(`${path}: above maximum`);
    if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum) errors.push(`${path}: not above exclusiveMinimum`);
  }
  if (typeof value === 'string') {
    if (typeof schema.minLength === 'number' && value.length < schema.minLength) errors.push(`${path}: too short`);
    if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) errors.push(`${path}: too long`);
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) errors.push(`${path}: pattern`);
  }
  if (Array.isArray(value) && schema.items) value.forEach((v, i) => errors.push(...validate(schema.items as Schema, v, `${path}[${i}]`)));
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    for (const r of (schema.required as string[] | undefined) ?? []) if (!(r in obj)) errors.push(`${path}: missing ${r}`);
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    for (const [k, v] of Object.entries(obj)) {
      if (props[k]) errors.push(...validate(props[k], v, `${path}.${k}`));
      else if (schema.additionalProperties === false) errors.push(`${path}: unknown ${k}`);
      else if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
        errors.push(...validate(schema.additionalProperties as Schema, v, `${path}.${k}`));
      }
    }
  }
  return errors;
}

const schema = taskFileJsonSchema();
const taskSchema = (schema.properties as Record<string, Schema>).tasks!.items as Schema;
const taskProps = taskSchema.properties as Record<string, Schema>;

describe('core/taskFileJsonSchema', () => {
  it('is a titled draft-07 object schema', () => {
    assert.equal(schema.$schema, 'http://json-schema.org/draft-07/schema#');
    assert.equal(schema.type, 'object');
    assert.match(String(schema.title), /harness-tasks\.json/);
  });

  it('states the id pattern, and that pattern agrees with isValidTaskId', () => {
    const pattern = taskProps.id!.pattern as string;
    assert.equal(pattern, TASK_ID_PATTERN.source);
    const re = new RegExp(pattern, 'u');
    for (const id of ['task-001', 'a', 'a.b', 'a..b', 'a.lock', 'a.', '-a', 'a b', 'a'.repeat(64), 'a'.repeat(65)]) {
      assert.equal(re.test(id), isValidTaskId(id), id);
    }
  });

  it('states the enums: status, priority, version, concurrency_mode', () => {
    assert.deepEqual(taskProps.status!.enum, [...STATUSES]);
    assert.deepEqual(taskProps.priority!.enum, [...PRIORITIES]);
    assert.equal(taskProps.priority!.default, 'P1');
    const version = (schema.properties as Record<string, Schema>).version!;
    assert.deepEqual(
      (version.anyOf as Schema[]).map((s) => s.const),
      [2, 3],
    );
    const sc = (schema.properties as Record<string, Schema>).session_config!.properties as Record<string, Schema>;
    assert.deepEqual(sc.concurrency_mode!.enum, ['exclusive', 'concurrent']);
  });

  it('states the limits: title, context, commands, paths, timeouts', () => {
    assert.equal(taskProps.title!.maxLength, MAX_TITLE_CHARS);
    assert.equal(MAX_TITLE_CHARS, 500);
    const anyOfMax = (s: Schema, key: 'maxLength' | 'maximum') => (s.anyOf as Schema[]).find((b) => key in b)![key];
    assert.equal(anyOfMax(taskProps.context!, 'maxLength'), MAX_CONTEXT_CHARS);
    const validation = (taskProps.validation!.anyOf as Schema[]).find((b) => b.type === 'object')!.properties as Record<string, Schema>;
    assert.equal(anyOfMax(validation.command!, 'maxLength'), MAX_COMMAND_CHARS);
    assert.equal(anyOfMax(validation.timeout_seconds!, 'maximum'), MAX_TIMEOUT_SECONDS);
    assert.equal((taskProps.files_hint!.items as Schema).maxLength, MAX_PATH_CHARS);
    const sc = (schema.properties as Record<string, Schema>).session_config!.properties as Record<string, Schema>;
    for (const key of ['agent_timeout_seconds', 'cleanup_timeout_seconds', 'health_check_timeout_seconds'])
      assert.equal(sc[key]!.maximum, MAX_TIMEOUT_SECONDS, key);
    assert.equal(MAX_TIMEOUT_SECONDS, 7 * 24 * 3600);
  });

  it('requires what the core requires, and nothing that has a default', () => {
    assert.deepEqual(schema.required, ['tasks']);
    assert.deepEqual([...(taskSchema.required as string[])].sort(), ['id', 'status', 'title']);
    const defaults = Object.fromEntries(
      Object.entries(taskProps)
        .filter(([, s]) => 'default' in s)
        .map(([k, s]) => [k, s.default]),
    );
    assert.deepEqual(defaults, { priority: 'P1', depends_on: [], attempts: 0, max_attempts: 3, files_hint: [], error_log: [] });
    const sc = (schema.properties as Record<string, Schema>).session_config!.properties as Record<string, Schema>;
    assert.equal(sc.max_parallel_agents!.default, 3);
    assert.equal(sc.max_tasks_per_session!.default, 20);
    assert.equal(sc.max_sessions!.default, 50);
  });

  it('allows unknown fields at every level', () => {
    const objects: Schema[] = [];
    const walk = (s: unknown) => {
      if (!s || typeof s !== 'object') return;
      if ((s as Schema).type === 'object') objects.push(s as Schema);
      Object.values(s as Schema).forEach(walk);
    };
    walk(schema);
    assert.ok(objects.length >= 5, `found ${objects.length} object schemas`);
    for (const o of objects) assert.notEqual(o.additionalProperties, false);
  });

  it('accepts the protocol examples (v3 and v2) and a minimal file', () => {
    for (const text of [fixtureText('v3-example-tasks.json'), fixtureText('v2-example-tasks.json'), '{"tasks":[]}']) {
      assert.deepEqual(validate(schema, JSON.parse(text)), []);
    }
  });

  it('rejects what parseTaskFile rejects, for the shapes it can express', () => {
    const base = JSON.parse(fixtureText('v3-example-tasks.json'));
    const mutants: Array<[string, (d: any) => void]> = [
      ['bad id', (d) => (d.tasks[0].id = 'a b')],
      ['git-unsafe id', (d) => (d.tasks[0].id = 'a..b')],
      ['bad status', (d) => (d.tasks[0].status = 'done')],
      ['bad priority', (d) => (d.tasks[0].priority = 'P4')],
      ['missing title', (d) => delete d.tasks[0].title],
      ['missing status', (d) => delete d.tasks[1].status],
      ['empty title', (d) => (d.tasks[0].title = '')],
      ['missing tasks', (d) => delete d.tasks],
      ['version 1', (d) => (d.version = 1)],
      ['fractional attempts', (d) => (d.tasks[0].attempts = 0.5)],
      ['zero max_attempts', (d) => (d.tasks[0].max_attempts = 0)],
      ['zero timeout', (d) => (d.tasks[0].validation.timeout_seconds = 0)],
      ['string depends_on', (d) => (d.tasks[2].depends_on = 'task-001')],
      ['zero max_parallel_agents', (d) => (d.session_config.max_parallel_agents = 0)],
      ['a 501-character title', (d) => (d.tasks[0].title = 'x'.repeat(501))],
      ['a context over its limit', (d) => (d.tasks[0].context = 'x'.repeat(MAX_CONTEXT_CHARS + 1))],
      ['a validation command over its limit', (d) => (d.tasks[0].validation.command = 'x'.repeat(MAX_COMMAND_CHARS + 1))],
      ['a cleanup command over its limit', (d) => (d.tasks[1].on_failure.cleanup = 'x'.repeat(MAX_COMMAND_CHARS + 1))],
      ['an agent command over its limit', (d) => (d.session_config.agent_command = 'x'.repeat(MAX_COMMAND_CHARS + 1))],
      ['a files_hint entry over its limit', (d) => (d.tasks[0].files_hint = ['x'.repeat(MAX_PATH_CHARS + 1)])],
      ['a validation timeout that overflows a timer', (d) => (d.tasks[0].validation.timeout_seconds = 2_147_484)],
      ['an agent timeout over 7 days', (d) => (d.session_config.agent_timeout_seconds = MAX_TIMEOUT_SECONDS + 1)],
      ['a cleanup timeout over 7 days', (d) => (d.session_config.cleanup_timeout_seconds = MAX_TIMEOUT_SECONDS + 1)],
      ['a health check timeout over 7 days', (d) => (d.session_config.health_check_timeout_seconds = MAX_TIMEOUT_SECONDS + 1)],
      ['a negative last_task_number', (d) => (d.last_task_number = -1)],
    ];
    for (const [name, mutate] of mutants) {
      const doc = structuredClone(base);
      mutate(doc);
      assert.equal(parseTaskFile(JSON.stringify(doc)).ok, false, `parseTaskFile should refuse: ${name}`);
      assert.notDeepEqual(validate(schema, doc), [], `the JSON Schema should refuse: ${name}`);
    }
  });

  it('is what the build writes to dist/harness-tasks.schema.json', () => {
    const file = resolve(__dirname, '../../../../../dist/harness-tasks.schema.json');
    assert.ok(existsSync(file), `${file} missing: run node esbuild.mjs`);
    assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), schema);
  });
});
