import { findRepoTop, HarnessPaths, listHarnessDirs } from '../../core/milestones/paths';
import type { StatePaths } from '../../core/statePaths';
import { Approvals, pendingCommands, removedCommands, repositoryKey, trustFilePath } from '../../core/trust/approvals';
import { longRunCommands, type RepoCommand, stateRootCommands } from '../../core/trust/repoCommands';
import type { Command, CommandContext } from '../command';
import { EXIT, UsageError } from '../exit';
import { stateRootForInit } from '../stateRoot';
import { describeCommands, STATE_ROOT_FILES, TRUST_ENV } from '../trust';

export const trustCommand: Command = {
  name: 'trust',
  usage: 'launchpad trust [--show | --revoke] [--json] [--dir DIR]',
  summary: "Approve the commands this repository's files make Launchpad run (shown first); --show lists them, --revoke forgets them.",
  details: [
    "run, start and milestones run start commands written in the repository's files: the agent set in harness-tasks.json and its",
    "agent_args, each task's validation.command and on_failure.cleanup, session_config.worktree_setup, integration_check and health_check, harness-init.sh,",
    "and a long run's verification, agents and plans. Before the first of them runs they must be approved: on a terminal the",
    'command asks; otherwise it exits 2 and lists them. "launchpad trust" approves every one of them as it is now, recorded',
    'outside the repository ($XDG_CONFIG_HOME/launchpad/trust.json, else ~/.config/launchpad/trust.json) for the real path of',
    'the state root (its long runs too, when the state root is the top of the repository); a command changed or added later is',
    `asked about again. --trust on run, start and milestones run, or ${TRUST_ENV}=1, approves them for that time only (CI).`,
    'A command you type (run --agent, $LAUNCHPAD_AGENT, add --validate, config worktree_setup …) needs no approval (docs/trust.md).',
    '',
    'examples:',
    '  launchpad trust --show     what is approved here, and what is not (yet)',
    '  launchpad trust            approve the commands as they are now',
    '  launchpad trust --revoke   forget every approval of this repository',
  ].join('\n'),
  options: {
    show: { type: 'boolean', help: 'list what is approved for this repository, and what its files hold that is not' },
    revoke: { type: 'boolean', help: "forget this repository's approvals" },
    json: { type: 'boolean', help: 'print the result as JSON' },
  },
  async run(ctx) {
    const { io, values } = ctx;
    if (values.show && values.revoke) throw new UsageError(`trust: --show or --revoke, not both\nusage: ${trustCommand.usage}`);
    const paths = stateRootForInit(ctx);
    const key = repositoryKey(paths.root);
    const approvals = new Approvals(trustFilePath(io.env));
    const print = (json: unknown, text: string) => io.out(values.json ? JSON.stringify(json, null, 2) + '\n' : text);

    if (values.revoke) {
      const n = approvals.revoke(key);
      print(
        { repository: key, file: approvals.path, revoked: n },
        n ? `${key}: forgot ${n} approved command${n === 1 ? '' : 's'}\n` : `${key}: nothing was approved\n`,
      );
      return EXIT.OK;
    }

    const { commands, files } = repositoryCommands(ctx, paths, key);
    const approved = approvals.of(key);
    const pending = pendingCommands(commands, approved);
    const removed = removedCommands(commands, approved, files);

    if (values.show) {
      const text = [
        `${key}: ${approved.length ? `approved (in ${approvals.path}):` : 'nothing approved'}`,
        ...describeCommands(approved.map((a) => ({ ...a, label: a.approved_at.slice(0, 10) }))),
        ...(pending.length
          ? [
              `not approved (${pending.length}): "launchpad trust" approves them`,
              ...describeCommands(pending.map((p) => ({ ...p.command, label: p.change, ...(p.was !== undefined ? { was: p.was } : {}) }))),
            ]
          : [commands.length ? 'every command of its files is approved' : 'its files hold no command']),
      ];
      print(
        {
          repository: key,
          file: approvals.path,
          approved,
          pending: pending.map((p) => ({ ...p.command, change: p.change, was: p.was ?? null })),
        },
        text.join('\n') + '\n',
      );
      return EXIT.OK;
    }

    approvals.grant(key, commands, { files });
    const changes = [
      pending.filter((p) => p.change === 'new').length && `${pending.filter((p) => p.change === 'new').length} new`,
      pending.filter((p) => p.change === 'changed').length && `${pending.filter((p) => p.change === 'changed').length} changed`,
      removed.length && `${removed.length} removed`,
    ].filter(Boolean);
    const text = commands.length
      ? [
          `${key}: approved (recorded in ${approvals.path}):`,
          ...describeCommands(commands),
          `${commands.length} command${commands.length === 1 ? '' : 's'} approved${changes.length ? ` (since the last approval: ${changes.join(', ')})` : ''}`,
        ]
      : [`${key}: its files hold no command; nothing to approve`];
    print({ repository: key, file: approvals.path, approved: approvals.of(key), removed }, text.join('\n') + '\n');
    return EXIT.OK;
  },
};

/**
 * Every command of the state root's files and, when the state root is the top of its repository,
 * of the repository's long runs. A long run whose state.md cannot be read is left out, with a warning.
 */
function repositoryCommands(ctx: CommandContext, paths: StatePaths, key: string): { commands: RepoCommand[]; files: string[] } {
  const commands = [...stateRootCommands(paths).all];
  const files = [...STATE_ROOT_FILES];
  const top = findRepoTop(paths.root);
  if (top && repositoryKey(top) === key) {
    for (const dir of listHarnessDirs(top)) {
      const paths = new HarnessPaths(dir, top);
      try {
        const own = longRunCommands(paths);
        commands.push(...own);
        files.push(paths.rel(paths.state), ...own.map((c) => c.file));
      } catch (err) {
        ctx.io.err(`warning: ${(err as Error).message}; its commands are not approved\n`);
      }
    }
  }
  return { commands, files: [...new Set(files)] };
}
