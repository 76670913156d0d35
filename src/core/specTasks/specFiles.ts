// A spec's two files on disk: reading them, the sync (tasks.md → tasks.json, merged), and a
// run's results flowing back (a ticked box in tasks.md; status, attempts, completion time,
// duration and notes in tasks.json). Every write is under the journal lock; a file that cannot
// be parsed is never overwritten.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

import { replaceFile } from '../atomicFile';
import { withJournalLock } from '../journal/atomicFile';
import { checkSpecName, type JournalPaths } from '../journal/journalPaths';
import { logTimestamp } from '../log/logLine';
import { applySpecResult, type SpecResult } from '../tasks/specTransitions';
import { buildTasksJson, parseTasksJson, serializeTasksJson, type SpecTasksDoc } from './tasksJson';
import { type MdTask, parseTasksMd, SpecTasksError, subtasksOf, withBox } from './tasksMd';

export interface SpecState {
  spec: string;
  md: MdTask[];
  doc: SpecTasksDoc;
  /** The sync wrote tasks.json (it was missing or out of date). */
  changed: boolean;
}

export function readTasksMd(paths: JournalPaths, spec: string): { bytes: Buffer; tasks: MdTask[] } {
  checkSpecName(spec);
  const file = paths.specTasksMd(spec);
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw new SpecTasksError(`${rel(paths, file)}: not found; a spec's task list is .agent-os/tasks/<spec>/tasks.md`);
    throw err;
  }
  return { bytes, tasks: parseTasksMd(bytes, rel(paths, file)) };
}

export function readTasksJson(paths: JournalPaths, spec: string): SpecTasksDoc | undefined {
  const file = paths.specTasksJson(spec);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return parseTasksJson(text, rel(paths, file));
}

/** Sync: tasks.md parsed, merged into tasks.json, written when it changed. */
export function syncSpec(paths: JournalPaths, spec: string, command = 'launchpad'): Promise<SpecState> {
  return withJournalLock(paths, command, () => syncLocked(paths, spec));
}

function syncLocked(paths: JournalPaths, spec: string, edit?: (doc: SpecTasksDoc) => void): SpecState {
  const { tasks: md } = readTasksMd(paths, spec);
  const existing = readTasksJson(paths, spec);
  const now = logTimestamp();
  const base = existing ? structuredClone(existing) : undefined;
  if (base && edit) edit(base);
  let doc = buildTasksJson(spec, paths.specPath(spec), md, base, now);
  if (!base && edit) {
    edit(doc);
    doc = buildTasksJson(spec, paths.specPath(spec), md, doc, now);
  }
  // `updated` moves only when something else changed (a result merged in counts).
  const changed = !existing || serializeTasksJson({ ...doc, updated: '' }) !== serializeTasksJson({ ...existing, updated: '' });
  if (changed) {
    doc.updated = now;
    replaceFile(paths.specTasksJson(spec), serializeTasksJson(doc));
  }
  return { spec, md, doc, changed };
}

/**
 * A run's result for subtask `id`: on completion its box is ticked (and its parent's, once every
 * subtask of the parent is ticked), then tasks.json is synced with the result merged in.
 * Returns the ids whose boxes were ticked.
 */
export function recordSpecResult(
  paths: JournalPaths,
  spec: string,
  id: string,
  result: SpecResult,
  command = 'launchpad',
): Promise<string[]> {
  return withJournalLock(paths, command, () => {
    const ticked: string[] = [];
    if (result.kind === 'completed') {
      const read = readTasksMd(paths, spec);
      const tasks = read.tasks;
      let bytes = read.bytes;
      const task = tasks.find((t) => t.id === id && t.type === 'subtask');
      if (!task) throw new SpecTasksError(`${rel(paths, paths.specTasksMd(spec))}: no subtask ${id} (was it removed while it ran?)`);
      if (!task.checked) {
        bytes = withBox(bytes, task, true);
        task.checked = true;
        ticked.push(id);
      }
      const parent = tasks.find((t) => t.id === task.parent);
      if (parent && !parent.checked && subtasksOf(tasks, parent.id).every((s) => s.checked)) {
        bytes = withBox(bytes, parent, true);
        ticked.push(parent.id);
      }
      if (ticked.length) replaceFile(paths.specTasksMd(spec), bytes);
    }
    syncLocked(paths, spec, (doc) => applySpecResult(doc, id, result));
    return ticked;
  });
}

function rel(paths: JournalPaths, file: string): string {
  return relative(paths.root, file);
}
