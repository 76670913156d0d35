// The planner and the reviewer: shell command lines run like the controller's worker agent —
// the prompt on standard input and in $LAUNCHPAD_PROMPT_FILE, its own process group, a time
// limit, a transcript, and a record so that a run started after a crash can end it.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { ProcessRecords } from '../process/processRecords';
import { type ProcessResult, runProcess } from '../process/runProcess';

export type Role = 'planner' | 'worker' | 'reviewer';

/**
 * An agent that gave up on a usage or rate limit says so in its output. Transient limits are the
 * agent's own business (its CLI retries them); one that makes it fail is persistent.
 */
export const RATE_LIMIT_PATTERN = /rate[ _-]?limit|usage limit|\b429\b|\b529\b/i;

export function isRateLimited(output: string | null | undefined): boolean {
  return !!output && RATE_LIMIT_PATTERN.test(output);
}

/** How long a planner or reviewer may run. */
export const ROLE_TIMEOUT_MS = 3600_000;
/** How much of an agent's output is kept in memory (the transcript has all of it). */
const CAPTURE_CHARS = 64 * 1024;

export interface RoleRun {
  role: 'planner' | 'reviewer';
  milestone: string;
  command: string;
  cwd: string;
  prompt: string;
  /** The milestone's runs folder: each run gets <role>-<n>/ with prompt.md and transcript.log. */
  runsDir: string;
  env: NodeJS.ProcessEnv;
  vars: Record<string, string>;
  records: ProcessRecords;
  signal?: AbortSignal;
  timeoutMs?: number;
  onOutput?: (text: string) => void;
}

export interface RoleResult {
  result: ProcessResult;
  rateLimited: boolean;
  dir: string;
}

export async function runRoleAgent(r: RoleRun): Promise<RoleResult> {
  mkdirSync(r.runsDir, { recursive: true });
  let n = 1;
  while (existsSync(join(r.runsDir, `${r.role}-${n}`))) n++;
  const dir = join(r.runsDir, `${r.role}-${n}`);
  mkdirSync(dir);
  const promptFile = join(dir, 'prompt.md');
  writeFileSync(promptFile, r.prompt);
  const result = await runProcess({
    command: r.command,
    cwd: r.cwd,
    env: { ...r.env, ...r.vars, LAUNCHPAD_ROLE: r.role, LAUNCHPAD_MILESTONE_ID: r.milestone, LAUNCHPAD_PROMPT_FILE: promptFile },
    stdin: r.prompt,
    timeoutMs: r.timeoutMs ?? ROLE_TIMEOUT_MS,
    ...(r.signal ? { signal: r.signal } : {}),
    transcript: join(dir, 'transcript.log'),
    captureBytes: CAPTURE_CHARS,
    record: { records: r.records, name: `${r.milestone}.${r.role}`, label: `${r.role} of ${r.milestone}` },
    ...(r.onOutput ? { onOutput: r.onOutput } : {}),
  });
  return { result, rateLimited: isRateLimited(result.tail), dir };
}

/** One line on why an agent run did not do its job. */
export function describeFailure(role: string, r: ProcessResult): string {
  if (r.spawnError) return `the ${role} could not be started: ${r.spawnError}`;
  if (r.timedOut) return `the ${role} timed out`;
  const last = r.tail
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .at(-1);
  return `the ${role} exited with ${r.code ?? r.signal}${last ? `: ${last.slice(0, 200)}` : ''}`;
}
