// `.launchpad/integration.json`: the integration gate's state, the one record of how the base
// branch last fared under session_config.integration_check. The gate (gate.ts) writes it, only
// inside the merge queue (and a concurrent run's merge lock), so writers never race; `status`,
// the run's summary and the editor read it. Written whole (atomicFile.ts).
import { readFileSync } from 'node:fs';

import * as z from 'zod/mini';

import { replaceFile } from '../atomicFile';

export const INTEGRATION_STATUSES = ['green', 'red', 'checking'] as const;

const flakySchema = z.looseObject({ commit: z.string(), at: z.string() });

const revertedSchema = z.looseObject({
  task: z.string(),
  /** The task's merge commit that was reverted. */
  merge: z.string(),
  /** The revert commit made on the base branch. */
  revert: z.string(),
  reason: z.string(),
  /** The tasks merged after the culprit's attempt started that its agent never saw. */
  collided_with: z.array(z.string()),
  at: z.string(),
});

export const integrationStateSchema = z.looseObject({
  version: z.literal(1),
  status: z.enum(INTEGRATION_STATUSES),
  /** The commit last checked (or being checked). */
  commit: z.nullable(z.string()),
  checked_at: z.nullable(z.string()),
  /** The newest commit of the base branch known to pass the check. */
  last_green: z.nullable(z.string()),
  flaky: z.array(flakySchema),
  reverted: z.array(revertedSchema),
});

export type IntegrationState = z.infer<typeof integrationStateSchema>;
export type RevertedTask = IntegrationState['reverted'][number];

/**
 * The gate's result at `commit`: the one place its status changes. A check's result has its
 * time; a green one moves last_green too.
 */
export function setResult(state: IntegrationState, status: IntegrationState['status'], commit: string | null, checkedAt?: string): void {
  state.status = status;
  state.commit = commit;
  if (checkedAt === undefined) return;
  state.checked_at = checkedAt;
  if (status === 'green') state.last_green = commit;
}

export function emptyIntegrationState(): IntegrationState {
  return { version: 1, status: 'green', commit: null, checked_at: null, last_green: null, flaky: [], reverted: [] };
}

export class IntegrationStateError extends Error {
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: ${detail}`);
    this.name = 'IntegrationStateError';
  }
}

/** The state on disk; undefined when there is none yet. A file that does not parse is an error naming the field. */
export function readIntegrationState(file: string): IntegrationState | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new IntegrationStateError(file, `not JSON (${(err as Error).message})`);
  }
  const parsed = integrationStateSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new IntegrationStateError(file, `${issue.path.join('.') || '(top)'}: ${issue.message}`);
  }
  return parsed.data;
}

/** Replaces the state: a reader sees the old file or the new one, never half of either. */
export function writeIntegrationState(file: string, state: IntegrationState): void {
  replaceFile(file, JSON.stringify(state, null, 2) + '\n');
}
