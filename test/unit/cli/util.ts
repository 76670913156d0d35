// Shared by the CLI end-to-end tests: state roots on disk, byte snapshots, a held lock.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, relative, resolve } from 'node:path';

import { type LogEntry, parseLogLine } from '../../../src/core/log/logLine';
import { processIdentity } from '../../../src/core/processIdentity';
import { type CliResult, runCli } from '../helpers/cli';
import { tempDir } from '../helpers/tmp';

/** test/fixtures, from out/test/unit/cli (fixtures are not copied to out/). */
export const FIXTURES = resolve(__dirname, '../../../../test/fixtures');

export const TASKS = 'harness-tasks.json';
export const PROGRESS = 'harness-progress.txt';

/** A task as a person would write it by hand: only the required fields plus `over`. */
export function rawTask(id: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, title: `title of ${id}`, status: 'pending', validation: { command: 'true' }, ...over };
}

/** A state root holding `file` (an object, written as JSON, or a string, written as is). */
export function stateRoot(file: unknown, dir = tempDir('launchpad-cli-')): string {
  writeFileSync(join(dir, TASKS), typeof file === 'string' ? file : JSON.stringify(file, null, 2) + '\n');
  return dir;
}

export function readTasks(dir: string): { tasks: Array<Record<string, unknown>> } & Record<string, unknown> {
  return JSON.parse(readFileSync(join(dir, TASKS), 'utf8')) as never;
}

export function taskById(dir: string, id: string): Record<string, unknown> {
  const t = readTasks(dir).tasks.find((x) => x.id === id);
  assert.ok(t, `task ${id} not in ${dir}/${TASKS}`);
  return t;
}

export function progressLines(dir: string): string[] {
  const file = join(dir, PROGRESS);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean);
}

/** Every line of the log parsed by the log grammar; fails on a line outside it. */
export function progressEntries(dir: string): LogEntry[] {
  return progressLines(dir).map((line) => {
    const entry = parseLogLine(line);
    assert.ok(entry, `not a log line of the grammar: ${line}`);
    return entry;
  });
}

/** Every file under `dir` (relative path → bytes), directories as entries of their own. */
export function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const rel = relative(dir, p);
      if (statSync(p).isDirectory()) {
        out.set(rel + '/', '<dir>');
        walk(p);
      } else {
        out.set(rel, readFileSync(p).toString('base64'));
      }
    }
  };
  walk(dir);
  return out;
}

export function assertUnchanged(before: Map<string, string>, dir: string, what: string): void {
  const after = snapshot(dir);
  assert.deepEqual([...after.keys()], [...before.keys()], `${what}: files added or removed`);
  for (const [k, v] of before) assert.equal(after.get(k), v, `${what}: ${k} changed`);
}

/** runCli with the exit code checked, showing the output when it differs. */
export function cli(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }, expectCode = 0): CliResult {
  const r = runCli(args, opts);
  assert.equal(
    r.code,
    expectCode,
    `launchpad ${args.join(' ')} exited ${r.code}, expected ${expectCode}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`,
  );
  return r;
}

export interface HolderRecord {
  pid: number;
  identity?: string | undefined;
  host: string;
  command: string;
  acquired_at: string;
}

/** A holder record for this test process: alive, with its true identity. */
export function liveHolder(command = 'launchpad run'): HolderRecord {
  return { pid: process.pid, identity: processIdentity(process.pid), host: hostname(), command, acquired_at: '2025-07-01T10:00:10Z' };
}

/** Creates `<root>/.launchpad/<name>/holder.json` as another session would; returns the lock dir. */
export function holdLock(root: string, holder: HolderRecord | undefined, name = 'state.lock'): string {
  const lockDir = join(root, '.launchpad', name);
  mkdirSync(lockDir, { recursive: true });
  if (holder) writeFileSync(join(lockDir, 'holder.json'), JSON.stringify(holder) + '\n');
  return lockDir;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `check` until it returns true; fails with `what` after `timeoutMs`. Not a timing assertion: a generous bound. */
export async function waitFor(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(25);
  }
}
