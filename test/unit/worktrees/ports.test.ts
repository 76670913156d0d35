// Port blocks: one per running task, never two tasks on one block, a port something listens on
// never handed out, the same block for every lease of one task. Real sockets on 127.0.0.1; then
// `launchpad run` with two validations that each serve on their port at the same time.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';

import { canBind, PortBlocks } from '../../../src/core/worktrees/ports';
import { agentCmd, batches, harness, run, show, shq, tempDir } from '../controller/support';

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

describe('worktrees/ports: two tasks whose validations each start a server on their port', function () {
  this.timeout(120_000);

  it('run in parallel without a clash, and the agent and the validation of a task see the same block', async () => {
    const marks = tempDir('launchpad-ports-');
    // Listens on $LAUNCHPAD_PORT_BASE, waits until the other task's server listens too (so both
    // hold their port at once), then asks its own server who it is.
    const serve = `
const http = require('http'), fs = require('fs'), path = require('path');
const port = Number(process.env.LAUNCHPAD_PORT_BASE), me = process.env.LAUNCHPAD_TASK_ID, dir = process.env.PORT_MARKS;
const server = http.createServer((req, res) => res.end(me));
server.on('error', (e) => { console.error(e.message); process.exit(1); });
server.listen(port, '127.0.0.1', () => {
  fs.writeFileSync(path.join(dir, me + '.validation'), String(port));
  const wait = setInterval(() => {
    if (fs.readdirSync(dir).filter((f) => f.endsWith('.validation')).length < 2) return;
    clearInterval(wait);
    http.get({ host: '127.0.0.1', port, path: '/' }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => server.close(() => process.exit(body === me ? 0 : 1)));
    });
  }, 20);
});
`;
    const root = harness({
      files: { 'serve.js': serve },
      tasks: [
        { id: 'task-001', validate: 'node serve.js' },
        { id: 'task-002', validate: 'node serve.js' },
      ],
      sessionConfig: { max_parallel_agents: 2 },
    });
    const agent = `echo "$LAUNCHPAD_PORT_BASE $LAUNCHPAD_PORT_COUNT" > ${shq(marks)}/"$LAUNCHPAD_TASK_ID.agent"; ${agentCmd('writes-done.sh')}`;
    const r = await run(root, agent, [], { PORT_MARKS: marks });
    assert.equal(r.code, 0, show(r, root));
    assert.deepEqual(batches(root)[0], ['task-001', 'task-002'], 'dispatched together');
    const port = (id: string, who: string) => readFileSync(join(marks, `${id}.${who}`), 'utf8').trim();
    assert.equal(port('task-001', 'agent'), `${port('task-001', 'validation')} 10`);
    assert.equal(port('task-002', 'agent'), `${port('task-002', 'validation')} 10`);
    const [a, b] = [Number(port('task-001', 'validation')), Number(port('task-002', 'validation'))];
    assert.ok(Math.abs(a - b) >= 10, `blocks of 10 apart: ${a}, ${b}`);
  });
});
