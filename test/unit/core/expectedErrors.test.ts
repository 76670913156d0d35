import assert from 'node:assert/strict';

import { UsageError } from '../../../src/cli/exit';
import { RunConfigError } from '../../../src/core/controller/controller';
import { isExpectedError } from '../../../src/core/expectedErrors';
import { Git, GitError } from '../../../src/core/git/git';
import { InputError } from '../../../src/core/inputError';
import { LockHeldError } from '../../../src/core/lock';
import { LogFilterError, parseLogFilter } from '../../../src/core/log/logFilterSpec';
import { parseTaskFile, TaskFileError } from '../../../src/core/taskFile/parse';
import { TaskFileMissingError } from '../../../src/core/taskFile/read';
import { tempDir } from '../helpers/tmp';

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  assert.fail('expected a throw');
}

describe('core/expectedErrors', () => {
  it('every error that carries a message for a person is expected', () => {
    const parsed = parseTaskFile('{', 'harness-tasks.json');
    assert.ok(!parsed.ok);
    const filterError = thrown(() => parseLogFilter({ type: 'NOPE' }));
    assert.ok(filterError instanceof LogFilterError);
    const expected: Array<[string, unknown]> = [
      ['InputError', new InputError('bad')],
      ['RunConfigError', new RunConfigError('no agent')],
      ['LogFilterError', filterError],
      ['TaskFileError', parsed.error],
      ['TaskFileMissingError', new TaskFileMissingError('/nowhere/harness-tasks.json')],
      ['LockHeldError', new LockHeldError('/nowhere/.launchpad/session.lock', undefined)],
      ['UsageError', new UsageError('run: unexpected argument')],
    ];
    assert.ok(parsed.error instanceof TaskFileError);
    for (const [name, err] of expected) assert.equal(isExpectedError(err), true, name);
  });

  it('bugs and failures of the machinery are not, whatever they are called', async () => {
    const gitError = await new Git(tempDir()).run(['rev-parse', '--verify', 'no-such-ref']).catch((e: unknown) => e);
    assert.ok(gitError instanceof GitError);
    const named = new Error('looks like one');
    named.name = 'InputError';
    const notExpected: Array<[string, unknown]> = [
      ['GitError', gitError],
      ['Error', new Error('boom')],
      ['TypeError', thrown(() => (undefined as unknown as { x: number }).x)],
      ['an Error named InputError', named],
      ['a plain object', { name: 'InputError', message: 'bad' }],
      ['a string', 'InputError'],
      ['undefined', undefined],
    ];
    for (const [what, err] of notExpected) assert.equal(isExpectedError(err), false, what);
  });

  it('an error from a second copy of the core counts too (another bundle)', () => {
    const file = require.resolve('../../../src/core/inputError');
    const base = require.resolve('../../../src/core/expectedErrors');
    const saved = [require.cache[file], require.cache[base]];
    delete require.cache[file];
    delete require.cache[base];
    try {
      const copy = require(file) as typeof import('../../../src/core/inputError');
      assert.notEqual(copy.InputError, InputError);
      const err = new copy.InputError('bad');
      assert.ok(!(err instanceof InputError));
      assert.equal(isExpectedError(err), true);
    } finally {
      require.cache[file] = saved[0];
      require.cache[base] = saved[1];
    }
  });
});
