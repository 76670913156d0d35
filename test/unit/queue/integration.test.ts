// The integration gate with the queue executor: its merges are the controller's, so the gate
// checks the base after each of them, reverts the merge that broke it and requeues the task,
// whose next job runs on a worker with the collision in its prompt.
import * as assert from 'node:assert/strict';

import { assertRevertedAndRedone, FILES, scenarioAgents, TASKS } from '../controller/integrationScenario';
import { startCli } from '../helpers/cli';
import { queuePackages } from './queuePackages';
import { QueueRig } from './queueRig';
import { type RedisServer, startRedis } from './redisServer';

describe('queue executor: the integration gate', function () {
  this.timeout(120_000);
  let redis: RedisServer;
  let rig: QueueRig;

  before(async function () {
    this.timeout(180_000);
    queuePackages();
    redis = await startRedis();
    rig = new QueueRig(redis);
  });
  afterEach(() => rig.killAll());
  after(async () => {
    await redis?.stop();
  });

  it('the merge that breaks the base is reverted with a new commit, requeued, redone on a worker and merged', async () => {
    const { root, env } = rig.setup(TASKS, 2, { integration_check: { command: 'node all.js' } }, FILES);
    rig.worker('w1', env);
    rig.worker('w2', env);
    const run = startCli(['run', '--agent', scenarioAgents(root), '--executor', 'queue'], { cwd: root, env });
    rig.procs.push(run);
    const end = await run.done;
    assert.equal(end.code, 0, `${end.stdout}\n${end.stderr}`);
    assertRevertedAndRedone(root);
  });
});
