// FileDigest: each version's sha256, rehashed from where it first differs from the version
// before, is always the sha256 of the whole version.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';

import { commonPrefix, FileDigest } from '../../../../src/core/taskFile/fileDigest';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** A deterministic generator, so a failure can be replayed. */
function rng(seed: number) {
  let x = seed >>> 0 || 1;
  return (n: number) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

describe('core/taskFile FileDigest', () => {
  it('is the whole sha256 of every version, over random edits before, at and after the kept states', () => {
    const next = rng(7);
    const digest = new FileDigest();
    let bytes: Buffer = randomBytes(700 * 1024);
    assert.equal(digest.digest(bytes), sha(bytes));
    for (let i = 0; i < 120; i++) {
      const copy = Buffer.from(bytes);
      const at = next(copy.length + 1);
      switch (next(5)) {
        case 0: // one byte changed
          if (copy.length) copy[Math.min(at, copy.length - 1)] ^= 0xff;
          bytes = copy;
          break;
        case 1: // bytes inserted (a task grew)
          bytes = Buffer.concat([copy.subarray(0, at), randomBytes(next(300_000) + 1), copy.subarray(at)]);
          break;
        case 2: // bytes removed
          bytes = Buffer.concat([copy.subarray(0, at), copy.subarray(Math.min(copy.length, at + next(300_000) + 1))]);
          break;
        case 3: // the same bytes again
          bytes = copy;
          break;
        default: // the tail only (the fields after the tasks)
          bytes = Buffer.concat([copy.subarray(0, Math.max(0, copy.length - next(200))), randomBytes(next(200))]);
      }
      assert.equal(digest.digest(bytes), sha(bytes), `version ${i + 1}: ${bytes.length} bytes`);
    }
    assert.equal(digest.digest(Buffer.alloc(0)), sha(Buffer.alloc(0)));
    assert.equal(digest.digest(bytes), sha(bytes));
  });

  it('commonPrefix finds the first differing byte, inside a chunk and at its edges', () => {
    const a = randomBytes(200_000);
    for (const at of [0, 1, 65_535, 65_536, 65_537, 131_072, 199_999]) {
      const b = Buffer.from(a);
      b[at] ^= 1;
      assert.equal(commonPrefix(a, b), at);
    }
    assert.equal(commonPrefix(a, a.subarray(0, 1000)), 1000);
    assert.equal(commonPrefix(a, Buffer.from(a)), a.length);
  });
});
