// eslint fails on a cycle of imports in src/ (scripts/eslint/noImportCycle.mjs): a cycle of
// value imports is reported on each import inside it; a cycle closed only by type imports is
// not (it leaves nothing at run time); and src/ as it is has none.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { tempDir } from '../helpers/tmp';

const REPO = resolve(__dirname, '../../../..');

async function lint(root: string, files: string[]): Promise<Array<{ file: string; line: number; message: string }>> {
  const { ESLint } = require('eslint') as typeof import('eslint');
  const { noImportCycle } = (await import(join(REPO, 'scripts/eslint/noImportCycle.mjs'))) as { noImportCycle: unknown };
  const tseslint = require('typescript-eslint') as { parser: unknown };
  const eslint = new ESLint({
    cwd: root,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser as never },
        plugins: { launchpad: { rules: { 'no-import-cycle': noImportCycle as never } } },
        rules: { 'launchpad/no-import-cycle': ['error', { root: join(root, 'src') }] },
      },
    ],
  });
  const results = await eslint.lintFiles(files);
  return results.flatMap((r) =>
    r.messages
      .filter((m) => m.ruleId === 'launchpad/no-import-cycle')
      .map((m) => ({ file: r.filePath.slice(root.length + 1), line: m.line, message: m.message })),
  );
}

describe('lint: no import cycles in src/', function () {
  this.timeout(60_000);

  it('reports each value import inside a cycle; a cycle closed by type imports only is not one', async () => {
    const root = tempDir('launchpad-cycles-');
    mkdirSync(join(root, 'src'));
    const write = (name: string, text: string) => writeFileSync(join(root, 'src', name), text);
    write('a.ts', "import { b } from './b';\nexport const a = () => b();\n");
    write('b.ts', "import { c } from './c';\nexport const b = () => c();\n");
    write('c.ts', "import { a } from './a';\nimport type { T } from './d';\nexport const c = (): T => a;\n");
    write('d.ts', "import { type U } from './e';\nexport type T = U;\n");
    write('e.ts', "import type { T } from './d';\nexport type U = T | number;\n");
    const found = await lint(root, ['src/*.ts']);
    assert.deepEqual(found.map((f) => [f.file, f.line]).sort(), [
      ['src/a.ts', 1],
      ['src/b.ts', 1],
      ['src/c.ts', 1],
    ]);
    assert.match(found[0]!.message, /^This import is part of a cycle: /);
  });

  it('src/ has none', async () => {
    assert.deepEqual(await lint(REPO, ['src/**/*.ts']), []);
  });
});
