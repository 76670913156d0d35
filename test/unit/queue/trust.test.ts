// What the queue trusts, on real Redis with real worker and controller processes. An attempt on a
// worker gets an allow-list of the worker's environment: never the queue's URL, the remote's
// credentials (in a variable or in the clone's config) nor the pod's other variables. And a
// worker's word that the validation passed merges nothing: the controller runs it itself.
import * as assert from 'node:assert/strict';
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { toolVariables } from '../../../src/core/agents/presets';
import { nameMatches, WORKER_BASE_VARIABLES } from '../../../src/core/process/environment';
import { git } from '../helpers/gitRepo';
import { readLog, readTasks } from '../helpers/harness';
import { tempDir } from '../helpers/tmp';
import { attemptRefs, until, useQueueRig } from './queueRig';

describe('queue trust: what a worker gives its agents, and what the controller takes from a worker', function () {
  this.timeout(120_000);
  const q = useQueueRig();

  it("an attempt's agent, set-up and validation on a worker get the allow-list: no queue URL, remote credential or other secret", async () => {
    const envDir = tempDir('launchpad-agent-env-');
    const { root, remote, env } = q.rig.setup(
      [{ id: 'e1', validate: 'env | sort > "$QUEUE_AGENT_ENV/validation.$$.env" && test -f src/e1/done.txt' }],
      1,
      { worktree_setup: 'env | sort > "$QUEUE_AGENT_ENV/setup.$$.env"' },
    );
    // The remote as a forge gives it, a push token in its URL; git's own configuration (as a
    // credential helper would be) maps it to the bare repository here.
    const token = 'remote-push-token-7c1f9a';
    const url = `https://x-access-token:${token}@git.example.invalid/acme/app.git`;
    const shared = {
      ...env,
      LAUNCHPAD_REMOTE: url,
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: `url.${remote}.insteadOf`,
      GIT_CONFIG_VALUE_0: url,
      QUEUE_AGENT_ENV: envDir,
      SERVICE_TOKEN: 'service-secret-42',
    };
    const worker = q.rig.worker(
      'w1',
      shared,
      {
        ANTHROPIC_API_KEY: 'sk-ant-test-key',
        EXTRA_FOR_AGENT: 'extra-1',
        GH_TOKEN: token,
        SSH_AUTH_SOCK: '/tmp/ssh-agent.sock',
        GIT_ASKPASS: '/bin/echo',
        LAUNCHPAD_WORKER_PASS_ENV: 'QUEUE_AGENT_*,EXTRA_FOR_AGENT,GH_TOKEN',
      },
      1,
    );
    const end = await q.rig.controller(root, shared).done;
    assert.equal(end.code, 0, `${end.stdout}\n${end.stderr}`);
    q.rig.assertMergedOnce(root, ['e1']);

    const files = readdirSync(envDir).filter((f) => f.endsWith('.env'));
    const read = (f: string) => readFileSync(join(envDir, f), 'utf8');
    // The worker's processes carry its guard's token; the controller's own run of the check does not.
    const onWorker = files.filter((f) => /^LAUNCHPAD_WORKER_GUARD=/m.test(read(f)));
    const onController = files.filter((f) => !onWorker.includes(f));
    for (const what of ['agent', 'setup', 'validation'])
      assert.ok(
        onWorker.some((f) => f.startsWith(`${what}.`)),
        `the worker's ${what} printed its environment: ${files.join(', ')}`,
      );
    const allowed = [
      ...WORKER_BASE_VARIABLES,
      ...toolVariables(undefined),
      'LAUNCHPAD_*',
      '_LAUNCHPAD_PROC',
      'QUEUE_AGENT_*',
      'EXTRA_FOR_AGENT',
    ];
    const shell = ['PWD', 'OLDPWD', 'SHLVL', '_'];
    for (const f of onWorker) {
      const text = read(f);
      const names = text.split('\n').flatMap((l) => /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(l)?.[1] ?? []);
      const extra = names.filter((n) => !shell.includes(n) && !allowed.some((p) => nameMatches(n, p)));
      assert.deepEqual(extra, [], `${f}: variables beyond the allow-list`);
      for (const secret of [
        q.redis.password,
        token,
        'service-secret-42',
        'LAUNCHPAD_QUEUE_URL=',
        'LAUNCHPAD_REMOTE=',
        'GH_TOKEN=',
        'GIT_CONFIG_',
      ])
        assert.ok(!text.includes(secret), `${f} holds ${secret}:\n${text}`);
      assert.match(text, /^PATH=/m, f);
      assert.match(text, /^HOME=/m, f);
    }
    const agentEnv = read(onWorker.find((f) => f.startsWith('agent.'))!);
    // A command that is not a preset gets every preset's variables; the worker's additions too.
    assert.match(agentEnv, /^ANTHROPIC_API_KEY=sk-ant-test-key$/m);
    assert.match(agentEnv, /^EXTRA_FOR_AGENT=extra-1$/m);
    assert.match(agentEnv, /^LAUNCHPAD_TASK_ID=e1$/m);
    // The clone the agent works in keeps the remote without its token.
    const origins = readdirSync(envDir).filter((f) => f.endsWith('.origin'));
    assert.deepEqual(
      origins.map((f) => read(f).trim()),
      ['https://git.example.invalid/acme/app.git'],
    );
    // Nor anywhere in the clone the agent works in, nor the worker's folder beside it.
    const gitDirs = readdirSync(envDir).filter((f) => f.endsWith('.gitdir'));
    assert.equal(gitDirs.length, 1, files.join(', '));
    const clone = dirname(read(gitDirs[0]!).trim());
    for (const dir of [clone, `${clone}.work`])
      for (const f of filesUnder(dir)) {
        const text = readFileSync(f, 'latin1');
        assert.ok(!text.includes(token) && !text.includes(q.redis.password), `${f} holds a credential`);
      }
    // On the controller (a local run's rule): the person's variables, none of Launchpad's secrets.
    assert.ok(onController.length >= 2, `the controller's set-up and validation: ${files.join(', ')}`);
    for (const f of onController) {
      const text = read(f);
      assert.doesNotMatch(text, /^LAUNCHPAD_(QUEUE_URL|REMOTE)=/m, f);
      assert.ok(!text.includes(q.redis.password), `${f} holds the Redis password`);
      assert.match(text, /^SERVICE_TOKEN=service-secret-42$/m, f);
    }
    const out = worker.output();
    assert.ok(!out.stderr.includes(token) && !end.stderr.includes(token) && !end.stdout.includes(token), 'the token in an output');
  });

  it('a worker that reports a pass for work whose validation fails does not get it merged: the controller runs the validation', async () => {
    const { root, env } = q.rig.setup([{ id: 'f1', maxAttempts: 1, validate: "grep -q '^approved$' src/f1/done.txt" }], 1);
    // A compromised worker: its grep says yes to anything, so its validation always passes.
    const bin = tempDir('launchpad-lying-bin-');
    writeFileSync(join(bin, 'grep'), '#!/bin/sh\nexit 0\n');
    chmodSync(join(bin, 'grep'), 0o755);
    q.rig.worker('w1', env, { PATH: `${bin}:${process.env.PATH}` }, 1);
    const before = git(root, 'rev-parse', 'main');
    const end = await q.rig.controller(root, env).done;
    assert.equal(end.code, 1, `${end.stdout}\n${end.stderr}`);
    assert.equal(git(root, 'rev-parse', 'main'), before, 'nothing merged');
    const task = readTasks(root).tasks.find((t) => t.id === 'f1')!;
    assert.equal(task.status, 'failed');
    assert.match(
      task.error_log.join('\n'),
      /\[TEST_FAIL\] grep -q '\^approved\$' src\/f1\/done\.txt exited with 1 \(it passed on worker w1; the controller's run decides\)/,
    );
    const log = readLog(root).filter((l) => l.includes('[f1]'));
    assert.ok(
      log.some((l) => / VALIDATE .*result=PASS worker=w1/.test(l)),
      log.join('\n'),
    );
    assert.ok(
      log.some((l) => / VALIDATE .*result=FAIL$/.test(l)),
      log.join('\n'),
    );
    assert.ok(!log.some((l) => / MERGE /.test(l)), log.join('\n'));
    // The attempt's work is kept, as any discarded attempt's is.
    assert.match(git(root, 'for-each-ref', '--format=%(refname)', 'refs/launchpad/attempts/f1/'), /refs\/launchpad\/attempts\/f1\/1/);
  });

  it("a stop during the controller's validation leaves the attempt in progress, uncharged; the next run checks it again and merges", async () => {
    const gate = tempDir('launchpad-check-gate-');
    // The worker's validation passes at once; the controller's waits for the gate to open.
    const validate = `[ -n "$LAUNCHPAD_WORKER_GUARD" ] || { touch "$QUEUE_AGENT_GATE/checking"; while [ ! -f "$QUEUE_AGENT_GATE/open" ]; do sleep 0.05; done; }; test -f src/g1/done.txt`;
    const { root, remote, env } = q.rig.setup([{ id: 'g1', validate }], 1);
    const shared = { ...env, QUEUE_AGENT_GATE: gate };
    q.rig.worker('w1', shared, {}, 1);
    const first = q.rig.controller(root, shared);
    await until(
      "the controller's validation",
      () => existsSync(join(gate, 'checking')),
      60_000,
      () => first.output().stderr,
    );
    first.child.kill('SIGINT');
    const stopped = await first.done;
    assert.notEqual(stopped.code, 0, `${stopped.stdout}\n${stopped.stderr}`);
    let task = readTasks(root).tasks.find((t) => t.id === 'g1')!;
    assert.deepEqual([task.status, task.attempts, task.error_log], ['in_progress', 1, []]);
    assert.equal(git(root, 'log', '--merges', '--format=%s', 'main'), '', 'nothing merged');
    assert.equal(attemptRefs(remote).filter((r) => r.endsWith('/w1')).length, 1, 'its result stays on the remote');

    writeFileSync(join(gate, 'open'), '');
    const end = await q.rig.controller(root, shared).done;
    assert.equal(end.code, 0, `${end.stdout}\n${end.stderr}`);
    q.rig.assertMergedOnce(root, ['g1']);
    task = readTasks(root).tasks.find((t) => t.id === 'g1')!;
    assert.deepEqual([task.attempts, task.error_log], [1, []]);
    const log = readLog(root).filter((l) => l.includes('[g1]'));
    assert.ok(
      log.some((l) => l.includes('action="followed queued attempt"')),
      log.join('\n'),
    );
    assert.deepEqual(attemptRefs(remote), []);
  });

  it('a worker whose git identity is in GIT_* variables (which its agents do not get): its agents commit as it', async () => {
    const { root, env } = q.rig.setup([{ id: 'n1' }], 1);
    const home = tempDir('launchpad-empty-home-');
    const identity = { GIT_AUTHOR_NAME: 'Pod Author', GIT_AUTHOR_EMAIL: 'pod@example.invalid' };
    q.rig.worker(
      'w1',
      env,
      {
        HOME: home,
        XDG_CONFIG_HOME: home,
        GIT_CONFIG_NOSYSTEM: '1',
        ...identity,
        GIT_COMMITTER_NAME: 'Pod Author',
        GIT_COMMITTER_EMAIL: 'pod@example.invalid',
      },
      1,
    );
    const end = await q.rig.controller(root, env).done;
    assert.equal(end.code, 0, `${end.stdout}\n${end.stderr}`);
    q.rig.assertMergedOnce(root, ['n1']);
    assert.equal(git(root, 'log', '-1', '--format=%an <%ae>', 'main^2'), 'Pod Author <pod@example.invalid>');
  });
});

/** Every regular file under `dir`. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? e.path, e.name));
}
