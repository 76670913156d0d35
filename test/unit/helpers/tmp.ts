// Temporary directories for tests, removed after the test file's run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEveryFile } from './rootHooks';

const created: string[] = [];

export function tempDir(prefix = 'launchpad-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  created.push(dir);
  return dir;
}

export function cleanupTempDirs(): void {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
}

afterEveryFile(cleanupTempDirs);
