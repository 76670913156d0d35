import assert from 'node:assert/strict';

import { encodeBaseEnv, encodeRequest, envChanges, ReplyReader, type SpawnerReply } from '../../../../src/core/process/spawnerProtocol';

/** A reply frame as spawnerMain.py writes it. */
function frame(kind: number, id: number, payload: Buffer | string = ''): Buffer {
  const body = Buffer.from(payload);
  const head = Buffer.alloc(9);
  head.writeUInt32LE(5 + body.length, 0);
  head.writeUInt8(kind, 4);
  head.writeUInt32LE(id, 5);
  return Buffer.concat([head, body]);
}

describe('core/process/spawnerProtocol: the python helper frames', () => {
  it('a request: its length, kind and id, then its fields as JSON (spawn), its environment as changes from the base', () => {
    const base = { HOME: '/h', PATH: '/bin', GONE: 'x' };
    const spawn = encodeRequest(
      { t: 'spawn', id: 7, file: 'git', args: ['status'], cwd: '/w', env: { HOME: '/h', PATH: '/usr/bin', A: 'é' }, hold: true },
      base,
    );
    const json = JSON.stringify({
      file: 'git',
      args: ['status'],
      cwd: '/w',
      hold: true,
      env: { set: { PATH: '/usr/bin', A: 'é' }, unset: ['GONE'] },
    });
    assert.equal(spawn.readUInt32LE(0), 5 + Buffer.byteLength(json));
    assert.equal(spawn.length, 4 + spawn.readUInt32LE(0));
    assert.deepEqual([spawn.readUInt8(4), spawn.readUInt32LE(5)], [1, 7]);
    assert.deepEqual(JSON.parse(spawn.subarray(9).toString()), JSON.parse(json));
    const first = encodeBaseEnv(base);
    assert.deepEqual([first.readUInt8(4), first.readUInt32LE(5), JSON.parse(first.subarray(9).toString())], [0, 0, base]);
    assert.deepEqual([...encodeRequest({ t: 'release', id: 300 }, base)], [5, 0, 0, 0, 2, 44, 1, 0, 0]);
    assert.deepEqual([...encodeRequest({ t: 'close-pipes', id: 1 }, base)], [5, 0, 0, 0, 3, 1, 0, 0, 0]);
  });

  it("an environment's changes: what it sets anew or otherwise, what of the base it lacks", () => {
    assert.deepEqual(envChanges({ A: '1', B: '2', C: undefined }, { A: '1', B: '1', C: '3', D: '4' }), {
      set: { B: '2' },
      unset: ['C', 'D'],
    });
    assert.deepEqual(envChanges({ A: '1' }, { A: '1' }), { set: {}, unset: [] });
  });

  it('replies, whatever the chunks they arrive in: split anywhere, or several in one', () => {
    const pid = Buffer.alloc(4);
    pid.writeUInt32LE(4242);
    const bytes = Buffer.concat([
      frame(0, 0),
      frame(1, 3, pid),
      frame(3, 3, Buffer.from([0, 255, 10])),
      frame(4, 3, 'err\n'),
      frame(5, 3, '[null, 15]'),
      frame(6, 3, '[null, 15]'),
      frame(2, 4, 'spawn nope ENOENT'),
      frame(5, 5, '[3, null]'),
    ]);
    const expected: SpawnerReply[] = [
      { t: 'ready' },
      { t: 'spawn', id: 3, pid: 4242 },
      { t: 'out', id: 3, fd: 1, data: Buffer.from([0, 255, 10]) },
      { t: 'out', id: 3, fd: 2, data: Buffer.from('err\n') },
      { t: 'exit', id: 3, code: null, signal: 'SIGTERM' },
      { t: 'close', id: 3, code: null, signal: 'SIGTERM' },
      { t: 'error', id: 4, message: 'spawn nope ENOENT' },
      { t: 'exit', id: 5, code: 3, signal: null },
    ];
    const plain = (replies: SpawnerReply[]) =>
      replies.map((r) => (r.t === 'out' ? { ...r, data: Buffer.from(r.data) } : r)) as SpawnerReply[];
    assert.deepEqual(plain(new ReplyReader().read(bytes)), expected, 'all in one chunk');
    for (let size = 1; size <= 13; size++) {
      const reader = new ReplyReader();
      const got: SpawnerReply[] = [];
      for (let at = 0; at < bytes.length; at += size) got.push(...reader.read(bytes.subarray(at, at + size)));
      assert.deepEqual(plain(got), expected, `in chunks of ${size} bytes`);
    }
  });

  it('a frame of an unknown kind is an error, not a reply', () => {
    assert.throws(() => new ReplyReader().read(frame(9, 1)), /unknown kind 9/);
  });
});
