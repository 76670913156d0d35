// A run's settings resolved in one place: the retry back-off comes from the environment when
// LAUNCHPAD_RETRY_BACKOFF_SECONDS is set, else from session_config, else its default.
import assert from 'node:assert/strict';

import { DEFAULT_RETRY_BACKOFF_S, resolveRunConfig } from '../../../../src/core/controller/runConfig';
import { StatePaths } from '../../../../src/core/statePaths';
import { taskFile } from '../fixtures';

describe('controller/runConfig', () => {
  const paths = new StatePaths('/repo');
  const backoff = (env: NodeJS.ProcessEnv, configured?: number) => {
    const file = taskFile([]);
    if (configured !== undefined) file.session_config.retry_backoff_seconds = configured;
    return resolveRunConfig({ env }, file, paths, '/repo').retryBackoffSeconds;
  };

  it('the retry back-off: LAUNCHPAD_RETRY_BACKOFF_SECONDS, then session_config, then the default; a value that is not a whole number is ignored', () => {
    assert.equal(backoff({}), DEFAULT_RETRY_BACKOFF_S);
    assert.equal(backoff({}, 5), 5);
    assert.equal(backoff({ LAUNCHPAD_RETRY_BACKOFF_SECONDS: '0' }, 5), 0);
    assert.equal(backoff({ LAUNCHPAD_RETRY_BACKOFF_SECONDS: '12' }), 12);
    assert.equal(backoff({ LAUNCHPAD_RETRY_BACKOFF_SECONDS: 'soon' }, 5), 5);
    assert.equal(backoff({ LAUNCHPAD_RETRY_BACKOFF_SECONDS: '' }, 5), 5);
  });
});
