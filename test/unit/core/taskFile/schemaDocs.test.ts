// The task file's field descriptions live apart from the schema (the extension never loads
// them): each documented field has exactly one, none is left over, and once registered they
// reach the editor's JSON Schema.
import assert from 'node:assert/strict';

import { taskFileJsonSchema } from '../../../../src/core/taskFile/jsonSchema';
import { DOCUMENTED } from '../../../../src/core/taskFile/schema';
import { SCHEMA_DOCS } from '../../../../src/core/taskFile/schemaDocs';

describe('core/taskFile schemaDocs', () => {
  it('gives each documented field one description, and none that no field uses', () => {
    const keys = DOCUMENTED.map(([, key]) => key);
    assert.equal(new Set(keys).size, keys.length, 'a key documents two fields');
    assert.deepEqual(
      keys.filter((k) => !SCHEMA_DOCS[k]),
      [],
    );
    assert.deepEqual(
      Object.keys(SCHEMA_DOCS).filter((k) => !keys.includes(k)),
      [],
    );
  });

  it("puts them in the editor's JSON Schema", () => {
    const schema = taskFileJsonSchema() as { properties: { session_config: { properties: Record<string, { description?: string }> } } };
    assert.match(
      schema.properties.session_config.properties.review!.description!,
      /^auto \(absent\): a task merges once its validation passes/,
    );
  });
});
