import * as z from 'zod/mini';

import { taskFileSchema } from './schema';
import { registerSchemaDocs } from './schemaDocs';

/** JSON Schema for harness-tasks.json, contributed to the editor through `jsonValidation`. */
export function taskFileJsonSchema(): Record<string, unknown> {
  registerSchemaDocs();
  const schema = z.toJSONSchema(taskFileSchema, { target: 'draft-7', io: 'input', unrepresentable: 'any' });
  return { ...schema, title: 'Launchpad task file (harness-tasks.json)' };
}
