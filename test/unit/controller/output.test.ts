// What a run prints: a reader that goes away (`launchpad run | head -2`) never ends the session;
// control characters in titles reach neither the log nor `status` as such.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { agentCmd, CLI_COPY, harness, launchpad, linesOf, readLog, shq, stats, taskById, tempDir } from './support';

describe('controller: output', function () {
  this.timeout(120_000);

  it('launchpad run | head -2: the session runs to its end (exit 0, tasks completed, STATS, lock released)', () => {
    const root = harness({ tasks: [{ id: 'task-001' }, { id: 'task-002' }] });
    const codeFile = join(tempDir('launchpad-pipe-'), 'code');
    // The agents take a moment: head has exited (and the pipe is closed) long before the run ends.
    const agent = `sleep 0.5; ${agentCmd('writes-done.sh')}`;
    const r = spawnSync(
      '/bin/sh',
      ['-c', `{ ${shq(process.execPath)} ${shq(CLI_COPY)} run --agent ${shq(agent)}; echo $? > ${shq(codeFile)}; } | head -2`],
      {
        cwd: root,
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    assert.equal(r.stdout.split('\n').filter(Boolean).length, 2, r.stdout);
    assert.equal(readFileSync(codeFile, 'utf8').trim(), '0', `launchpad's exit code\n${readLog(root).join('\n')}\n${r.stderr}`);
    for (const id of ['task-001', 'task-002']) assert.equal(taskById(root, id).status, 'completed', id);
    assert.equal(stats(root, 1).completed, 2);
    assert.equal(linesOf(root, 'LOCK').at(-1)?.message, 'released');
    assert.ok(!existsSync(join(root, '.launchpad', 'session.lock')));
  });

  it('ANSI escapes in a title are escaped in the progress log and in status, never printed raw', async () => {
    const root = harness({ tasks: [] });
    const title = 'Paint it \x1b[31mred\x1b[0m\x07';
    const add = await launchpad(root, ['add', title, '--validate', 'true']);
    assert.equal(add.code, 0, add.stderr);
    const status = await launchpad(root, ['status']);
    assert.equal(status.code, 0, status.stderr);
    for (const [what, text] of [
      ['status', status.stdout],
      ['log', readLog(root).join('\n')],
    ] as const) {
      assert.ok(!/[\x00-\x08\x0b-\x1f\x7f]/.test(text), `${what} holds a raw control character: ${JSON.stringify(text)}`);
      assert.ok(text.includes('Paint it \\x1b[31mred\\x1b[0m\\x07'), `${what}: ${text}`);
    }
    // The task file keeps the title as it was given.
    assert.equal(taskById(root, 'task-001').title, title);
  });
});
