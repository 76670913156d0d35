// Temporary directories for tests, removed after the test file's run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const created: string[] = [];

export function tempDir(prefix = 'launchpad-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  created.push(dir);
  return dir;
}

export function cleanupTempDirs(): void {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
}

// Root-level hook: every test file's temp dirs go when mocha finishes (many repositories and
// worktrees: give it time on a loaded machine).
after(function () {
  this.timeout(300_000);
  cleanupTempDirs();
});
