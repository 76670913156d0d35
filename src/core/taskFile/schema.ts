// The shape of harness-tasks.json: version 3 (launchpad-run) and version 2 (harness) in one
// schema. Every field either names is understood; unknown fields pass through untouched so a
// write never drops a user's data. Defaults follow the product's contract. The limits are
// here, so the JSON Schema the editor checks against states them too.
// zod/mini: the same validation as classic zod at a tenth of the bundle size (no locales).
import * as z from 'zod/mini';

import { TASK_ID_PATTERN } from '../ids';
import { DEFAULT_PORT_BLOCK_SIZE } from '../worktrees/ports';

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
/** What a protected path does, said once for both fields. */
const PROTECTED =
  "an attempt whose commits change one fails (TEST_FAIL), and the validation runs on the base's copies of them. Relative to the state root; a folder covers what is in it; no globs.";
const emptyList = (max?: number) => z._default(z.array(max ? z.string().check(z.maxLength(max)) : z.string()), () => []);

const ID_RULE =
  'use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit, with no "..", no trailing "." and no ".lock" ending';
const taskId = z.string().check(z.regex(TASK_ID_PATTERN, { error: `invalid task id: ${ID_RULE}` }));

/** A field's description: the editor shows it from the JSON Schema, `launchpad config` and docs/configuration.md print it. */
const doc = <T extends z.ZodMiniType>(schema: T, description: string): T => {
  z.globalRegistry.add(schema, { description });
  return schema;
};

export const checkpointSchema = z.looseObject({
  step: doc(count(0), 'The step the agent reached.'),
  total: doc(count(0), 'The steps it expected in all.'),
  description: doc(text(), 'What it had done.'),
  timestamp: doc(text(), 'When Launchpad read the line.'),
  attempt: doc(z.optional(count(0)), 'The attempt that reported it (older files have none).'),
  agent_id: doc(nullableText(), 'The agent of that attempt (older files have none).'),
});

export const questionSchema = z.looseObject({
  text: doc(z.string().check(z.maxLength(MAX_QUESTION_CHARS)), "The agent's question, from its `QUESTION:` line."),
  asked_at: doc(text(), 'When Launchpad read it.'),
  attempt: doc(count(0), 'The attempt that asked it (given back: the attempt after the answer counts instead).'),
  agent_id: doc(nullableText(), 'The agent that asked it.'),
  answer: doc(boundedText(MAX_QUESTION_CHARS), "A person's answer (`launchpad answer`); absent while the task awaits one."),
  answered_at: doc(nullableText(), 'When it was answered.'),
});

export const taskSchema = z.looseObject({
  id: doc(taskId, `The task's id, and its branch harness-<id>: ${ID_RULE}.`),
  title: doc(
    z.string().check(z.minLength(1), z.maxLength(MAX_TITLE_CHARS)),
    "One line saying what to do: the agent's LAUNCHPAD_TASK_TITLE and the merge commit's subject.",
  ),
  status: doc(
    z.enum(STATUSES),
    'pending: waiting; in_progress: an attempt holds it; completed: merged; failed: its last attempt failed (retried while attempts < max_attempts); awaiting_answer: its agent asked a question (`launchpad answer`). Launchpad writes it.',
  ),
  priority: doc(withDefault(z.enum(PRIORITIES), 'P1'), 'Among the tasks ready to run, P0 goes first and P2 last.'),
  depends_on: doc(emptyList(), 'Ids of the tasks that must be merged before this one starts.'),
  attempts: doc(
    withDefault(count(0), 0),
    "Attempts charged to the task so far. Launchpad writes it; an attempt ended by the machine's fault is not counted.",
  ),
  max_attempts: doc(withDefault(count(1), 3), 'Attempts the task may take; after the last one fails it stays failed.'),
  context: doc(boundedText(MAX_CONTEXT_CHARS), 'What the agent needs to know beyond the title: it goes into the prompt.'),
  files_hint: doc(
    emptyList(MAX_PATH_CHARS),
    'Paths the task should change, given to the agent as its scope. Tasks whose hints overlap never run at once; an empty list runs alone.',
  ),
  protected_paths: doc(
    z.optional(z.array(relativePath())),
    `Files or folders its agents may not change, typically the tests its validation runs (beside session_config.protected_paths): ${PROTECTED}`,
  ),
  validation: doc(
    z.optional(
      z.nullable(
        z.looseObject({
          command: doc(
            boundedText(MAX_COMMAND_CHARS),
            "Run with sh -c in the task's worktree after its agent reports success; only exit 0 is merged. A task without one is not run.",
          ),
          timeout_seconds: doc(
            z.optional(z.nullable(seconds())),
            `The validation's time limit (${DEFAULT_VALIDATION_TIMEOUT_S} when absent).`,
          ),
        }),
      ),
    ),
    'How a result is checked before it is merged.',
  ),
  on_failure: doc(
    z.optional(
      z.nullable(
        z.looseObject({
          cleanup: doc(
            boundedText(MAX_COMMAND_CHARS),
            'Run in the worktree after a failed attempt, before it is discarded (time limit: session_config.cleanup_timeout_seconds).',
          ),
        }),
      ),
    ),
    'What runs after a failed attempt.',
  ),
  error_log: doc(emptyList(), 'One "[CATEGORY] reason" line per failed attempt, shown to the next attempt. Launchpad writes it.'),
  error_tail: doc(nullableText(), "The end of the last failure's output, for a hover or `status`. Launchpad writes it."),
  failed_at: doc(nullableText(), 'When the task last failed: the oldest failure is retried first. Launchpad writes it.'),
  checkpoints: doc(z.optional(z.array(checkpointSchema)), 'The progress its agents reported with CHECKPOINT lines. Launchpad writes it.'),
  question: doc(
    z.optional(z.nullable(questionSchema)),
    "Its agent's question and, once given, a person's answer: the next attempt resumes the asking one's worktree with both in its prompt. Launchpad writes it.",
  ),
  agent_id: doc(nullableText(), "The agent id of its last attempt, which fences that attempt's effects. Launchpad writes it."),
  worktree_branch: doc(nullableText(), 'The branch of its last attempt, harness-<id>. Launchpad writes it.'),
  started_at_commit: doc(nullableText(), 'The base commit its last attempt started from. Launchpad writes it.'),
  completed_at: doc(nullableText(), 'When the task was merged. Launchpad writes it.'),
  out_of_scope: doc(
    z.optional(z.array(z.string())),
    'Files its merged attempt changed outside files_hint (session_config.scope "warn"). Launchpad writes it.',
  ),
  cost: doc(
    z.optional(
      z.looseObject({
        usd: doc(z.optional(z.number().check(z.gte(0))), 'US dollars its agents reported.'),
        input_tokens: doc(z.optional(count(0)), 'Input tokens its agents reported.'),
        output_tokens: doc(z.optional(count(0)), 'Output tokens its agents reported.'),
        attempts_reported: doc(withDefault(count(0), 0), 'Attempts whose agent reported a cost or tokens.'),
      }),
    ),
    'What its agents reported they spent, summed over its attempts (absent: none reported). Launchpad writes it.',
  ),
  claimed_by: doc(nullableText(), 'The worker whose claim holds the task (concurrent mode, queue runs). Launchpad writes it.'),
  lease_expires_at: doc(nullableText(), 'Concurrent mode: when the claim lapses unless its worker renews it. Launchpad writes it.'),
  claim_generation: doc(
    z.optional(count(0)),
    "Counts the task's claims; a worker's claim is its own only while this is unchanged (a fencing token). Launchpad writes it.",
  ),
});

export const sessionConfigSchema = z.looseObject({
  max_tasks_per_session: doc(
    withDefault(count(1), 20),
    'Dispatches one run makes before it stops (retries count). `run --max-tasks` overrides it once.',
  ),
  max_sessions: doc(
    withDefault(count(1), 50),
    "Runs that dispatched something, over the task file's life; a run refuses to start past it. `run --max-sessions` overrides it once.",
  ),
  max_parallel_agents: doc(withDefault(count(1), 3), 'Agents at once. `run --max-parallel` overrides it once.'),
  concurrency_mode: doc(
    z.optional(z.enum(['exclusive', 'concurrent'])),
    'exclusive (absent): one run at a time; concurrent: several runs share the tasks through claims with leases.',
  ),
  lease_seconds: doc(
    z.optional(z.nullable(seconds())),
    `Concurrent mode: how long a worker's claim lasts without a renewal before another worker may take the task over (${DEFAULT_LEASE_SECONDS} when absent).`,
  ),
  isolation: doc(
    z.optional(z.nullable(z.enum(['worktree', 'in-place']))),
    'worktree (absent): each task in its own worktree; in-place: one task at a time in the main working tree. `run --in-place` overrides it once.',
  ),
  agent_command: doc(boundedText(MAX_COMMAND_CHARS), 'The older name of agent (set one of the two).'),
  agent: doc(
    boundedText(MAX_COMMAND_CHARS),
    'The agent: a preset name (`launchpad agents` lists them) or a command line. `run --agent` overrides it once.',
  ),
  agent_args: doc(
    z.optional(z.nullable(z.record(z.string(), z.array(z.string())))),
    'Extra arguments per agent preset: {"claude": ["--model", "sonnet"]}.',
  ),
  agent_timeout_seconds: doc(withDefault(seconds(), 3600), "An agent's time limit. `run --agent-timeout` overrides it once."),
  cleanup_timeout_seconds: doc(withDefault(seconds(), 300), "on_failure.cleanup's time limit."),
  health_check_timeout_seconds: doc(withDefault(seconds(), 600), "harness-init.sh's time limit."),
  worktree_dir: doc(
    nullableText(),
    'Where task worktrees go, relative to the state root (absent: <repository>.launchpad-worktrees beside the repository).',
  ),
  retry_backoff_seconds: doc(
    z.optional(z.number().check(z.gte(0))),
    `How long a failed task waits before a retry on an unchanged base, doubling per attempt up to 10 minutes (${DEFAULT_RETRY_BACKOFF_S} when absent; 0: at once).`,
  ),
  scope: doc(
    z.optional(z.enum(['warn', 'reject'])),
    'Files changed outside files_hint: warn (absent) merges and reports them, reject fails the attempt.',
  ),
  protected_paths: doc(
    z.optional(z.array(relativePath())),
    `Files or folders no task's agent may change, beside each task's own protected_paths: ${PROTECTED}`,
  ),
  budget_usd: doc(usdLimit(), "US dollars one run's agents may report; once reached no new agent starts (exit 6)."),
  max_cost_usd: doc(usdLimit(), "US dollars one task's agents may report over all its attempts; once reached it is not dispatched again."),
  worktree_setup: doc(
    boundedText(MAX_COMMAND_CHARS),
    'Run in each new task worktree before its agent ("npm ci"); its failure is the machine\'s (ENV_SETUP), not the task\'s.',
  ),
  worktree_setup_timeout_seconds: doc(
    z.optional(seconds()),
    `worktree_setup's time limit (${DEFAULT_WORKTREE_SETUP_TIMEOUT_S} when absent).`,
  ),
  worktree_pool: doc(
    z.optional(z.int().check(z.gte(0), z.lte(MAX_WORKTREE_POOL))),
    'Prepared worktrees kept between tasks and reused (0 or absent: a new worktree per task).',
  ),
  port_block_size: doc(
    z.optional(z.int().check(z.gte(1), z.lte(MAX_PORT_BLOCK_SIZE))),
    `Ports each running task gets, the first in LAUNCHPAD_PORT_BASE (${DEFAULT_PORT_BLOCK_SIZE} when absent).`,
  ),
  bell: doc(z.optional(z.boolean()), '`launchpad run` rings the terminal bell when it ends (true when absent).'),
  integration_check: doc(
    z.optional(
      z.nullable(
        z.looseObject({
          command: doc(
            z.string().check(z.minLength(1), z.maxLength(MAX_COMMAND_CHARS)),
            "Run with sh -c in a worktree of Launchpad's own at the base branch's head after merges; a failure twice is bisected and the merge that broke the base reverted and retried.",
          ),
          timeout_seconds: doc(z.optional(seconds()), `The check's time limit (${DEFAULT_INTEGRATION_TIMEOUT_S} when absent).`),
          every: doc(
            z.optional(z.int().check(z.gte(1))),
            'Check after this many merges, and whenever the run would go idle with merges not checked yet (1 when absent: after each merge).',
          ),
        }),
      ),
    ),
    'A check of the base branch after merges: tasks that pass their own validation may still break it together (docs/lifecycle.md).',
  ),
});

export const taskFileSchema = z
  .looseObject({
    version: doc(
      withDefault(z.union([z.literal(2), z.literal(3)]), 3),
      '3, or 2 for the older harness format; both are read and kept as they are.',
    ),
    created: doc(z.optional(text()), 'When `launchpad init` made the file.'),
    session_config: doc(z.prefault(sessionConfigSchema, {}), 'Settings of every run on this file (`launchpad config` sets them).'),
    tasks: doc(z.array(taskSchema), 'The tasks, in any order: depends_on makes the graph.'),
    session_count: doc(withDefault(count(0), 0), 'Runs that dispatched something so far (max_sessions limits it). Launchpad writes it.'),
    last_session: doc(nullableText(), 'When the last such run ended. Launchpad writes it.'),
    last_task_number: doc(
      z.optional(count(0)),
      'The highest task-NNN number `add` has handed out, so an id is never handed out twice. Launchpad writes it.',
    ),
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
