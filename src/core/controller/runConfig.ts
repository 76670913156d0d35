// The settings a run uses, resolved in one place from the front end (CLI flags, environment,
// editor settings) and the task file, in that order of precedence.
import { agentCandidates, nonBlank } from '../agents/agentSetting';
import { resolveAgent, type ResolvedAgent } from '../agents/resolve';
import { InputError } from '../inputError';
import type { StatePaths } from '../statePaths';
import {
  DEFAULT_INTEGRATION_TIMEOUT_S,
  DEFAULT_RETRY_BACKOFF_S,
  DEFAULT_WORKTREE_SETUP_TIMEOUT_S,
  type TaskFile,
} from '../taskFile/schema';
import { DEFAULT_PORT_BLOCK_SIZE } from '../worktrees/ports';
import { resolveWorktreeRoot } from '../worktrees/worktreeRoot';

export { defaultWorktreeRoot, resolveWorktreeRoot } from '../worktrees/worktreeRoot';

/** What a front end knows; each field undefined when not given there. */
export interface RunSettings {
  /** CLI --agent: a preset name or a command line. */
  cliAgent?: string | undefined;
  /** CLI --agent-args: extra arguments (shell words) for the chosen preset. */
  cliAgentArgs?: string | undefined;
  /** VS Code's launchpad.agent.command (or launchpad.agent.preset). */
  editorAgent?: string | undefined;
  /** The editor setting editorAgent came from, for messages (default launchpad.agent.command). */
  editorAgentSource?: string | undefined;
  /** CLI --max-parallel or the editor's launchpad.maxParallelAgents. */
  maxParallel?: number | undefined;
  /** CLI --worktree-dir or the editor's launchpad.worktree.location. */
  worktreeDir?: string | undefined;
  /** CLI --in-place: tasks run one at a time in the main working tree. */
  inPlace?: boolean | undefined;
  /** CLI --max-tasks: session_config.max_tasks_per_session for this run. */
  maxTasksPerSession?: number | undefined;
  /** CLI --max-sessions: session_config.max_sessions for this run. */
  maxSessions?: number | undefined;
  /** CLI --agent-timeout: session_config.agent_timeout_seconds for this run. */
  agentTimeoutSeconds?: number | undefined;
  /** CLI --wait-on-limit: a usage or rate limit pauses the run until it lifts instead of ending it. */
  waitOnLimit?: boolean | undefined;
  env?: NodeJS.ProcessEnv | undefined;
}

export interface RunConfig {
  /** The command line that runs (a preset's expanded). */
  agentCommand: string | undefined;
  /** Where the agent command came from, for messages. */
  agentSource: string | undefined;
  /** The resolved agent, with its preset (and so its output parser) when one was named. */
  agent: ResolvedAgent | undefined;
  maxParallel: number;
  maxTasksPerSession: number;
  maxSessions: number;
  agentTimeoutMs: number;
  /** on_failure.cleanup's time limit. */
  cleanupTimeoutMs: number;
  /** harness-init.sh's time limit. */
  healthCheckTimeoutMs: number;
  worktreeRoot: string;
  /** A failed task's first back-off before a retry on an unchanged base (0: none). */
  retryBackoffSeconds: number;
  /** What a merge does with files changed outside files_hint. */
  scope: 'warn' | 'reject';
  /** session_config.protected_paths: every task's, beside its own (protectedPaths.ts). */
  protectedPaths: string[];
  /** session_config.review: whether a validated task waits for a person's review (a task's own review overrides it). */
  review: 'manual' | 'auto';
  /** session_config.budget_usd: dollars this run's agents may report before no new one starts. */
  budgetUsd: number | undefined;
  /** session_config.max_cost_usd: dollars one task's agents may report over all its attempts. */
  maxCostUsd: number | undefined;
  waitOnLimit: boolean;
  /** The first wait after a limit with no reset time; doubled for each one in a row, at most LIMIT_BACKOFF_CAP_MS. */
  limitBackoffMs: number;
  /** session_config.integration_check: the base branch's check after merges (core/integration/gate.ts). */
  integrationCheck: { command: string; timeoutMs: number; every: number } | undefined;
  /** session_config.worktree_setup: run in each new worktree before the agent. */
  worktreeSetup: string | undefined;
  worktreeSetupTimeoutMs: number;
  /** Prepared worktrees kept for reuse (0: every task gets a new one). */
  worktreePool: number;
  /** Ports per running task (LAUNCHPAD_PORT_BASE …). */
  portBlockSize: number;
}

/** The first back-off after a usage or rate limit whose reset time the tool did not print. */
export const DEFAULT_LIMIT_BACKOFF_MS = 60_000;
/** The longest such back-off. */
export const LIMIT_BACKOFF_CAP_MS = 30 * 60_000;

export { DEFAULT_RETRY_BACKOFF_S, DEFAULT_WORKTREE_SETUP_TIMEOUT_S } from '../taskFile/schema';

export function resolveRunConfig(settings: RunSettings, file: TaskFile, paths: StatePaths, toplevel: string): RunConfig {
  const env = settings.env ?? process.env;
  const agent = resolveAgentSetting(settings, file);
  const cfg = file.session_config;
  return {
    agentCommand: agent?.command,
    agentSource: agent?.source,
    agent,
    maxParallel: settings.maxParallel ?? cfg.max_parallel_agents,
    maxTasksPerSession: settings.maxTasksPerSession ?? cfg.max_tasks_per_session,
    maxSessions: maxSessions(settings, file),
    agentTimeoutMs: (settings.agentTimeoutSeconds ?? cfg.agent_timeout_seconds) * 1000,
    cleanupTimeoutMs: cfg.cleanup_timeout_seconds * 1000,
    healthCheckTimeoutMs: cfg.health_check_timeout_seconds * 1000,
    retryBackoffSeconds: retryBackoffFromEnv(env) ?? cfg.retry_backoff_seconds ?? DEFAULT_RETRY_BACKOFF_S,
    scope: cfg.scope ?? 'warn',
    protectedPaths: cfg.protected_paths ?? [],
    review: cfg.review ?? 'auto',
    budgetUsd: cfg.budget_usd ?? undefined,
    maxCostUsd: cfg.max_cost_usd ?? undefined,
    waitOnLimit: settings.waitOnLimit ?? false,
    limitBackoffMs: limitBackoffMs(env),
    worktreeRoot: resolveWorktreeRoot(settings, file, paths, toplevel),
    integrationCheck: cfg.integration_check?.command.trim()
      ? {
          command: cfg.integration_check.command.trim(),
          timeoutMs: (cfg.integration_check.timeout_seconds ?? DEFAULT_INTEGRATION_TIMEOUT_S) * 1000,
          every: cfg.integration_check.every ?? 1,
        }
      : undefined,
    worktreeSetup: cfg.worktree_setup?.trim() || undefined,
    worktreeSetupTimeoutMs: (cfg.worktree_setup_timeout_seconds ?? DEFAULT_WORKTREE_SETUP_TIMEOUT_S) * 1000,
    worktreePool: cfg.worktree_pool ?? 0,
    portBlockSize: cfg.port_block_size ?? DEFAULT_PORT_BLOCK_SIZE,
  };
}

/** How many sessions (runs that dispatched something) the task file may count. */
export function maxSessions(settings: RunSettings, file: TaskFile): number {
  return settings.maxSessions ?? file.session_config.max_sessions;
}

/**
 * The agent, first found (agentSetting.ts says where it is looked for), resolved. Throws
 * InputError naming the setting when they cannot be used; a front end calls this before it starts
 * a run, so such a mistake changes nothing.
 */
export function resolveAgentSetting(settings: RunSettings, file: TaskFile): ResolvedAgent | undefined {
  const cfg = file.session_config;
  if (nonBlank(cfg.agent) && nonBlank(cfg.agent_command)) {
    throw new InputError(
      'harness-tasks.json: session_config.agent and session_config.agent_command are both set (they are one setting); keep one',
    );
  }
  return resolveAgent(agentCandidates(settings, file), { cli: settings.cliAgentArgs, file: cfg.agent_args });
}

/** LAUNCHPAD_LIMIT_BACKOFF_SECONDS (a positive number; tests use a fraction of a second), else one minute. */
function limitBackoffMs(env: NodeJS.ProcessEnv): number {
  const v = Number(env.LAUNCHPAD_LIMIT_BACKOFF_SECONDS);
  return env.LAUNCHPAD_LIMIT_BACKOFF_SECONDS && Number.isFinite(v) && v > 0
    ? Math.min(v * 1000, LIMIT_BACKOFF_CAP_MS)
    : DEFAULT_LIMIT_BACKOFF_MS;
}

/** LAUNCHPAD_RETRY_BACKOFF_SECONDS: the first retry back-off for every run in this environment (a whole number, 0 retries at once). */
function retryBackoffFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const v = env.LAUNCHPAD_RETRY_BACKOFF_SECONDS;
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}
