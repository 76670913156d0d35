// Launchpad: Status as a read-only Markdown document that follows the model: the same fields
// as `launchpad status` (counts, sessions, the active run, every task with its state, worktrees,
// the last log lines), read from the snapshot the views use. Read-only: no lock, no git here.
import * as vscode from 'vscode';
import { tailLog } from '../../core/log/logReader';
import { computeStats } from '../../core/tasks/stats';
import { fencedBlock } from '../markdown';
import type { HarnessModel, HarnessSnapshot } from '../model/harnessModel';
import { STATE_LABELS } from '../views/taskPresentation';

export const STATUS_SCHEME = 'launchpad-status';
const statusUri = () => vscode.Uri.from({ scheme: STATUS_SCHEME, path: '/Launchpad Status.md' });
const RECENT_LOG_LINES = 10;

export function registerStatusDocument(model: HarnessModel): vscode.Disposable {
  const changed = new vscode.EventEmitter<vscode.Uri>();
  const provider: vscode.TextDocumentContentProvider = {
    onDidChange: changed.event,
    provideTextDocumentContent: async () => renderStatus(await model.whenLoaded()),
  };
  return vscode.Disposable.from(
    changed,
    vscode.workspace.registerTextDocumentContentProvider(STATUS_SCHEME, provider),
    model.onDidChange(() => changed.fire(statusUri())),
  );
}

export async function showStatus(model: HarnessModel): Promise<void> {
  await model.refresh();
  const doc = await vscode.workspace.openTextDocument(statusUri());
  await vscode.window.showTextDocument(doc, { preview: true });
}

export function renderStatus(s: HarnessSnapshot): string {
  const out: string[] = ['# Launchpad status', '', `State root: \`${s.paths.root}\``, ''];
  if (!s.exists) return [...out, 'No `harness-tasks.json` here yet: run **Launchpad: Initialize**.', ''].join('\n');
  if (s.error || !s.file) return [...out, '**harness-tasks.json is not valid:**', '', fencedBlock(s.error?.message ?? 'unreadable'), ''].join('\n');

  const st = computeStats(s.file.tasks);
  out.push(
    `**Tasks:** ${st.tasks_total} total, ${st.completed} completed, ${st.failed} failed, ${st.in_batch} in progress, ${st.pending} pending, ${st.blocked} blocked (attempts ${st.attempts_total})`,
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
