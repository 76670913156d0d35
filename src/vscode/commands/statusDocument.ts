// Launchpad: Show Status as a rendered, read-only Markdown document that follows the model: the same fields
// as `launchpad status` (counts, sessions, the active run, every task with its state, worktrees,
// the last log lines), read from the snapshot the views use. Read-only: no lock, no git here.
import * as vscode from 'vscode';

import { tailLog } from '../../core/log/logReader';
import { formatCounts } from '../../core/tasks/counts';
import { computeStats } from '../../core/tasks/stats';
import { escapeMarkdown, fencedBlock } from '../markdown';
import type { StateModel, StateSnapshot } from '../model/stateModel';
import { STATE_LABELS, taskDetails, unfinishedDependencies } from '../views/taskPresentation';
import { revertOf } from '../views/tasksProvider';

export const STATUS_SCHEME = 'launchpad-status';
/** One task's details (Open Task: a click on its row): `launchpad-task:/<id>.md`. */
export const TASK_SCHEME = 'launchpad-task';
export const taskUri = (id: string): vscode.Uri => vscode.Uri.from({ scheme: TASK_SCHEME, path: `/${id}.md` });
export const statusUri = (): vscode.Uri => vscode.Uri.from({ scheme: STATUS_SCHEME, path: '/Launchpad Status.md' });
const RECENT_LOG_LINES = 10;

export function registerStatusDocument(model: StateModel): vscode.Disposable {
  const changed = new vscode.EventEmitter<vscode.Uri>();
  const provider: vscode.TextDocumentContentProvider = {
    onDidChange: changed.event,
    provideTextDocumentContent: async () => renderStatus(await model.whenLoaded()),
  };
  const taskChanged = new vscode.EventEmitter<vscode.Uri>();
  const taskProvider: vscode.TextDocumentContentProvider = {
    onDidChange: taskChanged.event,
    provideTextDocumentContent: async (uri) => renderTask(await model.whenLoaded(), uri.path.replace(/^\//, '').replace(/\.md$/, '')),
  };
  return vscode.Disposable.from(
    changed,
    taskChanged,
    vscode.workspace.registerTextDocumentContentProvider(STATUS_SCHEME, provider),
    vscode.workspace.registerTextDocumentContentProvider(TASK_SCHEME, taskProvider),
    model.onDidChange(() => {
      changed.fire(statusUri());
      for (const doc of vscode.workspace.textDocuments) if (doc.uri.scheme === TASK_SCHEME) taskChanged.fire(doc.uri);
    }),
  );
}

/** Opens a task's details rendered, following the model as the status does. */
export async function showTask(id: string): Promise<vscode.Uri> {
  const uri = taskUri(id);
  await showRendered(uri);
  return uri;
}

export function renderTask(s: StateSnapshot, id: string): string {
  const t = s.byId.get(id);
  if (!t) return `# ${escapeMarkdown(id)}\n\nNo task "${escapeMarkdown(id)}" in harness-tasks.json any more.\n`;
  return taskDetails(t, { waitsFor: unfinishedDependencies(t, s.byId), reverted: revertOf(s, id) }, true);
}

/**
 * Shows the status rendered: VS Code's Markdown preview of the document, which follows it as the
 * model changes (the document itself where the Markdown extension is missing). Returns its URI.
 */
export async function showStatus(model: StateModel): Promise<vscode.Uri> {
  await model.refresh();
  const uri = statusUri();
  await showRendered(uri);
  return uri;
}

/** VS Code's Markdown preview of a document of ours (the document itself where the Markdown extension is missing). */
async function showRendered(uri: vscode.Uri): Promise<void> {
  // Opened here first: the provider's change events reach only documents open in this
  // extension host, and the preview reads the document from wherever it opened it.
  const doc = await vscode.workspace.openTextDocument(uri);
  try {
    await vscode.commands.executeCommand('markdown.showPreview', uri);
  } catch {
    await vscode.window.showTextDocument(doc, { preview: true });
  }
}

export function renderStatus(s: StateSnapshot): string {
  const out: string[] = ['# Launchpad status', '', `State root: \`${s.paths.root}\``, ''];
  if (!s.exists) return [...out, 'No `harness-tasks.json` here yet: run **Launchpad: Initialize Task File**.', ''].join('\n');
  if (s.error || !s.file)
    return [...out, '**harness-tasks.json is not valid:**', '', fencedBlock(s.error?.message ?? 'unreadable'), ''].join('\n');

  const st = computeStats(s.file.tasks);
  out.push(
    `**Tasks:** ${formatCounts(s.counts, { all: true })} (attempts ${st.attempts_total})`,
    '',
    `**Sessions:** ${s.file.session_count}${s.file.last_session ? ` (last ${s.file.last_session})` : ''}`,
    '',
    `**Active run:** ${s.activeSession ? `${s.activeSession.command} (pid=${s.activeSession.pid} on ${s.activeSession.host}, since ${s.activeSession.acquired_at})` : 'none'}`,
    '',
    '| Task | Title | State | Attempts | Last error / blocked by |',
    '|---|---|---|---|---|',
  );
  for (const t of s.tasks) {
    const note = t.state === 'blocked' ? t.blocked_reason : t.state === 'failed' || t.state === 'retryable' ? t.last_error : '';
    out.push(`| ${cell(t.id)} | ${cell(t.title)} | ${STATE_LABELS[t.state]} | ${t.attempts}/${t.max_attempts} | ${cell(note ?? '')} |`);
  }
  if (!s.tasks.length) out.push('| | (no tasks yet: Launchpad: Add Task) | | | |');
  out.push('', '## Worktrees', '');
  if (!vscode.workspace.isTrusted) out.push('(not listed in Restricted Mode: listing them runs git)');
  else if (s.worktrees.length) for (const w of s.worktrees) out.push(`- \`${w.branch}\` ${w.path}`);
  else out.push('(none)');
  out.push('', '## Recent log', '', fencedBlock(tailLog(s.paths.progress, RECENT_LOG_LINES).join('\n') || '(empty)'), '');
  return out.join('\n');
}

function cell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\s+/g, ' ');
}
