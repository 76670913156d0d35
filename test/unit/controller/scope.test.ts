// Files a task changes outside its files_hint: every one that is merged is reported (a WARN
// line, out_of_scope on the task, `status`); with session_config.scope "reject" the attempt
// fails before merging, charged to the agent (AGENT_FAIL).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { agentCmd, byTask, git, harness, launchpad, linesOf, run, show, taskById } from './support';

describe('controller: edits outside files_hint', function () {
  this.timeout(120_000);

  it('scope "warn" (the default): merged, and every such file reported in the log, on the task and by status', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }, { id: 'task-002' }] });
    const r = await run(root, agentCmd('edits-shared.sh'), ['--max-parallel', '1']);
    assert.equal(r.code, 0, show(r, root));
    assert.deepEqual(
      linesOf(root, 'WARN', 'task-001').map((l) => l.message),
      ['out-of-scope files merged: shared.txt'],
    );
    assert.deepEqual(taskById(root, 'task-001').out_of_scope, ['shared.txt']);
    assert.deepEqual(taskById(root, 'task-002').out_of_scope, ['shared.txt']);

    const status = await launchpad(root, ['status']);
    assert.equal(status.code, 0, show(status));
    assert.match(status.stdout, /\[completed\] task-001: .*\n {4}merged outside files_hint: shared\.txt\n/);
    const json = JSON.parse((await launchpad(root, ['status', '--json'])).stdout);
    assert.deepEqual(
      json.tasks.map((t: { out_of_scope: string[] }) => t.out_of_scope),
      [['shared.txt'], ['shared.txt']],
    );
  });

  it('scope "reject": the attempt fails before merging (AGENT_FAIL, charged), naming the files; nothing reaches the base branch', async () => {
    const root = harness({ sessionConfig: { scope: 'reject' }, tasks: [{ id: 'task-001', maxAttempts: 1 }] });
    const head = git(root, 'rev-parse', 'HEAD');
    const r = await run(root, agentCmd('edits-shared.sh'));
    assert.equal(r.code, 1, show(r, root));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed');
    assert.equal(t.attempts, 1);
    assert.deepEqual(t.error_log, ['[AGENT_FAIL] changed files outside files_hint (session_config.scope is "reject"): shared.txt']);
    assert.equal(git(root, 'rev-parse', 'HEAD'), head);
    assert.ok(!existsSync(join(root, 'shared.txt')));
    assert.equal(linesOf(root, 'MERGE').length, 0);
  });

  it('a task inside its hint, or with no hint at all, has nothing to report', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }, { id: 'task-002', files: [] }] });
    const r = await run(root, byTask({ 'task-002': agentCmd('edits-shared.sh') }, agentCmd('writes-done.sh')), ['--max-parallel', '1']);
    assert.equal(r.code, 0, show(r, root));
    assert.deepEqual(linesOf(root, 'WARN'), []);
    assert.equal(taskById(root, 'task-001').out_of_scope, undefined);
    assert.equal(taskById(root, 'task-002').out_of_scope, undefined);
  });

  it('a bad session_config.scope is a configuration error naming the file and the field; nothing runs', async () => {
    const root = harness({ sessionConfig: { scope: 'strict' }, tasks: [{ id: 'task-001' }] });
    const status = await launchpad(root, ['status']);
    assert.equal(status.code, 2, show(status));
    assert.match(
      status.stderr,
      /harness-tasks\.json: session_config\.scope: expected one of ["']warn["'], ["']reject["'], got ["']strict["']/,
    );
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 2, show(r, root));
    assert.match(
      r.stdout + r.stderr,
      /harness-tasks\.json: session_config\.scope: expected one of ["']warn["'], ["']reject["'], got ["']strict["']/,
    );
    assert.equal(linesOf(root, 'DISPATCH').length, 0);
  });
});
