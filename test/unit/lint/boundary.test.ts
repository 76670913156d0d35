// The layer rule lives in eslint.config.mjs: the core and the CLI never import vscode, and the
// core never imports a front end. These cases lint real snippets with the project's own config,
// so a rule that stops firing (a moved folder, an edited glob) fails here.
import * as assert from 'node:assert/strict';
import { resolve } from 'node:path';

import { ESLint } from 'eslint';

const ROOT = resolve(__dirname, '../../../..');

async function boundaryErrors(file: string, text: string): Promise<string[]> {
  const eslint = new ESLint({
    cwd: ROOT,
    // Type information is not needed for an import rule, and the snippets are not on disk.
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parserOptions: { projectService: false } },
        rules: { '@typescript-eslint/no-floating-promises': 'off' },
      },
    ],
  });
  const [result] = await eslint.lintText(text, { filePath: resolve(ROOT, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('lint: the layer boundary', function () {
  this.timeout(60_000);

  it('refuses vscode in src/core and src/cli', async () => {
    for (const file of ['src/core/probe.ts', 'src/core/tasks/probe.ts', 'src/cli/probe.ts']) {
      const errors = await boundaryErrors(file, "import * as vscode from 'vscode';\nexport const v = vscode;\n");
      assert.equal(errors.length, 1, file);
      assert.match(errors[0]!, /without VS Code/);
    }
  });

  it('refuses a front end in src/core', async () => {
    assert.equal((await boundaryErrors('src/core/probe.ts', "import { main } from '../cli/main';\nexport const m = main;\n")).length, 1);
    assert.equal(
      (await boundaryErrors('src/core/tasks/probe.ts', "import { x } from '../../vscode/extension';\nexport const y = x;\n")).length,
      1,
    );
  });

  it('lets the extension import vscode and the core', async () => {
    const text = "import * as vscode from 'vscode';\nimport { Emitter } from '../core/events';\nexport const v = [vscode, Emitter];\n";
    assert.deepEqual(await boundaryErrors('src/vscode/probe.ts', text), []);
  });
});
