// The queue's options on the command line: each mistake is refused with the option named, exit 2,
// before anything is written, and a URL's password is never echoed.
import * as assert from 'node:assert/strict';

import { runCli } from '../helpers/cli';
import { git } from '../helpers/gitRepo';
import { makeHarness } from '../helpers/harness';
import { tempDir } from '../helpers/tmp';

describe('queue: worker and run --executor options', () => {
  it('worker: --queue and --repo are required, the URL must be redis://, --concurrency a whole number', () => {
    const cwd = tempDir();
    const env = { LAUNCHPAD_QUEUE_URL: '', LAUNCHPAD_REMOTE: '' };
    let r = runCli(['worker'], { cwd, env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--queue: required/);
    r = runCli(['worker', '--queue', 'redis://127.0.0.1:1'], { cwd, env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--repo: required/);
    r = runCli(['worker', '--queue', 'http://user:hunter2@host/', '--repo', 'r'], { cwd, env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--queue: "http:\/\/user:\*\*\*@host\/" is not a redis:\/\/ or rediss:\/\/ URL/);
    assert.ok(!r.stderr.includes('hunter2'));
    r = runCli(['worker', '--queue', 'redis://h:1', '--repo', 'r', '--concurrency', '0'], { cwd, env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--concurrency: expected a whole number of at least 1, got "0"/);
    r = runCli(['worker', '--queue', 'redis://h:1', '--repo', 'r'], { cwd, env: { ...env, LAUNCHPAD_QUEUE_LOCK_MS: 'soon' } });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /LAUNCHPAD_QUEUE_LOCK_MS: "soon" is not a whole number of milliseconds/);
  });

  it("worker: --pass-env and $LAUNCHPAD_WORKER_PASS_ENV take variable names, never Launchpad's own secrets; --idle-exit whole seconds", () => {
    const cwd = tempDir();
    const env = { LAUNCHPAD_QUEUE_URL: '', LAUNCHPAD_REMOTE: '' };
    const base = ['worker', '--queue', 'redis://h:1', '--repo', 'r'];
    let r = runCli([...base, '--pass-env', 'AWS_*,LAUNCHPAD_QUEUE_URL'], { cwd, env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--pass-env: "LAUNCHPAD_QUEUE_URL" would give agents LAUNCHPAD_QUEUE_URL, which never leaves the worker/);
    r = runCli(base, { cwd, env: { ...env, LAUNCHPAD_WORKER_PASS_ENV: 'LAUNCHPAD_*' } });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /\$LAUNCHPAD_WORKER_PASS_ENV: "LAUNCHPAD_\*" would give agents LAUNCHPAD_QUEUE_URL/);
    r = runCli([...base, '--pass-env', 'MY VAR'], { cwd, env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--pass-env: "MY VAR" is not a variable name/);
    r = runCli([...base, '--idle-exit', '0'], { cwd, env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--idle-exit: expected a whole number of at least 1, got "0"/);
  });

  it('run: --executor must be local or queue, and queue needs a URL; nothing is written', () => {
    const root = makeHarness({ tasks: [{ id: 'a' }], commitState: true });
    const env = { LAUNCHPAD_QUEUE_URL: '' };
    let r = runCli(['run', '--agent', 'true', '--executor', 'cloud'], { cwd: root, env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--executor: expected local or queue, got "cloud"/);
    r = runCli(['run', '--agent', 'true', '--executor', 'queue'], { cwd: root, env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--executor queue needs --queue redis:\/\/host:port/);
    r = runCli(['run', '--agent', 'true', '--executor', 'local', '--queue', 'redis://h:1'], { cwd: root, env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--queue is for --executor queue/);
    assert.equal(git(root, 'status', '--porcelain'), '');
  });

  it('the help lists the worker command and the run options', () => {
    const cwd = tempDir();
    assert.match(runCli(['--help'], { cwd }).stdout, /^ {2}worker +Take attempts from a run's queue/m);
    const help = runCli(['run', '--help'], { cwd }).stdout;
    assert.match(help, /--executor local\|queue/);
    assert.match(help, /--queue URL/);
  });
});
