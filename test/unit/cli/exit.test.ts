import assert from 'node:assert/strict';

import { EXIT, exitFor, UsageError } from '../../../src/cli/exit';
import { InputError } from '../../../src/core/inputError';
import { LockHeldError } from '../../../src/core/lock';
import { parseTaskFile } from '../../../src/core/taskFile/parse';
import { TaskFileMissingError } from '../../../src/core/taskFile/read';

describe('cli/exit', () => {
  it('a held lock exits 3 with its message', () => {
    const err = new LockHeldError('/r/.launchpad/session.lock', undefined);
    assert.deepEqual(exitFor(err), { code: EXIT.LOCKED, message: err.message });
  });

  it('expected errors exit 2 with their message alone', () => {
    const parsed = parseTaskFile('[]', 'harness-tasks.json');
    assert.ok(!parsed.ok);
    for (const err of [
      new InputError('bad input'),
      new UsageError('run: bad flag'),
      new TaskFileMissingError('/r/harness-tasks.json'),
      parsed.error,
    ]) {
      assert.deepEqual(exitFor(err), { code: EXIT.USAGE, message: err.message }, err.name);
    }
  });

  it('anything else is an internal error, exit 1, with its stack', () => {
    const err = new Error('boom');
    const r = exitFor(err);
    assert.equal(r.code, EXIT.INCOMPLETE);
    assert.equal(r.message, `internal error: ${err.stack}`);
    assert.deepEqual(exitFor('text'), { code: EXIT.INCOMPLETE, message: 'internal error: text' });
  });
});
