// The queue's pure parts: credentials redacted from every URL form, the job and result schemas
// naming the field at fault, and the fencing rule that accepts a result only for the attempt the
// controller expects.
import * as assert from 'node:assert/strict';

import { acceptResult } from '../../../src/core/queue/executor';
import { attemptJobSchema, jobIdFor, parseOrExplain, refsFor } from '../../../src/core/queue/job';
import { redact } from '../../../src/core/queue/redact';
import type { Task } from '../../../src/core/taskFile/schema';

const SHA = 'a'.repeat(40);

function job(extra: Record<string, unknown> = {}) {
  return {
    version: 1,
    taskId: 't1',
    title: 'T',
    agentId: 'agent_1234abcd',
    attempt: 1,
    baseCommit: SHA,
    baseBranch: 'main',
    projectDir: '',
    prompt: 'do it',
    agentCommand: './agent.sh',
    agentTimeoutMs: 1000,
    validation: { command: 'true', timeoutMs: 1000 },
    ...extra,
  };
}

function result(extra: Record<string, unknown> = {}) {
  return {
    taskId: 't1',
    agentId: 'agent_1234abcd',
    workerId: 'w1',
    verdict: 'success',
    validation: { result: 'pass' },
    ref: 'refs/launchpad/queue/t1/agent_1234abcd/w1',
    commit: SHA,
    outputTail: 'RESULT:SUCCESS',
    timings: { fetchMs: 1, setupMs: 0, agentMs: 2, validationMs: 3, pushMs: 4 },
    ...extra,
  };
}

const running = { id: 't1', status: 'in_progress', agent_id: 'agent_1234abcd' } as unknown as Task;

describe('queue: redaction, job format, fencing', () => {
  it('redacts user:password and lone tokens in redis URLs and git remotes, and leaves the rest', () => {
    assert.equal(redact('redis://:s3cret@queue:6379/0'), 'redis://:***@queue:6379/0');
    assert.equal(redact('cannot reach rediss://admin:s3cret@10.0.0.1:6380 now'), 'cannot reach rediss://admin:***@10.0.0.1:6380 now');
    assert.equal(
      redact('fatal: https://x-access-token:ghp_abc@github.com/a/b.git'),
      'fatal: https://x-access-token:***@github.com/a/b.git',
    );
    assert.equal(redact('https://ghp_tokenonly@github.com/a/b.git'), 'https://***@github.com/a/b.git');
    assert.equal(redact('git@github.com:acme/app.git and redis://queue:6379'), 'git@github.com:acme/app.git and redis://queue:6379');
  });

  it('parses a job, and names the field of a bad one', () => {
    assert.equal(parseOrExplain(attemptJobSchema, job(), 'job').taskId, 't1');
    assert.throws(
      () => parseOrExplain(attemptJobSchema, job({ baseCommit: 'main' }), 'job x'),
      /^Error: job x: baseCommit: a full commit id$/,
    );
    assert.throws(() => parseOrExplain(attemptJobSchema, job({ taskId: '../etc' }), 'job x'), /job x: taskId: letters, digits/);
    assert.throws(() => parseOrExplain(attemptJobSchema, job({ version: 2 }), 'job x'), /job x: version:/);
    assert.throws(
      () => parseOrExplain(attemptJobSchema, job({ validation: { command: '', timeoutMs: 5 } }), 'job x'),
      /validation\.command/,
    );
  });

  it('gives each attempt its own job id and refs', () => {
    assert.equal(jobIdFor('t1', 'agent_1'), 't1.agent_1');
    assert.notEqual(jobIdFor('t1', 'agent_1'), jobIdFor('t1', 'agent_2'));
    const refs = refsFor('t1', 'agent_1');
    assert.equal(refs.partial, 'refs/launchpad/queue/t1/agent_1/partial');
    assert.equal(refs.result('host/1 x'), 'refs/launchpad/queue/t1/agent_1/host_1_x');
  });

  it('accepts a result only for the attempt the task expects', () => {
    const expected = { taskId: 't1', agentId: 'agent_1234abcd' };
    assert.equal(acceptResult(running, expected, result()).kind, 'accepted');
    const refused = (current: Task | undefined, raw: unknown) => {
      const r = acceptResult(current, expected, raw);
      assert.equal(r.kind, 'refused');
      return r.kind === 'refused' ? r.reason : '';
    };
    // A stale attempt's result (recovery replaced its agent), another task's, a forged one.
    assert.match(refused({ ...running, agent_id: 'agent_99999999' }, result()), /attempt is agent_99999999/);
    assert.match(refused(running, result({ agentId: 'agent_00000000' })), /expected t1\/agent_1234abcd/);
    assert.match(refused(running, result({ taskId: 't2' })), /result for t2/);
    assert.match(refused({ ...running, status: 'completed' }, result()), /\(completed\)/);
    assert.match(refused(undefined, result()), /\(removed\)/);
    assert.match(refused(running, result({ ref: 'refs/heads/main' })), /malformed result: ref/);
    assert.match(refused(running, { ...result(), commit: undefined }), /malformed result: commit/);
  });
});
