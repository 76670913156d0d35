// Trust on first use: before `run`, `start` or `milestones run` starts a command that comes from
// the repository's own files, the person approves it. On a terminal the commands are shown and
// asked about (y/N); without one the command refuses with exit 2, listing them and the line that
// approves them. --trust or LAUNCHPAD_TRUST=1 is an approval for one command, recorded nowhere
// (CI, and the VS Code window for a trusted workspace). docs/trust.md has the rule.
import type { ResolvedAgent } from '../core/agents/resolve';
import { escapeControlChars } from '../core/controlChars';
import { resolveAgentSetting, type RunSettings } from '../core/controller/runConfig';
import { InputError } from '../core/inputError';
import type { AgentCommands } from '../core/milestones/context';
import type { HarnessPaths } from '../core/milestones/paths';
import { INIT_SCRIPT, StatePaths, TASKS_FILE } from '../core/statePaths';
import { taskFileSchema } from '../core/taskFile/schema';
import { Approvals, type PendingCommand, pendingCommands, removedCommands, repositoryKey, trustFilePath } from '../core/trust/approvals';
import { longRunCommands, type RepoCommand, runCommands, startCommands, stateRootCommands } from '../core/trust/repoCommands';
import type { CommandContext, OptionSpec } from './command';
import { commandIn } from './invocation';
import type { Io } from './io';

export const TRUST_ENV = 'LAUNCHPAD_TRUST';

export const TRUST_OPTION: Record<string, OptionSpec> = {
  trust: {
    type: 'boolean',
    help: "run the repository's own commands without asking, this time only (as LAUNCHPAD_TRUST=1; nothing is recorded)",
  },
};

/**
 * --trust or LAUNCHPAD_TRUST=1. The variable is taken out of the environment: the agents and
 * commands this process starts do not inherit the approval.
 */
export function explicitApproval(ctx: Pick<CommandContext, 'io' | 'values'>): boolean {
  const value = ctx.io.env[TRUST_ENV];
  delete ctx.io.env[TRUST_ENV];
  return ctx.values.trust === true || value === '1' || value === 'true';
}

export interface TrustScope {
  /** The folder the approvals are kept for: the state root, or a long run's repository. */
  root: string;
  /** Everything the files read hold now, and those files: what was approved there and is gone is named. */
  all: RepoCommand[];
  files: string[];
  /** What this command will run. */
  required: RepoCommand[];
  /** This command, for the messages: "run", "start", "milestones run". */
  command: string;
}

/**
 * Returns once every command of `scope.required` is approved: already, or now on a terminal.
 * Otherwise throws (exit 2), nothing run.
 */
export async function requireApproval(io: Io, scope: TrustScope, canAsk: boolean): Promise<void> {
  const approvals = new Approvals(trustFilePath(io.env));
  const key = repositoryKey(scope.root);
  const approved = approvals.of(key);
  const pending = pendingCommands(scope.required, approved);
  if (!pending.length) return;
  const removed = removedCommands(scope.all, approved, scope.files);
  const listing = describePending(pending, removed).join('\n');
  const header = `${key}: "launchpad ${scope.command}" would run these commands from the repository's files, which you have not approved:`;
  if (canAsk && io.ask) {
    io.out(`${header}\n${listing}\n`);
    const answer = await io.ask(`Run them, and remember the approval (in ${approvals.path})? [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) throw new InputError('not approved: nothing was run');
    approvals.grant(
      key,
      pending.map((p) => p.command),
    );
    return;
  }
  const launchpad = commandIn(io, scope.root);
  throw new InputError(
    [
      header,
      listing,
      `Nothing was run. Read them, then approve them (recorded outside the repository, in ${approvals.path}):`,
      `  ${launchpad} trust`,
      `or for this time only (as in CI): ${launchpad} ${scope.command} --trust, or ${TRUST_ENV}=1 in its environment`,
    ].join('\n'),
  );
}

/** `launchpad run`: what the run may start of the state root's commands (the agent only when it is the task file's). */
export async function approveRunCommands(io: Io, paths: StatePaths, settings: RunSettings, canAsk: boolean): Promise<void> {
  const commands = stateRootCommands(paths);
  let agent: ResolvedAgent | undefined;
  try {
    agent = resolveAgentSetting(settings, commands.file ?? taskFileSchema.parse({ tasks: [] }));
  } catch {
    // Settings that cannot be used stop the run before it starts anything.
  }
  const required = runCommands(commands, agent, settings.cliAgentArgs !== undefined);
  await requireApproval(io, { root: paths.root, all: commands.all, files: STATE_ROOT_FILES, required, command: 'run' }, canAsk);
}

/** `launchpad start`: its health check, harness-init.sh or session_config.health_check. */
export async function approveStartCommands(io: Io, root: string, canAsk: boolean): Promise<void> {
  const commands = stateRootCommands(new StatePaths(root));
  await requireApproval(
    io,
    { root, all: commands.all, files: STATE_ROOT_FILES, required: startCommands(commands), command: 'start' },
    canAsk,
  );
}

/** `launchpad milestones run`: state.md's commands and agents (those not given as options), the plans it runs. */
export async function approveLongRunCommands(io: Io, paths: HarnessPaths, given: Partial<AgentCommands>, canAsk: boolean): Promise<void> {
  const all = longRunCommands(paths);
  const scope: TrustScope = {
    root: paths.repoTop,
    all,
    files: [...new Set([paths.rel(paths.state), ...all.map((c) => c.file)])],
    required: longRunCommands(paths, given),
    command: 'milestones run',
  };
  await requireApproval(io, scope, canAsk);
}

/**
 * Approves commands a person has just typed (add --validate, config worktree_setup, …): asking
 * about them later would ask about their own words. Not under an explicit approval, which
 * records nothing. Approvals that cannot be read or written are a warning: what was typed is done.
 */
export function approveTyped(ctx: Pick<CommandContext, 'io' | 'values'>, root: string, commands: RepoCommand[]): void {
  if (explicitApproval(ctx) || !commands.length) return;
  try {
    new Approvals(trustFilePath(ctx.io.env)).grant(repositoryKey(root), commands);
  } catch (err) {
    ctx.io.err(`warning: ${(err as Error).message}\n`);
  }
}

/** approveTyped for the commands of a state root's files that `typed` picks. */
export function approveTypedIn(ctx: Pick<CommandContext, 'io' | 'values'>, paths: StatePaths, typed: (c: RepoCommand) => boolean): void {
  approveTyped(ctx, paths.root, stateRootCommands(paths).all.filter(typed));
}

/** The files of a state root that hold commands. */
export const STATE_ROOT_FILES = [TASKS_FILE, INIT_SCRIPT];

/** Each command shown as it will run, control characters escaped: a terminal shows it, it never acts on one. */
export function describeCommands(commands: Array<RepoCommand & { label?: string; was?: string }>): string[] {
  const lines: string[] = [];
  for (const c of commands) {
    lines.push(`  ${(c.label ?? '').padEnd(LABEL)}${c.file}${c.field ? `  ${c.field}` : ''}`);
    if (c.was !== undefined) lines.push(...commandText(c.was, 'was: '));
    lines.push(...commandText(c.command, c.was !== undefined ? 'now: ' : ''));
  }
  return lines;
}

/** The width of the label before each command's place: "changed", a date. */
const LABEL = 11;

/** The whole of it, every line of a script: what is approved is what was shown. */
function commandText(command: string, prefix: string): string[] {
  const indent = ' '.repeat(LABEL + 2);
  const shown = (line: string) => escapeControlChars(line.replace(/\t/g, '    '));
  const lines = command.replace(/\n$/, '').split('\n');
  if (lines.length === 1) return [`${indent}${prefix}${shown(lines[0]!)}`];
  return lines.map((l) => `${indent}${prefix}| ${shown(l)}`);
}

function describePending(pending: PendingCommand[], removed: RepoCommand[]): string[] {
  return describeCommands([
    ...pending.map((p) => ({ ...p.command, label: p.change, ...(p.was !== undefined ? { was: p.was } : {}) })),
    ...removed.map((r) => ({ ...r, label: 'removed' })),
  ]);
}
