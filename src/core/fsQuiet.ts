import { rmdirSync } from 'node:fs';

/** Removes a directory only if it is empty; anything else (not empty, gone) is fine. */
export function rmdirIfEmpty(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // Not empty, or already gone.
  }
}
