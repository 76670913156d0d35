// One controller at a time : of two runs started together
// exactly one runs, the other exits 3 naming the holder; a stale lock (dead holder, or a pid now
// used by another process) is reclaimed with a WARN line.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

import { agentCmd, gates, harness, linesOf, read, type Result, run, show, startRun, taskById, waitFor, waitForLog } from './support';

function staleLock(root: string, pid: number, identity: string): void {
  const dir = join(root, '.launchpad/session.lock');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'holder.json'),
    JSON.stringify({ pid, identity, host: hostname(), command: 'launchpad run', acquired_at: '2025-07-01T10:00:00Z' }),
  );
  writeFileSync(join(dir, 'pid'), `${pid}\n`);
}

describe('controller: one controller per state root', function () {
  this.timeout(120_000);

  it('two runs started together: exactly one runs, the other exits 3 naming the holder and dispatches nothing', async () => {
    const g = gates();
    const root = harness({ tasks: [{ id: 'task-001' }] });
    const agentLine = `${agentCmd('gate.sh')} ${agentCmd('writes-done.sh')}`;
    const runs = [startRun(root, agentLine, [], { GATE_DIR: g.dir }), startRun(root, agentLine, [], { GATE_DIR: g.dir })];
    const results: Array<Result | undefined> = [undefined, undefined];
    runs.forEach((r, i) => void r.done.then((x) => (results[i] = x)));
    const loser = await waitFor('one run to give up', () => {
      const i = results.findIndex((x) => x !== undefined);
      return i >= 0 ? i + 1 : undefined;
    });
    await waitFor('the agent to start', () => g.waiting('task-001'));
    g.open('task-001');
    const [a, b] = await Promise.all(runs.map((r) => r.done));
    const lost = loser === 1 ? a! : b!;
    const won = loser === 1 ? b! : a!;
    const winner = runs[loser === 1 ? 1 : 0]!.child.pid!;
    assert.equal(lost.code, 3, show(lost, root));
    // (If it came in the microseconds between the winner's mkdir and its holder record, it can
    // only say that a session is starting; the next test pins the message down.)
    assert.match(lost.stderr, new RegExp(`another session is (active: launchpad run \\(pid=${winner} on |starting)`));
    assert.equal(lost.stdout, '');
    assert.equal(won.code, 0, show(won, root));
    assert.equal(linesOf(root, 'LOCK').filter((l) => l.message.startsWith('acquired')).length, 1);
    assert.equal(linesOf(root, 'DISPATCH').length, 1);
    assert.equal(taskById(root, 'task-001').attempts, 1);
    assert.ok(!existsSync(join(root, '.launchpad/session.lock')));
  });

  it('a run started while another runs exits 3; its message names the holder: command, pid, host', async () => {
    const g = gates();
    const root = harness({ tasks: [{ id: 'task-001' }] });
    const first = startRun(root, `${agentCmd('gate.sh')} ${agentCmd('writes-done.sh')}`, [], { GATE_DIR: g.dir });
    await waitForLog(root, /DISPATCH \[task-001\]/);
    const log = read(join(root, 'harness-progress.txt'));
    const second = await run(root, agentCmd('writes-done.sh'));
    assert.equal(second.code, 3, show(second, root));
    assert.match(second.stderr, new RegExp(`another session is active: launchpad run \\(pid=${first.child.pid} on ${hostname()}, since `));
    assert.match(second.stderr, /; wait for it to end, see where it is with "launchpad status", or stop it with "launchpad stop"/);
    assert.equal(read(join(root, 'harness-progress.txt')), log, 'the refused run wrote to the log');
    g.open('task-001');
    assert.equal((await first.done).code, 0);
  });

  it('a stale lock (its holder is dead) is reclaimed with a WARN line', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    staleLock(root, dead, 'boot:1');
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 0, show(r, root));
    assert.deepEqual(
      linesOf(root, 'WARN').map((l) => l.message),
      [`Removed stale lock from pid=${dead} (launchpad run)`],
    );
    assert.ok(!existsSync(join(root, '.launchpad/session.lock')));
  });

  it('a lock whose pid now belongs to another process (other identity) is stale too', async () => {
    const root = harness({ tasks: [{ id: 'task-001' }] });
    // This test process is alive, but it is not the process that took the lock.
    staleLock(root, process.pid, 'another-boot:42');
    const r = await run(root, agentCmd('writes-done.sh'));
    assert.equal(r.code, 0, show(r, root));
    assert.deepEqual(
      linesOf(root, 'WARN').map((l) => l.message),
      [`Removed stale lock from pid=${process.pid} (launchpad run)`],
    );
  });
});
