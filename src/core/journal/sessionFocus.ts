// Step 6 of session start-up: which task the session works on, the question a person answers,
// and what confirming does: a session_started entry, and for a spec, the chosen parent tasks'
// subtasks imported into harness-tasks.json (so `launchpad run` works on them).
import { initStateFiles } from '../init';
import { InputError } from '../inputError';
import { readTasksMd } from '../specTasks/specFiles';
import { type ImportResult, importSpecTasks, unfinishedParents } from '../specTasks/specImport';
import type { MdTask } from '../specTasks/tasksMd';
import { StatePaths } from '../statePaths';
import { StateStore } from '../taskFile/store';
import { eligibleTasks } from '../tasks/dag';
import type { JournalEntry } from './entrySchema';
import { Journal } from './journal';
import { JournalPaths } from './journalPaths';
import type { StartupSummary } from './startup';

export interface FocusTask {
  id: string;
  title: string;
}

export interface FocusPlan {
  /** The spec's parent tasks, or harness-tasks.json's tasks. */
  spec: string | null;
  /** What was asked for (or the next task when nothing was): the scope gate's input. */
  requested: FocusTask[];
}

/**
 * The tasks asked for with `--task` (spec mode: parent ids, a subtask id standing for its parent;
 * otherwise harness task ids), or the next incomplete one. Unknown ids are refused.
 */
export function planFocus(summary: StartupSummary, requestedIds: string[] | undefined): FocusPlan {
  const jpaths = new JournalPaths(new StatePaths(summary.root));
  if (summary.spec) {
    const md = readTasksMd(jpaths, summary.spec).tasks;
    if (!requestedIds?.length) {
      const next = unfinishedParents(md)[0];
      return { spec: summary.spec, requested: next ? [asFocus(next)] : [] };
    }
    const parents: MdTask[] = [];
    for (const id of requestedIds) {
      const t = md.find((x) => x.id === id.replace(/\.$/, ''));
      if (!t)
        throw new InputError(
          `--task: no task "${id}" in .agent-os/tasks/${summary.spec}/tasks.md (parent tasks: ${md
            .filter((x) => x.type === 'parent')
            .map((x) => x.id)
            .join(', ')})`,
        );
      const parent = t.type === 'parent' ? t : md.find((x) => x.id === t.parent)!;
      if (!parents.includes(parent)) parents.push(parent);
    }
    return { spec: summary.spec, requested: parents.map(asFocus) };
  }
  if (!requestedIds?.length) {
    const next = summary.tasks.harness?.next;
    return { spec: null, requested: next ? [{ id: next.id, title: next.title }] : [] };
  }
  const store = new StateStore(jpaths.state);
  if (!store.exists()) throw new InputError("--task: there is no harness-tasks.json here; pass --spec NAME to pick a spec's tasks");
  const tasks = store.load().file.tasks;
  const requested: FocusTask[] = [];
  for (const id of requestedIds) {
    const t = tasks.find((x) => x.id === id);
    if (!t) throw new InputError(`--task: no task "${id}" in harness-tasks.json`);
    if (!requested.some((r) => r.id === t.id)) requested.push({ id: t.id, title: t.title });
  }
  return { spec: null, requested };
}

/** What a session can work on, for a person to pick from: the next one first. */
export function focusChoices(summary: StartupSummary): FocusTask[] {
  const jpaths = new JournalPaths(new StatePaths(summary.root));
  if (summary.spec) return unfinishedParents(readTasksMd(jpaths, summary.spec).tasks).map(asFocus);
  const store = new StateStore(jpaths.state);
  if (!store.exists()) return [];
  const tasks = store.load().file.tasks;
  const eligible = eligibleTasks(tasks);
  const rest = tasks.filter((t) => t.status !== 'completed' && !eligible.includes(t));
  return [...eligible, ...rest].map((t) => ({ id: t.id, title: t.title }));
}

function asFocus(t: MdTask): FocusTask {
  return { id: t.id, title: t.description };
}

export interface SessionStart {
  entry: JournalEntry;
  /** Spec mode: the subtasks now in harness-tasks.json. */
  imported?: ImportResult;
}

/** Confirmation: session_started in the journal; for a spec, its chosen parents' subtasks imported. */
export async function confirmSession(summary: StartupSummary, tasks: readonly FocusTask[]): Promise<SessionStart> {
  const command = 'launchpad start';
  const paths = new StatePaths(summary.root);
  const jpaths = new JournalPaths(paths);
  let imported: ImportResult | undefined;
  if (summary.spec) {
    const store = new StateStore(paths, command);
    if (!store.exists()) await initStateFiles(paths);
    imported = await importSpecTasks(
      store,
      summary.spec,
      readTasksMd(jpaths, summary.spec).tasks,
      tasks.map((t) => t.id),
    );
  }
  const health = summary.health;
  const entry = await new Journal(jpaths, command).append({
    type: 'session_started',
    spec: summary.spec ?? 'harness',
    focus_task: tasks.map((t) => t.id).join(', '),
    branch: summary.git.branch ?? undefined,
    context: contextLine(summary),
    environment:
      health.status === 'skipped'
        ? undefined
        : `${health.source}: ${health.status.toUpperCase()}${health.detail ? ` (${health.detail})` : ''}`,
  });
  return { entry, ...(imported ? { imported } : {}) };
}

function contextLine(s: StartupSummary): string {
  const parts: string[] = [];
  if (s.progress.accomplishments.length) parts.push(`last done: ${s.progress.accomplishments.at(-1)}`);
  if (s.progress.unresolved_blockers.length) parts.push(`${s.progress.unresolved_blockers.length} unresolved blocker(s)`);
  const p = s.tasks.spec ?? s.tasks.harness;
  if (p) parts.push(`${p.completed}/${p.total} tasks completed (${p.percent}%)`);
  return parts.join('; ') || 'first session';
}
