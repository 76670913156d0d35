// Whether the first program of a command line can run, found before any work is done.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { checkProgram, firstProgram } from '../../../../src/core/controller/programCheck';
import { tempDir } from '../../helpers/tmp';

describe('core/controller/programCheck', () => {
  it('firstProgram: the first word, assignments skipped, quotes undone', () => {
    assert.equal(firstProgram('claude -p "$(cat "$LAUNCHPAD_PROMPT_FILE")"'), 'claude');
    assert.equal(firstProgram('  cladue -p x'), 'cladue');
    assert.equal(firstProgram('FOO=1 BAR="a b" ./agent.sh --x'), './agent.sh');
    assert.equal(firstProgram("'/path with space/agent' arg"), '/path with space/agent');
    assert.equal(firstProgram('"/opt/my agent/run" x'), '/opt/my agent/run');
    assert.equal(firstProgram('my\\ agent x'), 'my agent');
    assert.equal(firstProgram('npm test -- rate-limit'), 'npm');
    assert.equal(firstProgram('test -f src/a/done.txt'), 'test');
  });

  it('firstProgram: undefined where only the shell could tell', () => {
    for (const line of ['"$AGENT" -p x', '$(which claude) -p', '`x` y', '(cd a && b)', '> out cmd', '', '   ', 'FOO=1', '"unterminated']) {
      assert.equal(firstProgram(line), undefined, line);
    }
  });

  it('checkProgram: a program on PATH, a shell word, a path that exists and is executable: nothing to report', async () => {
    const dir = tempDir('launchpad-prog-');
    writeFileSync(join(dir, 'agent.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    const env = { PATH: process.env.PATH };
    assert.equal(await checkProgram('sh -c true', dir, env), undefined);
    assert.equal(await checkProgram('case "$X" in *) true ;; esac', dir, env), undefined);
    assert.equal(await checkProgram('cd sub && make', dir, env), undefined);
    assert.equal(await checkProgram('./agent.sh --x', dir, env), undefined);
    assert.equal(await checkProgram('"$AGENT" x', dir, env), undefined, 'unknowable: left to the run');
  });

  it('checkProgram: missing on PATH, a path that does not exist, a file that is not executable', async () => {
    const dir = tempDir('launchpad-prog-');
    writeFileSync(join(dir, 'plain.sh'), 'echo hi\n');
    chmodSync(join(dir, 'plain.sh'), 0o644);
    const env = { PATH: process.env.PATH };
    assert.deepEqual(await checkProgram('cladue -p x', dir, env), { program: 'cladue', problem: 'missing' });
    assert.deepEqual(await checkProgram('./nope.sh', dir, env), { program: './nope.sh', problem: 'missing' });
    assert.deepEqual(await checkProgram('./plain.sh', dir, env), { program: './plain.sh', problem: 'not-executable' });
  });

  it('checkProgram looks in the environment it is given: a PATH entry relative to the worktree counts', async () => {
    const dir = tempDir('launchpad-prog-');
    mkdirSync(join(dir, 'node_modules/.bin'), { recursive: true });
    writeFileSync(join(dir, 'node_modules/.bin/mocha-x'), '#!/bin/sh\n', { mode: 0o755 });
    assert.equal(await checkProgram('mocha-x --reporter dot', dir, { PATH: `node_modules/.bin:${process.env.PATH}` }), undefined);
    assert.deepEqual(await checkProgram('mocha-x', dir, { PATH: process.env.PATH }), { program: 'mocha-x', problem: 'missing' });
  });
});
