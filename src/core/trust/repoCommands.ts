// The commands a repository's own files make Launchpad run: the agent and its arguments set in
// harness-tasks.json, each task's validation and clean-up, worktree_setup, the base branch's
// integration check, the health checks (harness-init.sh, session_config.health_check), and a long run's verification, agents and the
// validations of the plans it runs, and the hooks an agent tool's project settings give it
// (.claude/settings.json and the like: the tool runs them in the task's worktree, which holds
// the repository's copy). A clone or a pull request can carry any of them, so the CLI
// shows them and asks before the first one runs (docs/trust.md); approvals.ts records the answer.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { ResolvedAgent } from '../agents/resolve';
import { shellQuote } from '../agents/shellWords';
import type { AgentCommands } from '../milestones/context';
import { readStateFile } from '../milestones/longRun';
import type { HarnessPaths } from '../milestones/paths';
import { parsePlan } from '../milestones/planFile';
import { INIT_SCRIPT, type StatePaths, TASKS_FILE } from '../statePaths';
import { parseTaskFile } from '../taskFile/parse';
import type { TaskFile } from '../taskFile/schema';

export type CommandKind =
  | 'agent'
  | 'agent_args'
  | 'validation'
  | 'cleanup'
  | 'worktree_setup'
  | 'integration_check'
  | 'health_check'
  | 'verification'
  | 'planner'
  | 'worker'
  | 'reviewer'
  | 'tool_hook';

export interface RepoCommand {
  kind: CommandKind;
  /** The file it is written in, relative to the folder approvals are kept for ('harness-tasks.json', 'harness-init.sh'). */
  file: string;
  /** Where in that file ('tasks[task-003].validation.command'); '' for a script, which runs whole. */
  field: string;
  /** What runs, exactly: a command line, a preset's arguments as shell words, or a script's text. */
  command: string;
}

/** Everything harness-tasks.json and harness-init.sh of a state root can make Launchpad run. */
export interface StateRootCommands {
  /** The task file as a run would read it (its backup when it does not parse), or undefined without one. */
  file: TaskFile | undefined;
  all: RepoCommand[];
}

/**
 * The commands of a state root's files. A task file that does not parse is read from its backup,
 * as a run restores it; one whose backup does not parse either runs nothing (the run stops).
 */
export function stateRootCommands(paths: StatePaths): StateRootCommands {
  const file = readTaskFile(paths.tasks) ?? readTaskFile(paths.backup);
  const all: RepoCommand[] = [];
  const add = (kind: CommandKind, file: string, field: string, command: unknown) => {
    if (typeof command === 'string' && command.trim()) all.push({ kind, file, field, command });
  };
  if (file) {
    const cfg = file.session_config as TaskFile['session_config'] & Record<string, unknown>;
    add('agent', TASKS_FILE, 'session_config.agent', cfg.agent);
    add('agent', TASKS_FILE, 'session_config.agent_command', cfg.agent_command);
    for (const [preset, args] of Object.entries(cfg.agent_args ?? {})) {
      if (args.length) add('agent_args', TASKS_FILE, `session_config.agent_args.${preset}`, args.map(shellQuote).join(' '));
    }
    add('worktree_setup', TASKS_FILE, 'session_config.worktree_setup', cfg.worktree_setup);
    add('integration_check', TASKS_FILE, 'session_config.integration_check.command', cfg.integration_check?.command);
    add('health_check', TASKS_FILE, 'session_config.health_check', cfg.health_check);
    // Given to each subtask a spec import makes, which then runs it as its validation.
    add('validation', TASKS_FILE, 'session_config.default_validation_command', cfg.default_validation_command);
    for (const task of file.tasks) {
      add('validation', TASKS_FILE, `tasks[${task.id}].validation.command`, task.validation?.command);
      add('cleanup', TASKS_FILE, `tasks[${task.id}].on_failure.cleanup`, task.on_failure?.cleanup);
    }
  }
  const script = readScript(paths.initScript);
  if (script !== undefined) all.push({ kind: 'health_check', file: INIT_SCRIPT, field: '', command: script });
  all.push(...toolHookCommands(paths.root));
  return { file, all };
}

/**
 * What `launchpad run` may start of them: every validation and clean-up, worktree_setup, the integration check,
 * harness-init.sh, and the agent when it is the task file's (its setting, or its extra arguments
 * for the preset a person chose).
 */
export function runCommands(commands: StateRootCommands, agent: ResolvedAgent | undefined, cliAgentArgs: boolean): RepoCommand[] {
  return commands.all.filter((c) => {
    if (c.kind === 'agent') return agent?.source === c.field;
    if (c.kind === 'agent_args') return !!agent?.preset && !cliAgentArgs && c.field === `session_config.agent_args.${agent.preset.name}`;
    if (c.kind === 'health_check') return c.file === INIT_SCRIPT;
    return true;
  });
}

/** What `launchpad start` runs: harness-init.sh, else session_config.health_check. */
export function startCommands(commands: StateRootCommands): RepoCommand[] {
  const script = commands.all.find((c) => c.kind === 'health_check' && c.file === INIT_SCRIPT);
  const configured = commands.all.find((c) => c.kind === 'health_check' && c.file !== INIT_SCRIPT);
  return script ? [script] : configured ? [configured] : [];
}

/** Milestone statuses in which its plan's tasks run. */
const PLAN_RUNS = new Set(['executing', 'validating', 'integrating']);

/**
 * What `launchpad milestones run` may start from the long run's files, relative to the
 * repository's top: state.md's verification command and test suite, its agents (those the person
 * did not give on the command line), and the validations of the plans it runs. A plan waiting
 * for approval runs nothing until a person approves it.
 */
export function longRunCommands(paths: HarnessPaths, given: Partial<AgentCommands> = {}): RepoCommand[] {
  const { state } = readStateFile(paths);
  const stateFile = paths.rel(paths.state);
  const all: RepoCommand[] = [];
  const add = (kind: CommandKind, field: string, command: string | null) => {
    if (command?.trim()) all.push({ kind, file: stateFile, field, command });
  };
  add('verification', 'Verification Strategy: Command', state.verification.command);
  add('verification', 'Verification Strategy: Test Suite', state.verification.testSuite);
  for (const role of ['planner', 'worker', 'reviewer'] as const) {
    if (!given[role]?.trim()) add(role, `Agents: ${role[0]!.toUpperCase()}${role.slice(1)}`, state.agents[role]);
  }
  for (const m of state.milestones) if (m.plan && PLAN_RUNS.has(m.status)) all.push(...planCommands(paths, m.plan));
  return all;
}

/** The validation commands of a plan (repository-relative path), or none when it cannot be read. */
export function planCommands(paths: HarnessPaths, plan: string): RepoCommand[] {
  try {
    return parsePlan(readFileSync(paths.abs(plan), 'utf8'), plan).map((t) => ({
      kind: 'validation' as const,
      file: plan,
      field: `${t.id} validate`,
      command: t.validate,
    }));
  } catch {
    // A plan that cannot be read cannot run either: the run reports it.
    return [];
  }
}

/** The project settings files in which an agent tool reads hooks: commands it runs itself. */
export const TOOL_SETTINGS = ['.claude/settings.json', '.claude/settings.local.json', '.gemini/settings.json', '.qwen/settings.json'];

/** Every hook command in the tools' project settings under `root` (each `"command"` inside `"hooks"`). */
export function toolHookCommands(root: string): RepoCommand[] {
  const found: RepoCommand[] = [];
  for (const file of TOOL_SETTINGS) {
    let settings: unknown;
    try {
      settings = JSON.parse(readFileSync(join(root, file), 'utf8'));
    } catch {
      continue; // none, or not JSON: the tool itself refuses a file it cannot read
    }
    const walk = (value: unknown, field: string): void => {
      if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${field}[${i}]`));
      else if (value && typeof value === 'object') {
        for (const [k, v] of Object.entries(value)) {
          if (k === 'command' && typeof v === 'string' && v.trim())
            found.push({ kind: 'tool_hook', file, field: `${field}.command`, command: v });
          else walk(v, `${field}.${k}`);
        }
      }
    };
    if (settings && typeof settings === 'object') walk((settings as Record<string, unknown>).hooks, 'hooks');
  }
  return found;
}

function readTaskFile(path: string): TaskFile | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const parsed = parseTaskFile(text);
  return parsed.ok ? parsed.file : undefined;
}

function readScript(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch {
    // A script that cannot be read cannot run either.
    return undefined;
  }
}
