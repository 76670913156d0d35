// Launchpad: Filter Progress Log. A quick pick of the usual filters (errors, agent failures,
// merge conflicts, dispatches, batches, one session, stats, recovery), one task, or a regular
// expression; the matching lines open as a read-only document that follows the log.
// Called with filter values (`{ type: 'ERROR' }`, as `launchpad log` takes them) it skips the
// pick: other commands and tests open a view that way. Returns the document's URI.
import * as vscode from 'vscode';

import { LogFilterError, parseLogFilter } from '../../core/log/logFilterSpec';
import { parseLogLine } from '../../core/log/logLine';
import { tailLog } from '../../core/log/logReader';
import type { StateModel } from '../model/stateModel';
import { filterUri, type FilterValues } from './filterUri';

interface FilterItem extends vscode.QuickPickItem {
  values?: FilterValues;
  ask?: 'session' | 'task' | 'grep';
}

export const FILTER_ITEMS: FilterItem[] = [
  { label: '$(error) All errors', description: 'ERROR', values: { type: 'ERROR' } },
  { label: '$(debug-disconnect) Agent failures', description: '[AGENT_FAIL]', values: { category: 'AGENT_FAIL' } },
  { label: '$(git-merge) Merge conflicts', description: '[MERGE_CONFLICT]', values: { category: 'MERGE_CONFLICT' } },
  { label: '$(run) Dispatches', description: 'DISPATCH', values: { type: 'DISPATCH' } },
  { label: '$(layers) Batches', description: 'BATCH', values: { type: 'BATCH' } },
  { label: '$(history) One session…', description: 'SESSION-N', ask: 'session' },
  { label: '$(graph) Session statistics', description: 'STATS', values: { type: 'STATS' } },
  { label: '$(debug-restart) Recovery actions', description: 'RECOVERY', values: { type: 'RECOVERY' } },
  { label: '$(tasklist) One task…', description: '[task-id]', ask: 'task' },
  { label: '$(regex) Regular expression…', description: 'JavaScript, as launchpad log --grep', ask: 'grep' },
];

export async function filterProgressLog(model: StateModel, arg?: unknown): Promise<vscode.Uri | undefined> {
  const file = model.stateRoot()?.progress;
  if (!file) {
    void vscode.window.showErrorMessage('Launchpad: open a folder to filter its harness-progress.txt.');
    return undefined;
  }
  const values = asFilterValues(arg) ?? (await pickFilter(model, file));
  if (!values) return undefined;
  try {
    parseLogFilter(values);
  } catch (err) {
    if (!(err instanceof LogFilterError)) throw err;
    void vscode.window.showErrorMessage(`Launchpad: cannot filter the progress log: ${err.message}`);
    return undefined;
  }
  const uri = filterUri({ file, values });
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(doc, { preview: false });
  return uri;
}

/** Filter values given by a caller; anything else (a menu's tree item, nothing) is not one. */
function asFilterValues(arg: unknown): FilterValues | undefined {
  if (!arg || typeof arg !== 'object' || Array.isArray(arg)) return undefined;
  const keys = ['type', 'category', 'task', 'session', 'grep'];
  const entries = Object.entries(arg as Record<string, unknown>);
  if (entries.length === 0 || !entries.every(([k, v]) => keys.includes(k) && (typeof v === 'string' || typeof v === 'number')))
    return undefined;
  return Object.fromEntries(entries.map(([k, v]) => [k, String(v)])) as FilterValues;
}

async function pickFilter(model: StateModel, file: string): Promise<FilterValues | undefined> {
  const item = await vscode.window.showQuickPick(FILTER_ITEMS, {
    title: 'Filter Progress Log',
    placeHolder: 'Lines to show from harness-progress.txt',
  });
  if (!item) return undefined;
  if (item.values) return item.values;
  if (item.ask === 'session') return pickSession(model, file);
  if (item.ask === 'task') return pickTask(model);
  const grep = await vscode.window.showInputBox({
    title: 'Filter Progress Log: regular expression',
    prompt: 'Lines matching a JavaScript regular expression (case-sensitive), as `launchpad log --grep`',
    placeHolder: 'e.g. AGENT_FAIL.*import',
    validateInput: regexProblem,
  });
  return grep ? { grep } : undefined;
}

/** Why `text` cannot be the filter's regex, or undefined when it can. */
export function regexProblem(text: string): string | undefined {
  if (!text) return 'Type a regular expression.';
  try {
    parseLogFilter({ grep: text });
    return undefined;
  } catch (err) {
    return err instanceof LogFilterError ? err.reason : String(err);
  }
}

/** Sessions 1 … the newest (from the task file's count or the log's last line), newest first. */
async function pickSession(model: StateModel, file: string): Promise<FilterValues | undefined> {
  const lastLogged = parseLogLine(tailLog(file, 1)[0] ?? '')?.session ?? 0;
  const newest = Math.max(model.snapshot?.file?.session_count ?? 0, lastLogged);
  const items = Array.from({ length: Math.min(newest, 1000) }, (_, i) => ({ label: `SESSION-${newest - i}`, session: newest - i }));
  if (items.length === 0) {
    void vscode.window.showInformationMessage('Launchpad: no session has been logged yet.');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(items, { title: 'Filter Progress Log: one session', placeHolder: 'Session' });
  return pick ? { session: String(pick.session) } : undefined;
}

async function pickTask(model: StateModel): Promise<FilterValues | undefined> {
  const tasks = model.snapshot?.tasks ?? [];
  if (tasks.length === 0) {
    void vscode.window.showInformationMessage('Launchpad: harness-tasks.json has no tasks.');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    tasks.map((t) => ({ label: t.id, description: t.title, detail: t.state })),
    { title: 'Filter Progress Log: one task', placeHolder: 'Task', matchOnDescription: true },
  );
  return pick ? { task: pick.label } : undefined;
}
