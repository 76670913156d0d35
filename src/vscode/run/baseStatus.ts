// The base branch as the integration gate last found it, in the status bar: green, red, or being
// checked, from `.launchpad/integration.json` through the model. Shown only where the task file
// sets session_config.integration_check or a gate has left a record; a click lists the gate's
// lines of the progress log.
import * as vscode from 'vscode';

import type { IntegrationState } from '../../core/integration/state';
import { COMMANDS } from '../contributions';
import { escapeMarkdown } from '../markdown';
import type { StateModel, StateSnapshot } from '../model/stateModel';

/** What the status bar shows of the base now (host tests read it). */
export interface ShownBase {
  text: string | undefined;
  tooltip: string | undefined;
}

const shown: ShownBase = { text: undefined, tooltip: undefined };

export function shownBase(): ShownBase {
  return { ...shown };
}

const LOOK: Record<IntegrationState['status'], { icon: string; word: string }> = {
  green: { icon: '$(pass)', word: 'green' },
  red: { icon: '$(error)', word: 'red' },
  checking: { icon: '$(sync~spin)', word: 'checking' },
};

export function registerBaseStatus(context: vscode.ExtensionContext, model: StateModel): void {
  const item = vscode.window.createStatusBarItem('launchpad.base', vscode.StatusBarAlignment.Left, 49);
  item.name = 'Launchpad Base Branch';
  item.command = { command: COMMANDS.filterLog, title: 'Show the integration check in the log', arguments: [{ category: 'INTEGRATION' }] };
  const render = (s: StateSnapshot | undefined) => {
    const state = s?.integration;
    const configured = !!s?.file?.session_config.integration_check;
    if (!state || (!configured && !state.commit)) {
      item.hide();
      shown.text = shown.tooltip = undefined;
      return;
    }
    const look = LOOK[state.status];
    item.text = `${look.icon} Base ${look.word}`;
    const tooltip = baseTooltip(state);
    item.tooltip = new vscode.MarkdownString(tooltip);
    item.backgroundColor = state.status === 'red' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    item.show();
    shown.text = item.text;
    shown.tooltip = tooltip;
  };
  context.subscriptions.push(item, model.onDidChange(render));
  render(model.snapshot);
}

/** The hover: the last result, the flaky ones, and the tasks whose merges were reverted. */
export function baseTooltip(state: IntegrationState): string {
  const short = (c: string | null) => (c ? `\`${c.slice(0, 7)}\`` : 'none yet');
  const out = [
    `**Integration check of the base branch:** ${LOOK[state.status].word} at ${short(state.commit)}${state.checked_at ? ` (${escapeMarkdown(state.checked_at)})` : ''}`,
    `**Last green:** ${short(state.last_green)}`,
  ];
  const flaky = state.flaky.at(-1);
  if (flaky)
    out.push(
      `**Flaky results:** ${state.flaky.length} (the last at ${short(flaky.commit)}, ${escapeMarkdown(flaky.at)}): failed, then passed on the same commit`,
    );
  for (const r of state.reverted.slice(-5)) {
    const withWhom = r.collided_with.length ? `; collided with ${r.collided_with.join(', ')}` : '';
    out.push(
      `**Reverted ${escapeMarkdown(r.task)}:** merge ${short(r.merge)} by ${short(r.revert)}${escapeMarkdown(withWhom)} — ${escapeMarkdown(r.reason)}`,
    );
  }
  return out.join('\n\n');
}
