// `run --spec`: a spec's subtasks become Launchpad tasks in harness-tasks.json (an upsert in one
// state-store transaction), and the controller then runs them as any other task.
//
// - Id: `spec-<spec>-<subtask id>` (e.g. spec-auth-1.2), the spec part made to fit the task id rule.
// - Dependencies: a subtask's `- depends:` line when it has one; otherwise every subtask of the
//   previous parent task that has subtasks (parent N+1 waits for all of parent N; subtasks of one
//   parent do not wait for each other).
// - Validation: the subtask's `- validate:` line, else its parent's, else
//   session_config.default_validation_command; without any, the task is imported but never
//   started (as any task without a validation command).
// - Scope: only the parents asked for are imported; tasks of the spec's other parents that have
//   not started (pending or failed) are taken out of harness-tasks.json again, so a run works on
//   the chosen parents only. A ticked box is a completed task; an emptied box reopens it.
import { isValidTaskId } from '../ids';
import { InputError } from '../inputError';
import type { Task, TaskFile } from '../taskFile/schema';
import type { StateStore } from '../taskFile/store';
import { markDoneByHand, reopenTask } from '../tasks/transitions';
import { type MdTask, subtasksOf } from './tasksMd';

/** The field of a harness-tasks.json task that links it to its spec subtask. */
export const SPEC_TASK_FIELD = 'spec_task';

export interface SpecTaskRef {
  spec: string;
  id: string;
}

export function specTaskRef(task: Task | undefined): SpecTaskRef | undefined {
  const ref = (task as Record<string, unknown> | undefined)?.[SPEC_TASK_FIELD] as Partial<SpecTaskRef> | undefined;
  return ref && typeof ref.spec === 'string' && typeof ref.id === 'string' ? { spec: ref.spec, id: ref.id } : undefined;
}

/** `spec-<spec>-<id>`, the spec part reduced to the task id rule (1-64 of A-Z a-z 0-9 . _ -, no ".."). */
export function specTaskId(spec: string, id: string): string {
  const suffix = `-${id}`;
  let name = spec.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/\.{2,}/g, '.');
  name = name.slice(0, 64 - 'spec-'.length - suffix.length).replace(/[.-]+$/, '');
  const taskId = `spec-${name}${suffix}`;
  if (!isValidTaskId(taskId)) throw new InputError(`spec "${spec}", task ${id}: cannot make a valid task id of it (got "${taskId}")`);
  return taskId;
}

/** Parent tasks with work left: a subtask not ticked (or, without subtasks, the parent's own box). */
export function unfinishedParents(md: readonly MdTask[]): MdTask[] {
  return md.filter(
    (p) => p.type === 'parent' && (subtasksOf(md, p.id).some((s) => !s.checked) || (!subtasksOf(md, p.id).length && !p.checked)),
  );
}

export interface ImportResult {
  /** Task ids (in harness-tasks.json) of the parents in scope, in tasks.md order. */
  imported: string[];
  /** Task ids (in harness-tasks.json) taken out (out of scope, or no longer in tasks.md). */
  removed: string[];
  /** Subtasks in scope with no validation command anywhere. */
  withoutValidation: string[];
}

export function importSpecTasks(store: StateStore, spec: string, md: readonly MdTask[], parents: readonly string[]): Promise<ImportResult> {
  const parentTasks = md.filter((t) => t.type === 'parent');
  for (const p of parents) {
    if (!parentTasks.some((t) => t.id === p)) {
      throw new InputError(
        `--task: no parent task "${p}" in the tasks.md of spec "${spec}" (parent tasks: ${parentTasks.map((t) => t.id).join(', ') || 'none'})`,
      );
    }
  }
  const inScope = new Set(parents);
  const byMdId = new Map(md.map((t) => [t.id, t]));
  const defaultDeps = new Map<string, string[]>();
  let previous: MdTask[] = [];
  for (const p of parentTasks) {
    const subs = subtasksOf(md, p.id);
    for (const s of subs)
      defaultDeps.set(
        s.id,
        previous.map((x) => x.id),
      );
    if (subs.length) previous = subs;
  }
  const scoped = md.filter((t) => t.type === 'subtask' && inScope.has(t.parent!));

  return store.transact((file) => {
    const byId = new Map(file.tasks.map((t) => [t.id, t]));
    const fallback = defaultValidation(file);
    const result: ImportResult = { imported: [], removed: [], withoutValidation: [] };
    const planned = scoped.map((sub) => {
      const deps: string[] = [];
      for (const dep of sub.depends ?? defaultDeps.get(sub.id) ?? []) {
        const target = byMdId.get(dep)!;
        const depId = specTaskId(spec, dep);
        if (inScope.has(target.parent!) || byId.get(depId)?.status === 'completed') deps.push(depId);
        else if (!target.checked) {
          throw new InputError(
            `spec "${spec}": task ${sub.id} depends on ${dep}, which is not done and not in this session's scope; include parent task ${target.parent} or finish it first`,
          );
        }
      }
      const parent = byMdId.get(sub.parent!)!;
      return { sub, parent, deps, validate: sub.validate ?? parent.validate ?? fallback };
    });

    const keep = new Set(planned.map((p) => specTaskId(spec, p.sub.id)));
    const gone = file.tasks.filter((t) => {
      const ref = specTaskRef(t);
      return ref?.spec === spec && !keep.has(t.id) && (t.status === 'pending' || t.status === 'failed');
    });
    if (gone.length) {
      const ids = new Set(gone.map((t) => t.id));
      file.tasks = file.tasks.filter((t) => !ids.has(t.id));
      result.removed.push(...ids);
    }

    for (const { sub, parent, deps, validate } of planned) {
      const id = specTaskId(spec, sub.id);
      const context = [
        `Subtask ${sub.id} of spec "${spec}": ${sub.description}`,
        `Part of parent task ${parent.id}: ${parent.description}`,
        `The spec is in .agent-os/specs/${spec}/ and its task list in .agent-os/tasks/${spec}/tasks.md; Launchpad ticks the box when this task is merged (leave that file alone).`,
      ].join('\n');
      const task = byId.get(id) ?? newTask(file, id);
      task.title = sub.description;
      task.context = context;
      task.depends_on = deps;
      if (sub.files ?? parent.files) task.files_hint = sub.files ?? parent.files ?? [];
      task.validation = { ...task.validation, command: validate ?? null };
      (task as Record<string, unknown>)[SPEC_TASK_FIELD] = { spec, id: sub.id };
      // A person's tick is the task done; an emptied box, the task to be done again.
      if (sub.checked) markDoneByHand(file, id);
      else reopenTask(file, id);
      result.imported.push(id);
      if (!validate) result.withoutValidation.push(sub.id);
    }
    return result;
  });
}

function newTask(file: TaskFile, id: string): Task {
  const task: Task = {
    id,
    title: id,
    status: 'pending',
    priority: 'P1',
    depends_on: [],
    attempts: 0,
    max_attempts: 3,
    context: null,
    files_hint: [],
    validation: { command: null, timeout_seconds: null },
    on_failure: { cleanup: null },
    error_log: [],
    agent_id: null,
    worktree_branch: null,
    completed_at: null,
  };
  file.tasks.push(task);
  return task;
}

function defaultValidation(file: TaskFile): string | undefined {
  const value = (file.session_config as Record<string, unknown>).default_validation_command;
  return typeof value === 'string' && value.trim() ? value : undefined;
}
