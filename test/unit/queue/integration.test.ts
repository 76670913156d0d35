// The integration gate with the queue executor: its merges are the controller's, so the gate
// checks the base after each of them, reverts the merge that broke it and requeues the task,
// whose next job runs on a worker with the collision in its prompt.
import * as assert from 'node:assert/strict';

import { assertRevertedAndRedone, FILES, scenarioAgents, TASKS } from '../controller/integrationScenario';
import { startCli } from '../helpers/cli';
import { useQueueRig } from './queueRig';

describe('queue executor: the integration gate', function () {
  this.timeout(120_000);
  const q = useQueueRig();

  it('the merge that breaks the base is reverted with a new commit, requeued, redone on a worker and merged', async () => {
    const { root, env } = q.rig.setup(TASKS, 2, { integration_check: { command: 'node all.js' } }, FILES);
    q.rig.worker('w1', env);
    q.rig.worker('w2', env);
    const run = startCli(['run', '--agent', scenarioAgents(root), '--executor', 'queue'], { cwd: root, env });
    q.rig.procs.push(run);
    const end = await run.done;
    assert.equal(end.code, 0, `${end.stdout}\n${end.stderr}`);
    assertRevertedAndRedone(root);
  });
});
