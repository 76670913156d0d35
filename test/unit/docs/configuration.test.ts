// docs/configuration.md is generated from the schemas (scripts/gen-config-doc.mjs): these tests
// fail when a field or setting has no description, or when the committed file differs from what
// the generator writes now.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { taskFileJsonSchema } from '../../../src/core/taskFile/jsonSchema';
import { SETTING_DECLARATIONS } from '../../../src/vscode/settingsSchema';
import { tempDir } from '../helpers/tmp';

const ROOT = resolve(__dirname, '../../../..');
const DOC = join(ROOT, 'docs/configuration.md');
const GENERATOR = join(ROOT, 'scripts/gen-config-doc.mjs');

const generate = (...args: string[]) => spawnSync(process.execPath, [GENERATOR, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });

interface JsonSchema {
  description?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
}

/** Every field of the task file's JSON Schema, as `path: description`. */
function fields(schema: JsonSchema, prefix = ''): [string, string | undefined][] {
  return Object.entries(schema.properties ?? {}).flatMap(([name, prop]) => {
    const inner = [prop, ...(prop.anyOf ?? [])].flatMap((s) => [s, ...(s.items ? [s.items] : [])]);
    const sep = prop.items || prop.anyOf?.some((s) => s.items) ? '[].' : '.';
    return [
      [prefix + name, prop.description] as [string, string | undefined],
      ...inner.flatMap((s) => fields(s, `${prefix}${name}${sep}`)),
    ];
  });
}

describe('docs/configuration.md: generated from the schemas', () => {
  it('every field of harness-tasks.json and every VS Code setting has a description', () => {
    const all = fields(taskFileJsonSchema() as JsonSchema);
    assert.ok(
      all.some(([path]) => path === 'tasks[].validation.command'),
      'nested fields are walked',
    );
    assert.deepEqual(
      all.filter(([, d]) => !d?.trim()).map(([path]) => path),
      [],
      'fields without a description: give each one with doc(…) in src/core/taskFile/schema.ts',
    );
    for (const s of Object.values(SETTING_DECLARATIONS)) assert.ok(s.markdownDescription.trim(), `${s.key} has no description`);
  });

  it('the committed file is what the generator writes now (run `npm run docs` to regenerate)', () => {
    const r = generate('--check');
    assert.equal(r.status, 0, r.stderr);
    const text = readFileSync(DOC, 'utf8');
    for (const [path, description] of fields(taskFileJsonSchema() as JsonSchema)) {
      const row = path.replace(/^(session_config|tasks\[\])\./, '');
      assert.ok(text.includes(`| \`${row}\` |`), `docs/configuration.md has no row for ${path}`);
      assert.ok(text.includes(description!.split('<')[0]!), `docs/configuration.md does not describe ${path}`);
    }
    for (const s of Object.values(SETTING_DECLARATIONS)) assert.ok(text.includes(`| \`${s.key}\` |`), `no row for ${s.key}`);
  });

  it('a stale copy fails the check naming `npm run docs`; regenerating keeps the text around the block', () => {
    const file = join(tempDir('launchpad-config-doc-'), 'configuration.md');
    const committed = readFileSync(DOC, 'utf8');
    const stale = `# Mine\n\nBefore the block.\n\n${committed.slice(committed.indexOf('<!-- BEGIN'))}\nAfter the block.\n`.replace(
      /^\| `max_parallel_agents` .*\n/m,
      '',
    );
    writeFileSync(file, stale);

    const check = generate('--check', '--file', file);
    assert.equal(check.status, 1);
    assert.match(check.stderr, /differs from what .* generate: run `npm run docs`/);
    assert.equal(readFileSync(file, 'utf8'), stale, '--check writes nothing');

    const write = generate('--file', file);
    assert.equal(write.status, 0, write.stderr);
    const after = readFileSync(file, 'utf8');
    assert.match(after, /^# Mine\n\nBefore the block\.\n\n<!-- BEGIN/);
    assert.match(after, /<!-- END generated -->\n\nAfter the block\.\n$/);
    assert.match(after, /^\| `max_parallel_agents` \| integer \| `3` \|/m);
  });

  it('a file without the markers is refused, unchanged', () => {
    const file = join(tempDir('launchpad-config-doc-'), 'configuration.md');
    writeFileSync(file, '# Configuration\n\nno block here\n');
    const r = generate('--file', file);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /configuration\.md: the markers of the generated block are missing/);
    assert.equal(readFileSync(file, 'utf8'), '# Configuration\n\nno block here\n');
  });
});
