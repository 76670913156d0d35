// The task file's bytes as text, strictly: a lenient decoder turns each invalid byte into U+FFFD,
// and the next write would then replace a person's "é" in Latin-1 with "�" without a word.

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export type Utf8Result = { ok: true; text: string } | { ok: false; offset: number; byte: number };

export function decodeUtf8(bytes: Uint8Array): Utf8Result {
  try {
    return { ok: true, text: strict.decode(bytes) };
  } catch {
    const offset = firstInvalidUtf8(bytes);
    return { ok: false, offset, byte: bytes[offset]! };
  }
}

/** The offset of the first byte that does not start (or continue) a well-formed UTF-8 sequence. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    // Lead byte → sequence length and the allowed range of the second byte (no overlongs,
    // no surrogates, nothing above U+10FFFF).
    let len: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) len = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      len = 3;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      len = 4;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k < len; k++) {
      const c = bytes[i + k];
      if (c === undefined) return i;
      if (k === 1 ? c < lo || c > hi : c < 0x80 || c > 0xbf) return i;
    }
    i += len;
  }
  return bytes.length;
}
