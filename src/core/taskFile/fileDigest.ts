// The sha256 of each version of one file as it is written, rehashed only from where it first
// differs from the version before: SHA-256 reads its input in order, so the state after an
// unchanged prefix is the same for both, and a copy of it (Hash.copy) taken every STRIDE bytes
// the first time lets the next version start there. A transaction on a large task file changes
// a task or two and the fields after the tasks, so most of the file is not read again.
import { createHash, type Hash } from 'node:crypto';

/** How far apart the kept states are: the most a digest rereads before the first change. */
const STRIDE = 256 * 1024;
/** Compared this much at a time to find the first difference (memcmp, then narrowed). */
const CHUNK = 64 * 1024;

export class FileDigest {
  private previous: Uint8Array | undefined;
  /** states[k]: the hash after the first k * STRIDE bytes of `previous`. */
  private states: Hash[] = [];

  /** The hex sha256 of `bytes`, which are not changed afterwards (the caller's own buffer). */
  digest(bytes: Uint8Array): string {
    const same = this.previous ? commonPrefix(this.previous, bytes) : 0;
    const kept = Math.min(Math.floor(same / STRIDE), this.states.length - 1);
    const states = kept >= 0 ? this.states.slice(0, kept + 1) : [createHash('sha256')];
    const hash = states[states.length - 1]!.copy();
    let at = (states.length - 1) * STRIDE;
    while (at < bytes.length) {
      const end = Math.min(at + STRIDE, bytes.length);
      hash.update(bytes.subarray(at, end));
      at = end;
      if (at % STRIDE === 0 && at < bytes.length) states.push(hash.copy());
    }
    this.previous = bytes;
    this.states = states;
    return hash.digest('hex');
  }
}

/** How many bytes `a` and `b` share from their start. */
export function commonPrefix(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  const A = Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  const B = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  let at = 0;
  while (at < n) {
    const end = Math.min(at + CHUNK, n);
    if (!A.subarray(at, end).equals(B.subarray(at, end))) break;
    at = end;
  }
  while (at < n && A[at] === B[at]) at++;
  return at;
}
