// A task file that cannot be read at all is bad input too: exit 2, named, nothing created.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { runCli } from '../helpers/cli';
import { tempDir } from '../helpers/tmp';

describe('an unreadable harness-tasks.json', () => {
  it('a directory in its place: status and add exit 2 naming it, and nothing is created', () => {
    const root = tempDir();
    mkdirSync(join(root, 'harness-tasks.json'));
    for (const args of [['status'], ['add', 'x']]) {
      const r = runCli(args, { cwd: root });
      assert.equal(r.code, 2, `${args[0]}: ${r.stderr}`);
      assert.match(r.stderr, /harness-tasks\.json: is a directory, not a file/);
    }
    assert.deepEqual(readdirSync(root).sort(), ['harness-tasks.json']);
  });
});
