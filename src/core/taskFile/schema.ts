// The shape of harness-tasks.json: version 3 (launchpad-run) and version 2 (harness) in one
// schema. Every field either names is understood; unknown fields pass through untouched so a
// write never drops a user's data. Defaults follow the product's contract. The limits are
// here, so the JSON Schema the editor checks against states them too.
// zod/mini: the same validation as classic zod at a tenth of the bundle size (no locales).
import * as z from 'zod/mini';

import { TASK_ID_PATTERN } from '../ids';

export const STATUSES = ['pending', 'in_progress', 'completed', 'failed', 'awaiting_answer', 'awaiting_review'] as const;
export const PRIORITIES = ['P0', 'P1', 'P2'] as const;

/** A title goes into the agent's environment (LAUNCHPAD_TASK_TITLE) and the merge commit's subject. */
export const MAX_TITLE_CHARS = 500;
/** Context is prompt text: long descriptions are fine, a pasted file is a mistake. */
export const MAX_CONTEXT_CHARS = 100_000;
/** A command line is one argument of `sh -c`: the system refuses (E2BIG) one of 128 KiB. */
export const MAX_COMMAND_CHARS = 16_384;
/** An agent's question or a person's answer: prompt text, a paragraph or two. */
export const MAX_QUESTION_CHARS = 10_000;
/** One files_hint entry: a path. */
export const MAX_PATH_CHARS = 4096;
/** A budget or cost limit in US dollars: a larger figure is a typo, not a plan. */
export const MAX_USD = 1_000_000;
/** 7 days. Node's timers overflow at 2^31 ms (about 24.8 days) and then fire at once. */
export const MAX_TIMEOUT_SECONDS = 604_800;
/** A task's validation time limit when it gives none (validation.timeout_seconds). */
export const DEFAULT_VALIDATION_TIMEOUT_S = 600;
/** How long a claim lives without a renewal when session_config.lease_seconds is not set. */
export const DEFAULT_LEASE_SECONDS = 120;
/** session_config.retry_backoff_seconds when absent. */
export const DEFAULT_RETRY_BACKOFF_S = 30;
/** session_config.worktree_setup_timeout_seconds when absent. */
export const DEFAULT_WORKTREE_SETUP_TIMEOUT_S = 600;
/** session_config.integration_check.timeout_seconds when absent. */
export const DEFAULT_INTEGRATION_TIMEOUT_S = 1800;
export const DEFAULT_REVIEW_ROUNDS = 3;
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
/** A path relative to the state root that stays inside it. */
const relativePath = () =>
  z.string().check(
    z.minLength(1),
    z.maxLength(MAX_PATH_CHARS),
    z.refine((p) => !p.startsWith('/') && !p.split(/[\\/]/).includes('..'), 'a path relative to the state root, without ".."'),
  );
const emptyList = (max?: number) => z._default(z.array(max ? z.string().check(z.maxLength(max)) : z.string()), () => []);

export const ID_RULE =
  'use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit, with no "..", no trailing "." and no ".lock" ending';
const taskId = z.string().check(z.regex(TASK_ID_PATTERN, { error: `invalid task id: ${ID_RULE}` }));

/**
 * Each documented field's schema with the key of its description. The descriptions live in
 * schemaDocs.ts, which the editor's JSON Schema, `launchpad config` and docs/configuration.md
 * load; the extension never reads them, so they stay out of its bundle.
 */
export const DOCUMENTED: Array<[schema: z.ZodMiniType, key: string]> = [];
const doc = <T extends z.ZodMiniType>(schema: T, key: string): T => {
  DOCUMENTED.push([schema, key]);
  return schema;
};

export const checkpointSchema = z.looseObject({
  step: doc(count(0), 'checkpoint.step'),
  total: doc(count(0), 'checkpoint.total'),
  description: doc(text(), 'checkpoint.description'),
  timestamp: doc(text(), 'checkpoint.timestamp'),
  attempt: doc(z.optional(count(0)), 'checkpoint.attempt'),
  agent_id: doc(nullableText(), 'checkpoint.agent_id'),
});

export const questionSchema = z.looseObject({
  text: doc(z.string().check(z.maxLength(MAX_QUESTION_CHARS)), 'question.text'),
  asked_at: doc(text(), 'question.asked_at'),
  attempt: doc(count(0), 'question.attempt'),
  agent_id: doc(nullableText(), 'question.agent_id'),
  answer: doc(boundedText(MAX_QUESTION_CHARS), 'question.answer'),
  answered_at: doc(nullableText(), 'question.answered_at'),
});

/** A person's comment on a line of a change under review, with the line as it was. */
export const reviewCommentSchema = z.looseObject({
  file: doc(z.string().check(z.minLength(1), z.maxLength(MAX_PATH_CHARS)), 'reviewComment.file'),
  line: doc(count(1), 'reviewComment.line'),
  text: doc(z.string().check(z.maxLength(MAX_QUESTION_CHARS)), 'reviewComment.text'),
  comment: doc(z.string().check(z.minLength(1), z.maxLength(MAX_QUESTION_CHARS)), 'reviewComment.comment'),
});

export const reviewRoundSchema = z.looseObject({
  number: doc(count(1), 'reviewRound.number'),
  commit: doc(text(), 'reviewRound.commit'),
  base: doc(text(), 'reviewRound.base'),
  requested_at: doc(text(), 'reviewRound.requested_at'),
  verdict: doc(z.optional(z.nullable(z.enum(['approved', 'changes_requested']))), 'reviewRound.verdict'),
  decided_at: doc(nullableText(), 'reviewRound.decided_at'),
  comments: doc(z.optional(z.array(reviewCommentSchema)), 'reviewRound.comments'),
});

export const taskSchema = z.looseObject({
  id: doc(taskId, 'task.id'),
  title: doc(z.string().check(z.minLength(1), z.maxLength(MAX_TITLE_CHARS)), 'task.title'),
  status: doc(z.enum(STATUSES), 'task.status'),
  priority: doc(withDefault(z.enum(PRIORITIES), 'P1'), 'task.priority'),
  depends_on: doc(emptyList(), 'task.depends_on'),
  attempts: doc(withDefault(count(0), 0), 'task.attempts'),
  max_attempts: doc(withDefault(count(1), 3), 'task.max_attempts'),
  context: doc(boundedText(MAX_CONTEXT_CHARS), 'task.context'),
  files_hint: doc(emptyList(MAX_PATH_CHARS), 'task.files_hint'),
  protected_paths: doc(z.optional(z.array(relativePath())), 'task.protected_paths'),
  review: doc(z.optional(z.enum(['manual', 'auto'])), 'task.review'),
  validation: doc(
    z.optional(
      z.nullable(
        z.looseObject({
          command: doc(boundedText(MAX_COMMAND_CHARS), 'task.validation.command'),
          timeout_seconds: doc(z.optional(z.nullable(seconds())), 'task.validation.timeout_seconds'),
        }),
      ),
    ),
    'task.validation',
  ),
  on_failure: doc(
    z.optional(
      z.nullable(
        z.looseObject({
          cleanup: doc(boundedText(MAX_COMMAND_CHARS), 'task.on_failure.cleanup'),
        }),
      ),
    ),
    'task.on_failure',
  ),
  error_log: doc(emptyList(), 'task.error_log'),
  error_tail: doc(nullableText(), 'task.error_tail'),
  failed_at: doc(nullableText(), 'task.failed_at'),
  checkpoints: doc(z.optional(z.array(checkpointSchema)), 'task.checkpoints'),
  question: doc(z.optional(z.nullable(questionSchema)), 'task.question'),
  review_round: doc(z.optional(z.nullable(reviewRoundSchema)), 'task.review_round'),
  agent_id: doc(nullableText(), 'task.agent_id'),
  worktree_branch: doc(nullableText(), 'task.worktree_branch'),
  started_at_commit: doc(nullableText(), 'task.started_at_commit'),
  completed_at: doc(nullableText(), 'task.completed_at'),
  out_of_scope: doc(z.optional(z.array(z.string())), 'task.out_of_scope'),
  cost: doc(
    z.optional(
      z.looseObject({
        usd: doc(z.optional(z.number().check(z.gte(0))), 'task.cost.usd'),
        input_tokens: doc(z.optional(count(0)), 'task.cost.input_tokens'),
        output_tokens: doc(z.optional(count(0)), 'task.cost.output_tokens'),
        attempts_reported: doc(withDefault(count(0), 0), 'task.cost.attempts_reported'),
      }),
    ),
    'task.cost',
  ),
  claimed_by: doc(nullableText(), 'task.claimed_by'),
  lease_expires_at: doc(nullableText(), 'task.lease_expires_at'),
  claim_generation: doc(z.optional(count(0)), 'task.claim_generation'),
});

export const sessionConfigSchema = z.looseObject({
  max_tasks_per_session: doc(withDefault(count(1), 20), 'sessionConfig.max_tasks_per_session'),
  max_sessions: doc(withDefault(count(1), 50), 'sessionConfig.max_sessions'),
  max_parallel_agents: doc(withDefault(count(1), 3), 'sessionConfig.max_parallel_agents'),
  concurrency_mode: doc(z.optional(z.enum(['exclusive', 'concurrent'])), 'sessionConfig.concurrency_mode'),
  lease_seconds: doc(z.optional(z.nullable(seconds())), 'sessionConfig.lease_seconds'),
  isolation: doc(z.optional(z.nullable(z.enum(['worktree', 'in-place']))), 'sessionConfig.isolation'),
  agent_command: doc(boundedText(MAX_COMMAND_CHARS), 'sessionConfig.agent_command'),
  agent: doc(boundedText(MAX_COMMAND_CHARS), 'sessionConfig.agent'),
  agent_args: doc(z.optional(z.nullable(z.record(z.string(), z.array(z.string())))), 'sessionConfig.agent_args'),
  agent_timeout_seconds: doc(withDefault(seconds(), 3600), 'sessionConfig.agent_timeout_seconds'),
  cleanup_timeout_seconds: doc(withDefault(seconds(), 300), 'sessionConfig.cleanup_timeout_seconds'),
  health_check_timeout_seconds: doc(withDefault(seconds(), 600), 'sessionConfig.health_check_timeout_seconds'),
  worktree_dir: doc(nullableText(), 'sessionConfig.worktree_dir'),
  retry_backoff_seconds: doc(z.optional(z.number().check(z.gte(0))), 'sessionConfig.retry_backoff_seconds'),
  scope: doc(z.optional(z.enum(['warn', 'reject'])), 'sessionConfig.scope'),
  protected_paths: doc(z.optional(z.array(relativePath())), 'sessionConfig.protected_paths'),
  review: doc(z.optional(z.enum(['manual', 'auto'])), 'sessionConfig.review'),
  max_review_rounds: doc(z.optional(count(1)), 'sessionConfig.max_review_rounds'),
  budget_usd: doc(usdLimit(), 'sessionConfig.budget_usd'),
  max_cost_usd: doc(usdLimit(), 'sessionConfig.max_cost_usd'),
  worktree_setup: doc(boundedText(MAX_COMMAND_CHARS), 'sessionConfig.worktree_setup'),
  worktree_setup_timeout_seconds: doc(z.optional(seconds()), 'sessionConfig.worktree_setup_timeout_seconds'),
  worktree_pool: doc(z.optional(z.int().check(z.gte(0), z.lte(MAX_WORKTREE_POOL))), 'sessionConfig.worktree_pool'),
  port_block_size: doc(z.optional(z.int().check(z.gte(1), z.lte(MAX_PORT_BLOCK_SIZE))), 'sessionConfig.port_block_size'),
  bell: doc(z.optional(z.boolean()), 'sessionConfig.bell'),
  integration_check: doc(
    z.optional(
      z.nullable(
        z.looseObject({
          command: doc(z.string().check(z.minLength(1), z.maxLength(MAX_COMMAND_CHARS)), 'sessionConfig.integration_check.command'),
          timeout_seconds: doc(z.optional(seconds()), 'sessionConfig.integration_check.timeout_seconds'),
          every: doc(z.optional(z.int().check(z.gte(1))), 'sessionConfig.integration_check.every'),
        }),
      ),
    ),
    'sessionConfig.integration_check',
  ),
});

export const taskFileSchema = z
  .looseObject({
    version: doc(withDefault(z.union([z.literal(2), z.literal(3)]), 3), 'taskFile.version'),
    created: doc(z.optional(text()), 'taskFile.created'),
    session_config: doc(z.prefault(sessionConfigSchema, {}), 'taskFile.session_config'),
    tasks: doc(z.array(taskSchema), 'taskFile.tasks'),
    session_count: doc(withDefault(count(0), 0), 'taskFile.session_count'),
    last_session: doc(nullableText(), 'taskFile.last_session'),
    last_task_number: doc(z.optional(count(0)), 'taskFile.last_task_number'),
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
export type Question = z.infer<typeof questionSchema>;
export type ReviewRound = z.infer<typeof reviewRoundSchema>;
export type ReviewComment = z.infer<typeof reviewCommentSchema>;
