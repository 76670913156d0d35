// The descriptions of the task file's fields: the editor shows them from the JSON Schema
// (jsonSchema.ts), `launchpad config` prints them, and docs/configuration.md is generated from
// them. Kept apart from schema.ts, which the extension loads to read the file: it never shows
// them. registerSchemaDocs() attaches each to its field's schema, once.
import * as z from 'zod/mini';

import { DEFAULT_PORT_BLOCK_SIZE } from '../worktrees/ports';
import {
  DEFAULT_INTEGRATION_TIMEOUT_S,
  DEFAULT_LEASE_SECONDS,
  DEFAULT_RETRY_BACKOFF_S,
  DEFAULT_REVIEW_ROUNDS,
  DEFAULT_VALIDATION_TIMEOUT_S,
  DEFAULT_WORKTREE_SETUP_TIMEOUT_S,
  DOCUMENTED,
  ID_RULE,
} from './schema';

/** What a protected path does, said once for both fields. */
const PROTECTED =
  "an attempt whose commits change one fails (TEST_FAIL), and the validation runs on the base's copies of them. Relative to the state root; a folder covers what is in it; no globs.";

/** Each field's description, by the key schema.ts gives it (`<schema>.<field>[.<field>]`). */
export const SCHEMA_DOCS: Record<string, string> = {
  'checkpoint.step': 'The step the agent reached.',
  'checkpoint.total': 'The steps it expected in all.',
  'checkpoint.description': 'What it had done.',
  'checkpoint.timestamp': 'When Launchpad read the line.',
  'checkpoint.attempt': 'The attempt that reported it (older files have none).',
  'checkpoint.agent_id': 'The agent of that attempt (older files have none).',
  'question.text': "The agent's question, from its `QUESTION:` line.",
  'question.asked_at': 'When Launchpad read it.',
  'question.attempt': 'The attempt that asked it (given back: the attempt after the answer counts instead).',
  'question.agent_id': 'The agent that asked it.',
  'question.answer': "A person's answer (`launchpad answer`); absent while the task awaits one.",
  'question.answered_at': 'When it was answered.',
  'reviewComment.file': 'The file, relative to the repository top.',
  'reviewComment.line': 'The line, counted from 1, in the commit under review.',
  'reviewComment.text': "That line's text.",
  'reviewComment.comment': 'What the person asks for.',
  'reviewRound.number': 'The round: 1 for the first review, one more after each request for changes.',
  'reviewRound.commit': "The commit under review: the head of the task's branch when its validation passed.",
  'reviewRound.base': 'The commit its branch started from: the review shows the changes since.',
  'reviewRound.requested_at': 'When the task began to await this review.',
  'reviewRound.verdict':
    'approved: the next run merges it; changes_requested: the next run resumes its agent with the comments. Absent while it awaits review.',
  'reviewRound.decided_at': 'When the person decided.',
  'reviewRound.comments': 'The comments sent with a request for changes.',
  'task.id': `The task's id, and its branch harness-<id>: ${ID_RULE}.`,
  'task.title': "One line saying what to do: the agent's LAUNCHPAD_TASK_TITLE and the merge commit's subject.",
  'task.status':
    'pending: waiting; in_progress: an attempt holds it; completed: merged; failed: its last attempt failed (retried while attempts < max_attempts); awaiting_answer: its agent asked a question (`launchpad answer`); awaiting_review: validated, waiting for a person (`launchpad review`). Launchpad writes it.',
  'task.priority': 'Among the tasks ready to run, P0 goes first and P2 last.',
  'task.depends_on': 'Ids of the tasks that must be merged before this one starts.',
  'task.attempts': "Attempts charged to the task so far. Launchpad writes it; an attempt ended by the machine's fault is not counted.",
  'task.max_attempts': 'Attempts the task may take; after the last one fails it stays failed.',
  'task.context': 'What the agent needs to know beyond the title: it goes into the prompt.',
  'task.files_hint':
    'Paths the task should change, given to the agent as its scope. Tasks whose hints overlap never run at once; an empty list runs alone.',
  'task.protected_paths': `Files or folders its agents may not change, typically the tests its validation runs (beside session_config.protected_paths): ${PROTECTED}`,
  'task.review':
    'manual: after its validation passes it waits for a person to approve it or request changes before it merges (session_config.review when absent).',
  'task.validation.command':
    "Run with sh -c in the task's worktree after its agent reports success; only exit 0 is merged. A task without one is not run.",
  'task.validation.timeout_seconds': `The validation's time limit (${DEFAULT_VALIDATION_TIMEOUT_S} when absent).`,
  'task.validation': 'How a result is checked before it is merged.',
  'task.on_failure.cleanup':
    'Run in the worktree after a failed attempt, before it is discarded (time limit: session_config.cleanup_timeout_seconds).',
  'task.on_failure': 'What runs after a failed attempt.',
  'task.error_log': 'One "[CATEGORY] reason" line per failed attempt, shown to the next attempt. Launchpad writes it.',
  'task.error_tail': "The end of the last failure's output, for a hover or `status`. Launchpad writes it.",
  'task.failed_at': 'When the task last failed: the oldest failure is retried first. Launchpad writes it.',
  'task.checkpoints': 'The progress its agents reported with CHECKPOINT lines. Launchpad writes it.',
  'task.question':
    "Its agent's question and, once given, a person's answer: the next attempt resumes the asking one's worktree with both in its prompt. Launchpad writes it.",
  'task.review_round':
    'Its review before merge (review "manual"): the commit a person reviews, then the verdict and comments. Launchpad writes it.',
  'task.agent_id': "The agent id of its last attempt, which fences that attempt's effects. Launchpad writes it.",
  'task.worktree_branch': 'The branch of its last attempt, harness-<id>. Launchpad writes it.',
  'task.started_at_commit': 'The base commit its last attempt started from. Launchpad writes it.',
  'task.completed_at': 'When the task was merged. Launchpad writes it.',
  'task.out_of_scope': 'Files its merged attempt changed outside files_hint (session_config.scope "warn"). Launchpad writes it.',
  'task.cost.usd': 'US dollars its agents reported.',
  'task.cost.input_tokens': 'Input tokens its agents reported.',
  'task.cost.output_tokens': 'Output tokens its agents reported.',
  'task.cost.attempts_reported': 'Attempts whose agent reported a cost or tokens.',
  'task.cost': 'What its agents reported they spent, summed over its attempts (absent: none reported). Launchpad writes it.',
  'task.claimed_by': 'The worker whose claim holds the task (concurrent mode, queue runs). Launchpad writes it.',
  'task.lease_expires_at': 'Concurrent mode: when the claim lapses unless its worker renews it. Launchpad writes it.',
  'task.claim_generation':
    "Counts the task's claims; a worker's claim is its own only while this is unchanged (a fencing token). Launchpad writes it.",
  'sessionConfig.max_tasks_per_session': 'Dispatches one run makes before it stops (retries count). `run --max-tasks` overrides it once.',
  'sessionConfig.max_sessions':
    "Runs that dispatched something, over the task file's life; a run refuses to start past it. `run --max-sessions` overrides it once.",
  'sessionConfig.max_parallel_agents': 'Agents at once. `run --max-parallel` overrides it once.',
  'sessionConfig.concurrency_mode':
    'exclusive (absent): one run at a time; concurrent: several runs share the tasks through claims with leases.',
  'sessionConfig.lease_seconds': `Concurrent mode: how long a worker's claim lasts without a renewal before another worker may take the task over (${DEFAULT_LEASE_SECONDS} when absent).`,
  'sessionConfig.isolation':
    'worktree (absent): each task in its own worktree; in-place: one task at a time in the main working tree. `run --in-place` overrides it once.',
  'sessionConfig.agent_command': 'The older name of agent (set one of the two).',
  'sessionConfig.agent': 'The agent: a preset name (`launchpad agents` lists them) or a command line. `run --agent` overrides it once.',
  'sessionConfig.agent_args': 'Extra arguments per agent preset: {"claude": ["--model", "sonnet"]}.',
  'sessionConfig.agent_timeout_seconds': "An agent's time limit. `run --agent-timeout` overrides it once.",
  'sessionConfig.cleanup_timeout_seconds': "on_failure.cleanup's time limit.",
  'sessionConfig.health_check_timeout_seconds': "harness-init.sh's time limit.",
  'sessionConfig.worktree_dir':
    'Where task worktrees go, relative to the state root (absent: <repository>.launchpad-worktrees beside the repository).',
  'sessionConfig.retry_backoff_seconds': `How long a failed task waits before a retry on an unchanged base, doubling per attempt up to 10 minutes (${DEFAULT_RETRY_BACKOFF_S} when absent; 0: at once).`,
  'sessionConfig.scope': 'Files changed outside files_hint: warn (absent) merges and reports them, reject fails the attempt.',
  'sessionConfig.protected_paths': `Files or folders no task's agent may change, beside each task's own protected_paths: ${PROTECTED}`,
  'sessionConfig.review':
    "auto (absent): a task merges once its validation passes; manual: it waits for a person's review first (`launchpad review`, `approve`, `request-changes`). A task's own review overrides it.",
  'sessionConfig.max_review_rounds': `How many times a person may request changes to one task before only approving (or a retry) is left (${DEFAULT_REVIEW_ROUNDS} when absent).`,
  'sessionConfig.budget_usd': "US dollars one run's agents may report; once reached no new agent starts (exit 6).",
  'sessionConfig.max_cost_usd': "US dollars one task's agents may report over all its attempts; once reached it is not dispatched again.",
  'sessionConfig.worktree_setup':
    'Run in each new task worktree before its agent ("npm ci"); its failure is the machine\'s (ENV_SETUP), not the task\'s.',
  'sessionConfig.worktree_setup_timeout_seconds': `worktree_setup's time limit (${DEFAULT_WORKTREE_SETUP_TIMEOUT_S} when absent).`,
  'sessionConfig.worktree_pool': 'Prepared worktrees kept between tasks and reused (0 or absent: a new worktree per task).',
  'sessionConfig.port_block_size': `Ports each running task gets, the first in LAUNCHPAD_PORT_BASE (${DEFAULT_PORT_BLOCK_SIZE} when absent).`,
  'sessionConfig.bell': '`launchpad run` rings the terminal bell when it ends (true when absent).',
  'sessionConfig.integration_check.command':
    "Run with sh -c in a worktree of Launchpad's own at the base branch's head after merges; a failure twice is bisected and the merge that broke the base reverted and retried.",
  'sessionConfig.integration_check.timeout_seconds': `The check's time limit (${DEFAULT_INTEGRATION_TIMEOUT_S} when absent).`,
  'sessionConfig.integration_check.every':
    'Check after this many merges, and whenever the run would go idle with merges not checked yet (1 when absent: after each merge).',
  'sessionConfig.integration_check':
    'A check of the base branch after merges: tasks that pass their own validation may still break it together (docs/lifecycle.md).',
  'taskFile.version': '3, or 2 for the older harness format; both are read and kept as they are.',
  'taskFile.created': 'When `launchpad init` made the file.',
  'taskFile.session_config': 'Settings of every run on this file (`launchpad config` sets them).',
  'taskFile.tasks': 'The tasks, in any order: depends_on makes the graph.',
  'taskFile.session_count': 'Runs that dispatched something so far (max_sessions limits it). Launchpad writes it.',
  'taskFile.last_session': 'When the last such run ended. Launchpad writes it.',
  'taskFile.last_task_number': 'The highest task-NNN number `add` has handed out, so an id is never handed out twice. Launchpad writes it.',
};

let registered = false;

/** Attaches every description to its field's schema; a field without one is a mistake here. */
export function registerSchemaDocs(): void {
  if (registered) return;
  registered = true;
  for (const [schema, key] of DOCUMENTED) {
    const description = SCHEMA_DOCS[key];
    if (description === undefined) throw new Error(`schemaDocs.ts has no description for ${key}`);
    z.globalRegistry.add(schema, { description });
  }
}
