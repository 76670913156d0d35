// The attempt job: what the controller publishes for one attempt of one task, and what a queue
// worker reports back. Both sides parse what they receive with these schemas, so a job from
// another version, or a result a stale worker forged by hand, is refused with the field named.
import * as z from 'zod/mini';

import { redact } from './redact';

/** The BullMQ queue every controller and worker of one repository share (a prefix may vary). */
export const QUEUE_NAME = 'launchpad-attempts';

/** Refs a queue worker pushes to the shared remote: `<prefix>/<task>/<agent>/<what>`. */
export const REF_PREFIX = 'refs/launchpad/queue';

export const JOB_VERSION = 1;

const id = z.string().check(z.regex(/^[A-Za-z0-9._-]{1,100}$/, 'letters, digits, ".", "_" or "-"'));
const sha = z.string().check(z.regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, 'a full commit id'));

export const attemptJobSchema = z.object({
  version: z.literal(JOB_VERSION),
  taskId: id,
  title: z.string(),
  /** The attempt's agent id: the fencing token. A result is accepted only for this agent id. */
  agentId: id,
  attempt: z.int().check(z.minimum(1)),
  /** The base branch's commit the attempt starts from (the worker fetches it). */
  baseCommit: sha,
  baseBranch: z.string().check(z.minLength(1)),
  /** The project's directory inside the repository ('' at its top). */
  projectDir: z.string(),
  prompt: z.string(),
  agentCommand: z.string().check(z.minLength(1)),
  /** The agent preset's name, when the command is one: its parser reads the verdict and the cost. */
  preset: z.optional(z.string()),
  agentTimeoutMs: z.int().check(z.positive()),
  validation: z.object({ command: z.string().check(z.minLength(1)), timeoutMs: z.int().check(z.positive()) }),
  worktreeSetup: z.optional(z.nullable(z.string())),
  /** The task's protected paths, relative to projectDir (controller/protectedPaths.ts). */
  protectedPaths: z.optional(z.array(z.string())),
});
export type AttemptJob = z.infer<typeof attemptJobSchema>;

export const attemptResultSchema = z.object({
  taskId: id,
  agentId: id,
  workerId: z.string().check(z.minLength(1)),
  /** The agent's verdict; 'none' when it printed no RESULT line, 'question' when it asked a person. */
  verdict: z.enum(['success', 'fail', 'none', 'timeout', 'question']),
  reason: z.optional(z.string()),
  /** The agent's question (verdict 'question'): its work so far is in `commit`. */
  question: z.optional(z.string()),
  validation: z.object({
    result: z.enum(['pass', 'fail', 'timeout', 'skipped']),
    reason: z.optional(z.string()),
    tail: z.optional(z.string()),
  }),
  /** The ref on the shared remote holding the attempt's work, and its commit. */
  ref: z.string().check(z.startsWith(`${REF_PREFIX}/`)),
  commit: sha,
  /** Set when the attempt continued the work a dead worker had pushed. */
  resumedFrom: z.optional(sha),
  outputTail: z.string(),
  costUsd: z.optional(z.number().check(z.nonnegative())),
  /** The tool stopped on a usage or rate limit (its preset's parser said so): not the task's failure. */
  limit: z.optional(
    z.object({
      kind: z.enum(['usage-limit', 'rate-limit', 'overloaded']),
      message: z.string(),
      resetsAt: z.optional(z.string()),
      resetText: z.optional(z.string()),
    }),
  ),
  timings: z.object({ fetchMs: z.number(), setupMs: z.number(), agentMs: z.number(), validationMs: z.number(), pushMs: z.number() }),
});
export type AttemptResult = z.infer<typeof attemptResultSchema>;

/** Progress a worker reports while it works on a job (BullMQ job progress). */
export const attemptProgressSchema = z.union([
  z.object({ kind: z.literal('started'), workerId: z.string().check(z.minLength(1)), agentId: id, resumedFrom: z.optional(sha) }),
  z.object({
    kind: z.literal('checkpoint'),
    workerId: z.string().check(z.minLength(1)),
    agentId: id,
    step: z.int(),
    total: z.int(),
    description: z.string(),
  }),
]);
export type AttemptProgress = z.infer<typeof attemptProgressSchema>;

/** The BullMQ job id of an attempt: one job per agent id, so re-publishing it is a no-op. */
export function jobIdFor(taskId: string, agentId: string): string {
  return `${taskId}.${agentId}`;
}

export function refsFor(taskId: string, agentId: string): { partial: string; result: (workerId: string) => string } {
  const base = `${REF_PREFIX}/${taskId}/${agentId}`;
  return { partial: `${base}/partial`, result: (workerId) => `${base}/${safeRefPart(workerId)}` };
}

function safeRefPart(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_') || 'worker';
}

/** Parses with a schema; the error names the field and its problem (and never carries a secret). */
export function parseOrExplain<T>(schema: z.ZodMiniType<T>, value: unknown, what: string): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const path = issue.path.length ? issue.path.join('.') : '(the whole value)';
  throw new Error(redact(`${what}: ${path}: ${issue.message}`));
}
