export function taskFileJsonSchema(): object {
  return { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' };
}
