import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';

import { CLI, runCli } from './helpers/cli';
import { tempDir } from './helpers/tmp';

describe('the built CLI', () => {
  it('exists and prints its help', () => {
    assert.ok(existsSync(CLI), `${CLI} missing: run npm run build`);
    const r = runCli(['--help'], { cwd: tempDir() });
    assert.equal(r.code, 0);
    assert.match(r.stdout, /usage: launchpad/);
  });
});
