// The attempt folder's records a recovery decides by: the verdict (written durably as the agent
// ends) and the agent that ran the attempt.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

import { StatePaths } from '../../../src/core/statePaths';
import { tempDir } from '../helpers/tmp';

describe('core/statePaths: attempt records', () => {
  it('a verdict is written whole (success, or fail with its category and one-line reason) and read back with its agent', () => {
    const paths = new StatePaths(tempDir());
    const ok = paths.createAttempt('task-001', 1, 3, 'agent_0001');
    assert.equal(ok.verdict(), undefined);
    ok.recordVerdict('agent_0001', { kind: 'success' });
    assert.equal(readFileSync(ok.verdictFile, 'utf8'), 'success\nagent=agent_0001\n');
    assert.deepEqual(ok.verdict(), { kind: 'success', agentId: 'agent_0001' });
    assert.ok(!existsSync(`${ok.verdictFile}.tmp`));

    const failed = paths.createAttempt('task-001', 2, 3, 'agent_0002');
    failed.recordVerdict('agent_0002', { kind: 'fail', category: 'AGENT_FAIL', reason: 'could not\n  resolve imports' });
    assert.deepEqual(failed.verdict(), {
      kind: 'fail',
      category: 'AGENT_FAIL',
      reason: 'could not resolve imports',
      agentId: 'agent_0002',
    });
    assert.equal(failed.agent(), 'agent_0002');
    assert.equal(failed.number, 2);
    assert.equal(paths.createAttempt('task-001', 2, 4).number, 2, 'attempt-2.2');
  });

  it('a verdict file that is torn, without its agent or with an unknown category counts as no verdict', () => {
    const a = new StatePaths(tempDir()).createAttempt('task-001', 1, 1);
    for (const text of ['succ', 'success\n', 'success\nagent=\n', 'fail [NOT_A_CATEGORY] x\nagent=agent_1\n', 'fail\nagent=agent_1\n']) {
      writeFileSync(a.verdictFile, text);
      assert.equal(a.verdict(), undefined, JSON.stringify(text));
    }
    assert.equal(a.agent(), undefined, 'an attempt made without an agent id');
  });
});
