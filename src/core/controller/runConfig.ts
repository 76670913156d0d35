// The settings a run uses, resolved in one place from the front end (CLI flags, environment,
// editor settings) and the task file, in SPEC §4's order.
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import type { StatePaths } from '../statePaths';
import type { TaskFile } from '../taskFile/schema';

/** What a front end knows; each field undefined when not given there. */
export interface RunSettings {
  /** CLI --agent. */
  cliAgent?: string | undefined;
  /** VS Code's launchpad.agent.command. */
  editorAgent?: string | undefined;
  /** CLI --max-parallel or the editor's launchpad.maxParallelAgents. */
  maxParallel?: number | undefined;
  /** CLI --worktree-dir or the editor's launchpad.worktree.location. */
  worktreeDir?: string | undefined;
  env?: NodeJS.ProcessEnv | undefined;
}

export interface RunConfig {
  agentCommand: string | undefined;
  /** Where the agent command came from, for messages. */
  agentSource: string | undefined;
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
}

/** session_config.retry_backoff_seconds when absent. */
export const DEFAULT_RETRY_BACKOFF_S = 30;

/** Validation time limit when a task gives none. */
export const DEFAULT_VALIDATION_TIMEOUT_S = 600;

export function resolveRunConfig(settings: RunSettings, file: TaskFile, paths: StatePaths, toplevel: string): RunConfig {
  const env = settings.env ?? process.env;
  const agent = firstAgent([
    ['--agent', settings.cliAgent],
    ['LAUNCHPAD_AGENT', env.LAUNCHPAD_AGENT],
    ['launchpad.agent.command', settings.editorAgent],
    ['session_config.agent_command', file.session_config.agent_command ?? undefined],
  ]);
  const cfg = file.session_config;
  const worktreeDir = settings.worktreeDir ?? env.LAUNCHPAD_WORKTREE_DIR ?? cfg.worktree_dir ?? undefined;
  return {
    agentCommand: agent?.[1],
    agentSource: agent?.[0],
    maxParallel: settings.maxParallel ?? cfg.max_parallel_agents,
    maxTasksPerSession: cfg.max_tasks_per_session,
    maxSessions: cfg.max_sessions,
    agentTimeoutMs: cfg.agent_timeout_seconds * 1000,
    cleanupTimeoutMs: cfg.cleanup_timeout_seconds * 1000,
    healthCheckTimeoutMs: cfg.health_check_timeout_seconds * 1000,
    retryBackoffSeconds: cfg.retry_backoff_seconds ?? DEFAULT_RETRY_BACKOFF_S,
    scope: cfg.scope ?? 'warn',
    worktreeRoot: worktreeDir ? (isAbsolute(worktreeDir) ? worktreeDir : resolve(paths.root, worktreeDir)) : defaultWorktreeRoot(toplevel),
  };
}

function firstAgent(candidates: Array<[string, string | undefined]>): [string, string] | undefined {
  const found = candidates.find(([, command]) => command !== undefined && command.trim() !== '');
  return found as [string, string] | undefined;
}

/**
 * Beside the repository, not inside it: tools that walk the project (test runners, linters,
 * the editor's search) must not find a copy of it per running task.
 */
export function defaultWorktreeRoot(toplevel: string): string {
  return join(dirname(toplevel), `${basename(toplevel)}.launchpad-worktrees`);
}
