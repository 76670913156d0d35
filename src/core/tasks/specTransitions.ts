// The transitions of a spec's own tasks.json (.agent-os/tasks/<spec>/), beside those of
// harness-tasks.json (transitions.ts): every change of a task's status lives in core/tasks/.
// The file's format is core/specTasks/tasksJson.ts; core/specTasks/specFiles.ts applies these
// under the spec's lock.
import type { SpecTaskEntry, SpecTasksDoc } from '../specTasks/tasksJson';

/** What a run reports about a spec's subtask (the journal passes it on from the controller's events). */
export type SpecResult =
  | { kind: 'dispatched' }
  | { kind: 'completed'; completedAt: string; durationMinutes: number; notes?: string }
  | { kind: 'failed'; permanent: boolean; note: string | undefined };

/**
 * A spec's tasks.json entry changes status here only: dispatched → in_progress (one more
 * attempt), completed → pass (when, how long, notes), failed → fail, or blocked when no attempt
 * is left. An entry the file does not have yet is added.
 */
export function applySpecResult(doc: SpecTasksDoc, id: string, result: SpecResult): void {
  let entry = doc.tasks.find((t) => t.id === id);
  if (!entry) {
    entry = { id, type: 'subtask', description: '', status: 'pending' } as SpecTaskEntry;
    doc.tasks.push(entry);
  }
  if (result.kind === 'dispatched') {
    entry.status = 'in_progress';
    entry.attempts = (entry.attempts ?? 0) + 1;
  } else if (result.kind === 'completed') {
    entry.status = 'pass';
    entry.completed_at = result.completedAt;
    entry.duration_minutes = result.durationMinutes;
    if (result.notes) entry.notes = result.notes;
  } else {
    entry.status = result.permanent ? 'blocked' : 'fail';
    entry.notes = result.note ?? entry.notes ?? null;
  }
}
