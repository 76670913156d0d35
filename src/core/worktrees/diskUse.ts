// The disk a folder holds, as du counts it: allocated blocks, each inode once (a file hard-linked
// twice, or a clone's shared inode, is counted at its first path), symbolic links never followed.
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Bytes allocated under `paths` together; `seen` (device:inode) carries across calls. */
export function diskUse(paths: readonly string[], seen = new Set<string>()): number {
  let bytes = 0;
  const walk = (path: string) => {
    let st;
    try {
      st = lstatSync(path);
    } catch {
      return; // removed meanwhile
    }
    const key = `${st.dev}:${st.ino}`;
    if (seen.has(key)) return;
    seen.add(key);
    bytes += st.blocks * 512;
    if (!st.isDirectory()) return;
    let names: string[];
    try {
      names = readdirSync(path);
    } catch {
      return; // unreadable: what it holds is not counted
    }
    for (const name of names) walk(join(path, name));
  };
  for (const p of paths) walk(p);
  return bytes;
}

/** 245 B, 12.3 KB, 390.1 MB, 3.10 GB. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(2)} GB`;
}
