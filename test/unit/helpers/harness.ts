// A real repository with a harness in it, for controller tests: tasks written as JSON,
// state files committed or not, and readers for the task file and the progress log.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { parseTaskFile } from '../../../src/core/taskFile/parse';
import type { TaskFile } from '../../../src/core/taskFile/schema';
import { type CliResult, runCli, startCli } from './cli';
import { git, makeRepo } from './gitRepo';

/** Scripted agents and other fixtures live in the source tree (not transpiled). */
export const FIXTURES = resolve(__dirname, '../../../../test/fixtures');

export function agent(name: string): string {
  return join(FIXTURES, 'agents', name);
}

export interface TaskInput {
  id: string;
  title?: string;
  files?: string[];
  validate?: string | null;
  timeout?: number;
  dependsOn?: string[];
  priority?: 'P0' | 'P1' | 'P2';
  maxAttempts?: number;
  cleanup?: string;
  context?: string;
  [extra: string]: unknown;
}

export interface HarnessOptions {
  files?: Record<string, string>;
  tasks: TaskInput[];
  sessionConfig?: Record<string, unknown>;
  /** Commit harness-tasks.json with the repository (default: leave it untracked). */
  commitState?: boolean;
  /** Where the repository goes (an empty folder; default a new temporary one). */
  dir?: string;
}

export function makeHarness(opts: HarnessOptions): string {
  const root = makeRepo(opts.files ?? { 'README.md': '# project\n' }, ...(opts.dir ? [opts.dir] : []));
  const tasks = opts.tasks.map(({ id, title, files, validate, timeout, dependsOn, priority, maxAttempts, cleanup, context, ...extra }) => ({
    id,
    title: title ?? `Task ${id}`,
    status: 'pending',
    priority: priority ?? 'P1',
    depends_on: dependsOn ?? [],
    attempts: 0,
    max_attempts: maxAttempts ?? 3,
    context: context ?? `Do ${id}`,
    files_hint: files ?? [`src/${id}/`],
    validation: { command: validate === undefined ? `test -f src/${id}/done.txt` : validate, timeout_seconds: timeout ?? 60 },
    on_failure: { cleanup: cleanup ?? null },
    error_log: [],
    ...extra,
  }));
  // Retries at once unless a test asks for the back-off: the tests of other rules must not wait for it.
  const file = {
    version: 3,
    session_config: { max_parallel_agents: 3, retry_backoff_seconds: 0, ...opts.sessionConfig },
    tasks,
    session_count: 0,
  };
  writeFileSync(join(root, 'harness-tasks.json'), JSON.stringify(file, null, 2) + '\n');
  writeFileSync(join(root, 'harness-progress.txt'), '');
  if (opts.commitState) {
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'harness');
  }
  return root;
}

export function readTasks(root: string): TaskFile {
  const parsed = parseTaskFile(readFileSync(join(root, 'harness-tasks.json'), 'utf8'));
  if (!parsed.ok) throw parsed.error;
  return parsed.file;
}

export function taskById(root: string, id: string) {
  const task = readTasks(root).tasks.find((t) => t.id === id);
  if (!task) throw new Error(`no task ${id}`);
  return task;
}

export function readLog(root: string): string[] {
  return readFileSync(join(root, 'harness-progress.txt'), 'utf8').split('\n').filter(Boolean);
}

/** `launchpad run` in the harness, with the given agent (a fixture name or a command line). */
export function runHarness(root: string, agentCommand: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): CliResult {
  return runCli(['run', '--agent', agentCommand, ...args], { cwd: root, env, timeoutMs: 120_000 });
}

export function startHarness(root: string, agentCommand: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  return startCli(['run', '--agent', agentCommand, ...args], { cwd: root, env });
}
