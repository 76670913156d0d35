// Install Agent Hooks: the agents whose hooks keep one agent working through the task list, in a
// quick pick with the installed ones checked; checking installs, unchecking removes, through
// `launchpad hooks install`. `{agents, remove?}` as the argument answers without asking (and
// touches only the agents named).
import * as vscode from 'vscode';

import { AGENT_HOOKS, HOOK_AGENTS, type HookAgent, isHookAgent } from '../../core/hooks/agents';
import { agentHooksInstalled } from '../../core/hooks/settingsFile';
import { COMMANDS } from '../contributions';
import { cliJson } from '../run/cli';
import { requireTrust } from '../trust';
import type { CommandDeps, Handlers } from './deps';
import { reportEditError } from './errors';

export function agentHookCommands(deps: CommandDeps): Handlers<typeof COMMANDS.installHooks> {
  return { [COMMANDS.installHooks]: (arg) => installHooks(deps, arg) };
}

interface Change {
  agent: HookAgent;
  remove: boolean;
}

async function installHooks({ model, logger }: CommandDeps, arg: unknown): Promise<void> {
  if (!requireTrust('Install Agent Hooks')) return;
  const paths = model.stateRoot();
  if (!paths) {
    void vscode.window.showErrorMessage('Launchpad: open a folder first.');
    return;
  }
  const root = paths.root;
  let changes: Change[];
  if (arg && typeof arg === 'object' && 'agents' in arg && Array.isArray(arg.agents)) {
    const remove = 'remove' in arg && arg.remove === true;
    changes = arg.agents.filter((a): a is HookAgent => typeof a === 'string' && isHookAgent(a)).map((agent) => ({ agent, remove }));
  } else {
    const items = HOOK_AGENTS.map((agent) => ({
      label: AGENT_HOOKS[agent].label,
      description: AGENT_HOOKS[agent].settingsFile,
      picked: agentHooksInstalled(root, agent),
      agent,
    }));
    const picked = await vscode.window.showQuickPick(items, {
      canPickMany: true,
      title: 'Launchpad: Install Agent Hooks',
      placeHolder: 'Agents kept working through the task list while .harness-active exists (unchecked: hooks removed)',
    });
    if (!picked) return;
    const chosen = new Set(picked.map((i) => i.agent));
    changes = items.filter((i) => chosen.has(i.agent) !== i.picked).map((i) => ({ agent: i.agent, remove: !chosen.has(i.agent) }));
  }
  const done: string[] = [];
  try {
    for (const remove of [false, true]) {
      const agents = changes.filter((c) => c.remove === remove).map((c) => c.agent);
      if (!agents.length) continue;
      const r = await cliJson<{ agents: Array<{ agent: HookAgent; changed: boolean }> }>(
        ['hooks', 'install', ...agents, ...(remove ? ['--remove'] : []), '--dir', root],
        { cwd: root },
      );
      for (const { agent, changed } of r.agents)
        if (changed) done.push(`${remove ? 'removed from' : 'installed in'} ${AGENT_HOOKS[agent].settingsFile}`);
    }
  } catch (err) {
    reportEditError('install agent hooks', err, logger);
    return;
  }
  if (!done.length) {
    void vscode.window.showInformationMessage('Launchpad: the agent hooks were already as chosen.');
    return;
  }
  void vscode.window.showInformationMessage(
    `Launchpad: hooks ${done.join('; ')}. They run "launchpad hook …": the launchpad CLI must be on the agents' PATH (npm link).`,
  );
}
