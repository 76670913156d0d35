// Shared builders for the core tests: tasks with every documented default filled in, and the
// example fixtures under test/fixtures/core/.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import type { Task, TaskFile } from '../../../src/core/taskFile/schema';

/** test/fixtures/core, from out/test/unit/core (the JSON fixtures are not copied to out/). */
export const FIXTURES = resolve(__dirname, '../../../../test/fixtures/core');
/** Child-process scripts compiled from test/fixtures/core/*.ts. */
export const FIXTURE_SCRIPTS = resolve(__dirname, '../../fixtures/core');

export function fixtureText(name: string): string {
  return readFileSync(resolve(FIXTURES, name), 'utf8');
}

/** A task as the schema would output it; runnable by default (a command, a private hint). */
export function task(id: string, over: Partial<Task> = {}): Task {
  return {
    id,
    title: `title of ${id}`,
    status: 'pending',
    priority: 'P1',
    depends_on: [],
    attempts: 0,
    max_attempts: 3,
    files_hint: [`src/${id}/`],
    validation: { command: 'true' },
    error_log: [],
    ...over,
  };
}

export function taskFile(tasks: Task[], over: Partial<TaskFile> = {}): TaskFile {
  return {
    version: 3,
    session_config: {
      max_tasks_per_session: 20,
      max_sessions: 50,
      max_parallel_agents: 3,
      agent_timeout_seconds: 3600,
      cleanup_timeout_seconds: 300,
      health_check_timeout_seconds: 600,
    },
    tasks,
    session_count: 0,
    ...over,
  };
}

/** A failed task with its budget used up. */
export function exhausted(id: string, over: Partial<Task> = {}): Task {
  return task(id, { status: 'failed', attempts: 3, max_attempts: 3, error_log: ['[TEST_FAIL] boom'], ...over });
}

/** A small deterministic PRNG (mulberry32): `rand(n)` is an integer in [0, n). */
export function rng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n: number) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n) | 0;
  };
}
