// A local run's agent, worktree set-up and validation keep the person's environment (their tests
// may need any of it) but never Launchpad's own secrets: the queue's URL and the shared remote.
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { agentCmd, harness, read, run, show, shq, tempDir } from './support';

describe("a local run's environment", function () {
  this.timeout(60_000);

  it("agent, set-up and validation: the person's variables kept, LAUNCHPAD_QUEUE_URL and LAUNCHPAD_REMOTE gone", async () => {
    const echo = tempDir('launchpad-env-');
    const root = harness({
      tasks: [{ id: 'task-001', validate: `env | sort > ${shq(join(echo, 'validation.env'))} && test -f src/task-001/done.txt` }],
      sessionConfig: { worktree_setup: `env | sort > ${shq(join(echo, 'setup.env'))}` },
    });
    const r = await run(root, agentCmd('prints-env.sh'), [], {
      ECHO_DIR: echo,
      LAUNCHPAD_QUEUE_URL: 'redis://:queue-secret-1@127.0.0.1:6379/0',
      LAUNCHPAD_REMOTE: 'https://x-access-token:remote-secret-2@git.example.invalid/acme/app.git',
      PERSONS_TOKEN: 'persons-own-3',
    });
    assert.equal(r.code, 0, show(r, root));
    for (const file of ['task-001.agent.env', 'setup.env', 'validation.env']) {
      const env = read(join(echo, file));
      assert.doesNotMatch(env, /^LAUNCHPAD_(QUEUE_URL|REMOTE)=/m, file);
      assert.ok(!env.includes('queue-secret-1') && !env.includes('remote-secret-2'), `${file}:\n${env}`);
      assert.match(env, /^PERSONS_TOKEN=persons-own-3$/m, file);
      assert.match(env, /^LAUNCHPAD_TASK_ID=task-001$/m, file);
    }
  });
});
