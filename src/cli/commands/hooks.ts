import { relative } from 'node:path';

import { AGENT_HOOKS, HOOK_AGENTS, isHookAgent } from '../../core/hooks/agents';
import { installAgentHooks } from '../../core/hooks/settingsFile';
import type { Command } from '../command';
import { EXIT, UsageError } from '../exit';
import { stateRootForInit } from '../stateRoot';

export const hooksCommand: Command = {
  name: 'hooks',
  usage: `launchpad hooks install AGENT... [--remove] [--command CMD] [--json]    (AGENT: ${HOOK_AGENTS.join(', ')})`,
  summary: 'Install (or remove) the agent hooks that keep one agent working through the task list across context resets.',
  details: [
    'SessionStart gives a fresh context the current task, its checkpoints, the next eligible tasks and the last log lines;',
    'Stop keeps the agent working while the current task is not validated or eligible tasks remain. Both do nothing',
    'unless .harness-active is in the state root. Other keys and hooks in the settings file are kept; installing twice',
    "leaves one entry; --remove takes out only Launchpad's.",
    `Files, in the state root: ${HOOK_AGENTS.map((a) => `${a} ${AGENT_HOOKS[a].settingsFile}`).join(', ')}.`,
  ].join('\n'),
  options: {
    remove: { type: 'boolean', help: "remove Launchpad's hooks instead" },
    command: { type: 'string', value: 'CMD', help: 'what runs launchpad in the hooks (default "launchpad", found on PATH)' },
    json: { type: 'boolean', help: 'print each agent\'s settings file and whether it changed: {"agents": [{"agent", "file", "changed"}]}' },
  },
  positionals: { min: 2, max: HOOK_AGENTS.length + 1 },
  async run(ctx) {
    const [action, ...agents] = ctx.positionals;
    if (action !== 'install') throw new UsageError(`hooks: unknown action "${action}"\nusage: ${hooksCommand.usage}`);
    for (const agent of agents) {
      if (!isHookAgent(agent)) throw new UsageError(`hooks: unknown agent "${agent}"; agents: ${HOOK_AGENTS.join(', ')}`);
    }
    const prefix = typeof ctx.values.command === 'string' ? ctx.values.command.trim() : 'launchpad';
    if (!prefix) throw new UsageError('--command: expected a command, got ""');
    const remove = ctx.values.remove === true;
    const root = stateRootForInit(ctx).root;
    const json = ctx.values.json === true;
    const done: Array<{ agent: string; file: string; changed: boolean }> = [];
    for (const agent of new Set(agents.filter(isHookAgent))) {
      const r = installAgentHooks(root, agent, { remove, commandPrefix: prefix });
      done.push({ agent, file: r.file, changed: r.changed });
      if (json) continue;
      const where = relative(ctx.io.cwd, r.file) || r.file;
      const what = remove
        ? r.changed
          ? 'hooks removed from'
          : 'no Launchpad hooks in'
        : r.changed
          ? 'hooks installed in'
          : 'hooks already installed in';
      ctx.io.out(`${agent}: ${what} ${where}\n`);
    }
    if (json) ctx.io.out(JSON.stringify({ agents: done }, null, 2) + '\n');
    if (!remove && prefix === 'launchpad')
      ctx.io.err('note: the hooks run "launchpad hook …": launchpad must be on the agent\'s PATH (npm link), or install with --command\n');
    return EXIT.OK;
  },
};
