// A crashed controller's agent whose shell leader has exited but whose children live on in the
// group: the next session's killAll must still end them (a group id is not reused while the
// group exists, so the leftovers are ours).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { ProcessRecords } from '../../../../src/core/process/processRecords';
import { alive } from '../../helpers/processes';
import { tempDir } from '../../helpers/tmp';

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('core/process ProcessRecords.killAll with a dead leader', () => {
  it('ends what is left of the recorded group', async () => {
    const dir = tempDir();
    const pidFile = join(dir, 'sleeper');
    const leader = spawn('/bin/sh', ['-c', `sleep 300 & echo $! > '${pidFile}'`], { detached: true, stdio: 'ignore' });
    const records = new ProcessRecords(join(dir, 'procs'));
    records.add('task-001.agent', leader.pid!, 'agent of task-001');
    await new Promise((r) => leader.on('exit', r));
    await until('the background sleeper', () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '');
    const sleeper = Number(readFileSync(pidFile, 'utf8'));
    assert.ok(alive(sleeper), 'the sleeper outlives its leader');

    assert.deepEqual(records.killAll(), ['agent of task-001']);
    await until('the sleeper to end', () => !alive(sleeper));
    assert.ok(!existsSync(join(dir, 'procs', 'task-001.agent.json')), 'the record is removed');
  });
});
