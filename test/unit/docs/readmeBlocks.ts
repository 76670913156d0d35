// The README's command blocks as a person copies them: the test runs what README.md says, so the
// quick start cannot drift from what works.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(__dirname, '../../../..');

/** The first ```sh block after the heading `heading` of README.md, as written. */
export function readmeBlockAfter(heading: string | undefined): string {
  const text = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const at = heading === undefined ? 0 : text.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`README.md has no heading "${heading}": the test runs the block under it`);
  const block = /\n```sh\n([\s\S]*?)\n```\n/.exec(text.slice(at));
  if (!block) throw new Error(`README.md: no \`\`\`sh block after "${heading ?? 'the start'}"`);
  return block[1]!;
}
