// The Milestones view: each long run, its milestones in dependency order with their phase,
// attempts and what they wait for, and under each milestone the links to its plan, review and
// checkpoint. A thin provider over the model's last load.
import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';

import * as vscode from 'vscode';

import type { MilestoneRow } from '../../core/milestones/statusBlock';
import type { MilestoneStatus } from '../../core/milestones/transitions';
import { escapeMarkdown } from '../markdown';
import type { MilestonesModel, SessionView } from './milestonesModel';

export type MilestoneNode =
  | { kind: 'session'; dir: string }
  | { kind: 'milestone'; dir: string; id: string }
  | { kind: 'file'; dir: string; id: string; role: 'Plan' | 'Review' | 'Checkpoint'; path: string }
  | { kind: 'error'; dir: string };

export const PHASE_LABELS: Record<MilestoneStatus, string> = {
  pending: 'pending',
  planning: 'planning',
  awaiting_approval: 'plan awaits approval',
  executing: 'executing',
  validating: 'in review',
  integrating: 'integrating',
  completed: 'completed',
  failed: 'failed',
  skipped: 'skipped',
};

const ICONS: Record<MilestoneStatus, [string, string | undefined]> = {
  pending: ['circle-large-outline', undefined],
  planning: ['sync~spin', 'charts.blue'],
  awaiting_approval: ['question', 'charts.yellow'],
  executing: ['sync~spin', 'charts.blue'],
  validating: ['eye', 'charts.blue'],
  integrating: ['git-merge', 'charts.blue'],
  completed: ['pass', 'testing.iconPassed'],
  failed: ['error', 'list.errorForeground'],
  skipped: ['debug-step-over', undefined],
};

const FILE_ICONS = { Plan: 'checklist', Review: 'comment-discussion', Checkpoint: 'milestone' } as const;

export class MilestonesProvider implements vscode.TreeDataProvider<MilestoneNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<MilestoneNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly subscription: vscode.Disposable;

  constructor(private readonly model: MilestonesModel) {
    this.subscription = model.onDidChange(() => this.changed.fire(undefined));
  }

  async getChildren(node?: MilestoneNode): Promise<MilestoneNode[]> {
    const sessions = await this.model.whenLoaded();
    if (!node) return sessions.map((s) => ({ kind: 'session', dir: s.dir }));
    const s = this.model.session(node.dir);
    if (!s) return [];
    if (node.kind === 'session') {
      if (s.error || !s.status) return [{ kind: 'error', dir: s.dir }];
      return s.status.milestones.map((m) => ({ kind: 'milestone', dir: s.dir, id: m.id }));
    }
    if (node.kind === 'milestone') {
      const m = rowOf(s, node.id);
      if (!m) return [];
      const files: MilestoneNode[] = [];
      for (const [role, path] of [
        ['Plan', m.plan],
        ['Review', m.review],
        ['Checkpoint', m.checkpoint],
      ] as const) {
        if (path) files.push({ kind: 'file', dir: s.dir, id: m.id, role, path: isAbsolute(path) ? path : join(s.repoTop, path) });
      }
      return files;
    }
    return [];
  }

  getTreeItem(node: MilestoneNode): vscode.TreeItem {
    const s = this.model.session(node.dir);
    switch (node.kind) {
      case 'session':
        return sessionItem(node, s);
      case 'error': {
        const item = new vscode.TreeItem(s?.error?.message ?? 'cannot be read', vscode.TreeItemCollapsibleState.None);
        item.iconPath = new vscode.ThemeIcon('error', new vscode.ThemeColor('list.errorForeground'));
        item.tooltip = s?.error?.message;
        item.contextValue = 'milestoneError';
        return item;
      }
      case 'milestone':
        return milestoneItem(node, s, rowOf(s, node.id));
      case 'file': {
        const item = new vscode.TreeItem(node.role, vscode.TreeItemCollapsibleState.None);
        item.id = `${node.dir}#${node.id}#${node.role}`;
        item.description = node.path.slice((s?.repoTop.length ?? -1) + 1);
        item.resourceUri = vscode.Uri.file(node.path);
        item.iconPath = new vscode.ThemeIcon(FILE_ICONS[node.role]);
        item.tooltip = existsSync(node.path) ? node.path : `${node.path} (not written yet)`;
        item.command = { command: 'vscode.open', title: `Open ${node.role}`, arguments: [vscode.Uri.file(node.path)] };
        item.contextValue = `milestoneFile:${node.role.toLowerCase()}`;
        return item;
      }
    }
  }

  getParent(node: MilestoneNode): MilestoneNode | undefined {
    if (node.kind === 'session') return undefined;
    if (node.kind === 'file') return { kind: 'milestone', dir: node.dir, id: node.id };
    return { kind: 'session', dir: node.dir };
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}

function rowOf(s: SessionView | undefined, id: string): MilestoneRow | undefined {
  return s?.status?.milestones.find((m) => m.id === id);
}

function sessionItem(node: MilestoneNode, s: SessionView | undefined): vscode.TreeItem {
  const st = s?.status;
  const item = new vscode.TreeItem(st ? `Long run: ${st.name}` : node.dir, vscode.TreeItemCollapsibleState.Expanded);
  item.id = `session:${node.dir}`;
  item.iconPath = new vscode.ThemeIcon('milestone');
  if (!st) {
    item.description = 'cannot be read';
    item.contextValue = 'session:error';
    return item;
  }
  // state.md says "running" from the first run to the end; whether a run is going now is the lock's.
  const now = st.active_run
    ? 'running'
    : st.gates.length && st.overall.status !== 'completed'
      ? `waiting for you (${st.gates.length})`
      : st.overall.status === 'running'
        ? 'stopped'
        : st.overall.status;
  item.description = `${now} · ${st.progress.completed}/${st.progress.total} completed`;
  const md = new vscode.MarkdownString();
  md.appendMarkdown(`**${escapeMarkdown(st.name)}** (${escapeMarkdown(st.overall.status)})\n\n`);
  md.appendMarkdown(
    `**Current phase:** ${escapeMarkdown(st.current_phase)}\n\n**Next up:** ${escapeMarkdown(st.next_up.join(', ') || 'nothing ready')}\n\n`,
  );
  for (const g of st.gates) md.appendMarkdown(`- ${escapeMarkdown(g.text)}\n`);
  md.appendMarkdown(`\n${escapeMarkdown(node.dir)}`);
  item.tooltip = md;
  item.contextValue = `session:${st.overall.status}${st.overall.awaiting === 'e2e' ? ':gate-e2e' : ''}`;
  return item;
}

function milestoneItem(
  node: Extract<MilestoneNode, { kind: 'milestone' }>,
  s: SessionView | undefined,
  m: MilestoneRow | undefined,
): vscode.TreeItem {
  if (!m) return new vscode.TreeItem(node.id);
  const hasFiles = !!(m.plan || m.review || m.checkpoint);
  const item = new vscode.TreeItem(
    `${m.id}: ${m.name}`,
    hasFiles ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
  );
  item.id = `${node.dir}#${m.id}`;
  const gate = s?.status?.gates.find((g) => 'milestone' in g && g.milestone === m.id);
  const phase = m.awaiting ? `${PHASE_LABELS[m.status]}, awaiting a ${m.awaiting} decision` : PHASE_LABELS[m.status];
  const parts = [phase, `attempt ${m.attempts}`];
  if (m.tasks_total !== null) parts.push(`${m.tasks_done}/${m.tasks_total} tasks`);
  if (m.depends_on.length) parts.push(`after ${m.depends_on.join(', ')}`);
  if (m.blocked_by.length) parts.push(`blocked by ${m.blocked_by.join(', ')}`);
  item.description = parts.join(' · ');
  const [icon, color] = ICONS[m.status];
  item.iconPath = new vscode.ThemeIcon(m.awaiting ? 'bell' : icon, color ? new vscode.ThemeColor(color) : undefined);
  const md = new vscode.MarkdownString();
  md.appendMarkdown(`**${escapeMarkdown(`${m.id}: ${m.name}`)}**\n\n`);
  md.appendMarkdown(`**Status:** ${escapeMarkdown(`${m.status} · attempts ${m.attempts}`)}\n\n`);
  md.appendMarkdown(`**Depends on:** ${escapeMarkdown(m.depends_on.join(', ') || 'nothing')}\n\n`);
  if (m.reason) md.appendMarkdown(`**Reason:** ${escapeMarkdown(m.reason)}\n\n`);
  if (gate) md.appendMarkdown(`**Waiting for you:** ${escapeMarkdown(gate.text)}\n\n`);
  md.appendMarkdown(`**Next run:** ${escapeMarkdown(m.recovery)}`);
  item.tooltip = md;
  item.contextValue = `milestone:${m.status}${gate ? `:gate-${gate.kind}` : ''}`;
  return item;
}
