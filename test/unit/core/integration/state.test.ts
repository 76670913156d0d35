// .launchpad/integration.json: read back as written; a file that is not JSON or has a wrong
// field is an error naming the file and the field, and reading it changes nothing.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  emptyIntegrationState,
  IntegrationStateError,
  readIntegrationState,
  setResult,
  writeIntegrationState,
} from '../../../../src/core/integration/state';
import { tempDir } from '../../helpers/tmp';

describe('core/integration/state', () => {
  it('none yet is undefined; a written state reads back; a green result moves last_green, a red one does not', () => {
    const file = join(tempDir('launchpad-integration-'), '.launchpad', 'integration.json');
    assert.equal(readIntegrationState(file), undefined);
    const state = emptyIntegrationState();
    setResult(state, 'green', 'a'.repeat(40), '2026-01-01T00:00:00Z');
    setResult(state, 'red', 'b'.repeat(40), '2026-01-01T00:01:00Z');
    state.flaky.push({ commit: 'c'.repeat(40), at: '2026-01-01T00:02:00Z' });
    writeIntegrationState(file, state);
    const back = readIntegrationState(file)!;
    assert.deepEqual(back, state);
    assert.equal(back.status, 'red');
    assert.equal(back.last_green, 'a'.repeat(40));
  });

  it('a file that is not JSON, or has a wrong field, is an error naming the file and the field; the file is left as it is', () => {
    const file = join(tempDir('launchpad-integration-'), 'integration.json');
    writeFileSync(file, '{ "version": 1,');
    assert.throws(
      () => readIntegrationState(file),
      (err: Error) => err instanceof IntegrationStateError && err.message.startsWith(`${file}: not JSON`),
    );
    const bad = JSON.stringify({ ...emptyIntegrationState(), status: 'purple' });
    writeFileSync(file, bad);
    assert.throws(
      () => readIntegrationState(file),
      (err: Error) => err instanceof IntegrationStateError && err.message.startsWith(`${file}: status: `),
    );
    assert.equal(readFileSync(file, 'utf8'), bad);
  });
});
