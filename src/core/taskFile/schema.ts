// The shape of harness-tasks.json: version 3 (launchpad-run) and version 2 (harness) in one
// schema. Every field either names is understood; unknown fields pass through untouched so a
// write never drops a user's data. Defaults follow the product's contract. The limits are
// here, so the JSON Schema the editor checks against states them too.
// zod/mini: the same validation as classic zod at a tenth of the bundle size (no locales).
import * as z from 'zod/mini';

import { TASK_ID_PATTERN } from '../ids';

export const STATUSES = ['pending', 'in_progress', 'completed', 'failed'] as const;
export const PRIORITIES = ['P0', 'P1', 'P2'] as const;

/** A title goes into the agent's environment (LAUNCHPAD_TASK_TITLE) and the merge commit's subject. */
export const MAX_TITLE_CHARS = 500;
/** Context is prompt text: long descriptions are fine, a pasted file is a mistake. */
export const MAX_CONTEXT_CHARS = 100_000;
/** A command line is one argument of `sh -c`: the system refuses (E2BIG) one of 128 KiB. */
export const MAX_COMMAND_CHARS = 16_384;
/** One files_hint entry: a path. */
export const MAX_PATH_CHARS = 4096;
/** A budget or cost limit in US dollars: a larger figure is a typo, not a plan. */
export const MAX_USD = 1_000_000;
/** 7 days. Node's timers overflow at 2^31 ms (about 24.8 days) and then fire at once. */
export const MAX_TIMEOUT_SECONDS = 604_800;
/** A task's validation time limit when it gives none (validation.timeout_seconds). */
export const DEFAULT_VALIDATION_TIMEOUT_S = 600;
/** Prepared worktrees kept for reuse: each is a full checkout plus its ignored files on disk. */
export const MAX_WORKTREE_POOL = 16;
/** Ports per running task; the blocks come out of 12,000 ports. */
export const MAX_PORT_BLOCK_SIZE = 1000;

const text = () => z.string();
const nullableText = () => z.optional(z.nullable(z.string()));
const boundedText = (max: number) => z.optional(z.nullable(z.string().check(z.maxLength(max))));
const count = (min: number) => z.int().check(z.gte(min));
const usdLimit = () => z.optional(z.nullable(z.number().check(z.positive(), z.lte(MAX_USD))));
const seconds = () => z.number().check(z.positive(), z.lte(MAX_TIMEOUT_SECONDS));
const withDefault = <T extends z.core.SomeType>(schema: T, value: z.core.output<T> & {}) => z._default(schema, value as never);
const emptyList = (max?: number) => z._default(z.array(max ? z.string().check(z.maxLength(max)) : z.string()), () => []);

const ID_RULE =
  'use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit, with no "..", no trailing "." and no ".lock" ending';
const taskId = z.string().check(z.regex(TASK_ID_PATTERN, { error: `invalid task id: ${ID_RULE}` }));

export const checkpointSchema = z.looseObject({
  step: count(0),
  total: count(0),
  description: text(),
  timestamp: text(),
  /** The attempt that reported it, and its agent (older files have neither). */
  attempt: z.optional(count(0)),
  agent_id: nullableText(),
});

export const taskSchema = z.looseObject({
  id: taskId,
  title: z.string().check(z.minLength(1), z.maxLength(MAX_TITLE_CHARS)),
  status: z.enum(STATUSES),
  priority: withDefault(z.enum(PRIORITIES), 'P1'),
  depends_on: emptyList(),
  attempts: withDefault(count(0), 0),
  max_attempts: withDefault(count(1), 3),
  context: boundedText(MAX_CONTEXT_CHARS),
  files_hint: emptyList(MAX_PATH_CHARS),
  validation: z.optional(
    z.nullable(
      z.looseObject({
        command: boundedText(MAX_COMMAND_CHARS),
        timeout_seconds: z.optional(z.nullable(seconds())),
      }),
    ),
  ),
  on_failure: z.optional(z.nullable(z.looseObject({ cleanup: boundedText(MAX_COMMAND_CHARS) }))),
  error_log: emptyList(),
  /** The bounded tail of the output of the last failure, for a hover or `status`. */
  error_tail: nullableText(),
  /** When the task last failed: the retry pool takes the oldest failure first. */
  failed_at: nullableText(),
  checkpoints: z.optional(z.array(checkpointSchema)),
  agent_id: nullableText(),
  worktree_branch: nullableText(),
  started_at_commit: nullableText(),
  completed_at: nullableText(),
  /** Files its merged attempt changed outside files_hint (session_config.scope "warn"). */
  out_of_scope: z.optional(z.array(z.string())),
  /** What its agents reported they spent, summed over the attempts that reported it (absent: none did). */
  cost: z.optional(
    z.looseObject({
      usd: z.optional(z.number().check(z.gte(0))),
      input_tokens: z.optional(count(0)),
      output_tokens: z.optional(count(0)),
      /** Attempts whose agent reported a cost or tokens. */
      attempts_reported: withDefault(count(0), 0),
    }),
  ),
  claimed_by: nullableText(),
  lease_expires_at: nullableText(),
  /** Concurrent mode: counts the task's claims; a worker's claim is only its while this is unchanged (a fencing token). */
  claim_generation: z.optional(count(0)),
});

export const sessionConfigSchema = z.looseObject({
  max_tasks_per_session: withDefault(count(1), 20),
  max_sessions: withDefault(count(1), 50),
  max_parallel_agents: withDefault(count(1), 3),
  concurrency_mode: z.optional(z.enum(['exclusive', 'concurrent'])),
  /** Concurrent mode: how long a claim lives without a renewal (DEFAULT_LEASE_SECONDS when absent). */
  lease_seconds: z.optional(z.nullable(seconds())),
  /** Where a task runs: its own worktree (the default) or the main working tree ("in-place"). */
  isolation: z.optional(z.nullable(z.enum(['worktree', 'in-place']))),
  agent_command: boundedText(MAX_COMMAND_CHARS),
  /** The same setting as agent_command: a preset name ("claude") or a command line. */
  agent: boundedText(MAX_COMMAND_CHARS),
  /** Extra arguments per agent preset: {"claude": ["--model", "sonnet"]}. */
  agent_args: z.optional(z.nullable(z.record(z.string(), z.array(z.string())))),
  agent_timeout_seconds: withDefault(seconds(), 3600),
  cleanup_timeout_seconds: withDefault(seconds(), 300),
  health_check_timeout_seconds: withDefault(seconds(), 600),
  worktree_dir: nullableText(),
  /** A failed task waits this long (doubling per attempt, at most 10 min) unless the base moves; 0: at once. */
  retry_backoff_seconds: z.optional(z.number().check(z.gte(0))),
  /** Files changed outside files_hint: "warn" merges and reports them, "reject" fails the attempt. */
  scope: z.optional(z.enum(['warn', 'reject'])),
  /** US dollars one run may spend (as its agents report it): once reached no new agent starts. */
  budget_usd: usdLimit(),
  /** US dollars one task may spend over all its attempts: once reached it is not dispatched again. */
  max_cost_usd: usdLimit(),
  /** Run in each new task worktree before the agent ("npm ci"); its failure is ENV_SETUP, not charged. */
  worktree_setup: boundedText(MAX_COMMAND_CHARS),
  worktree_setup_timeout_seconds: z.optional(seconds()),
  /** Prepared worktrees kept between tasks and reused (0 or absent: none). */
  worktree_pool: z.optional(z.int().check(z.gte(0), z.lte(MAX_WORKTREE_POOL))),
  /** Ports per running task, first one in LAUNCHPAD_PORT_BASE (10 when absent). */
  port_block_size: z.optional(z.int().check(z.gte(1), z.lte(MAX_PORT_BLOCK_SIZE))),
  /** `launchpad run` rings the terminal bell when it ends (true when absent). */
  bell: z.optional(z.boolean()),
});

export const taskFileSchema = z
  .looseObject({
    version: withDefault(z.union([z.literal(2), z.literal(3)]), 3),
    created: z.optional(text()),
    session_config: z.prefault(sessionConfigSchema, {}),
    tasks: z.array(taskSchema),
    session_count: withDefault(count(0), 0),
    last_session: nullableText(),
    /** The highest task-NNN number `add` has handed out, so an id is never handed out twice. */
    last_task_number: z.optional(count(0)),
  })
  .check(
    z.superRefine((file, ctx) => {
      const seen = new Map<string, number>();
      file.tasks.forEach((task, index) => {
        const first = seen.get(task.id);
        if (first !== undefined) {
          ctx.addIssue({ code: 'custom', path: ['tasks', index, 'id'], message: `duplicate id "${task.id}" (also tasks[${first}].id)` });
        } else {
          seen.set(task.id, index);
        }
      });
    }),
  );

export type TaskFile = z.infer<typeof taskFileSchema>;
export type Task = z.infer<typeof taskSchema>;
export type TaskStatus = Task['status'];
export type Priority = Task['priority'];
export type SessionConfig = TaskFile['session_config'];
export type Checkpoint = z.infer<typeof checkpointSchema>;
