// Port blocks: one per running task, never two tasks on one block, a port something listens on
// never handed out, the same block for every lease of one task. Real sockets on 127.0.0.1.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { canBind, PortBlocks } from '../../../src/core/worktrees/ports';

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port }, () => resolve(server));
  });
}

/** A range of blocks nobody on this machine is likely to use, found by looking. */
async function freeRange(blocks: number, size: number): Promise<{ first: number; end: number }> {
  for (let first = 45_000; first < 60_000; first += 500) {
    const range = { first, end: first + blocks * size };
    let free = true;
    for (let p = range.first; p < range.end && free; p++) free = await canBind(p);
    if (free) return range;
  }
  throw new Error('no free port range to test with');
}

describe('worktrees/ports: a block of ports per running task', () => {
  it('gives running tasks blocks that do not overlap, and one task the same block on every lease', async () => {
    const range = await freeRange(4, 5);
    const ports = new PortBlocks(5, '/some/state/root', range);
    const [a, b, c] = await Promise.all([ports.lease('task-001'), ports.lease('task-002'), ports.lease('task-003')]);
    const bases = [a!.base, b!.base, c!.base];
    assert.equal(new Set(bases).size, 3, `distinct blocks: ${bases.join(', ')}`);
    for (const base of bases) {
      assert.ok(base >= range.first && base + 5 <= range.end);
      assert.equal((base - range.first) % 5, 0, 'aligned on the block size');
    }
    const again = await ports.lease('task-001');
    assert.equal(again.base, a!.base, 'the validation of a running task gets its block');
    assert.deepEqual(again.env, { LAUNCHPAD_PORT_BASE: String(a!.base), LAUNCHPAD_PORT_COUNT: '5' });
  });

  it('frees a block once every lease of it is released, or at once when the task ends', async () => {
    const range = await freeRange(1, 5);
    const ports = new PortBlocks(5, 'seed', range);
    const first = await ports.lease('task-001');
    const second = await ports.lease('task-001');
    await assert.rejects(ports.lease('task-002'), /no block of 5 free ports/);
    first.release();
    first.release(); // once per lease
    await assert.rejects(ports.lease('task-002'), /no block of 5 free ports/, 'still held by the second lease');
    second.release();
    assert.equal((await ports.lease('task-002')).base, range.first);
    ports.releaseTask('task-002');
    assert.equal(ports.blockOf('task-002'), undefined);
    assert.equal((await ports.lease('task-003')).base, range.first);
  });

  it('skips a block in which another program listens on a port', async () => {
    const range = await freeRange(2, 5);
    const busy = await listen(range.first + 3);
    try {
      const ports = new PortBlocks(5, 'seed', range);
      const a = await ports.lease('task-001');
      assert.equal(a.base, range.first + 5, 'the block holding a listening port is not handed out');
      await assert.rejects(ports.lease('task-002'), /no block of 5 free ports/);
    } finally {
      busy.close();
    }
  });
});
