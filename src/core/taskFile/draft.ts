// A transaction's draft that shares the unchanged tasks with the store's snapshot: the top-level
// fields are the draft's own copies and so is the tasks array, but each task in it is the
// snapshot's own object, deeply frozen, until something writes it. A writer first swaps the task
// for a private copy (writableTask); only those copies are compared, checked and serialized
// again, and a transaction on a large file copies what it changes instead of the whole parse. A
// write that skips writableTask throws (the object is frozen): it can never reach the snapshot.
import type { Task, TaskFile } from './schema';
import { copyJson } from './snapshot';

/**
 * `task` (an element of `file.tasks`) as an object the caller may change: itself when it is not
 * shared (a load()'s copy, a task the transaction made or copied already), else a private copy
 * put in its place in `file.tasks`. Read the task again through the returned object: the shared
 * one still shows the state before.
 */
export function writableTask(file: TaskFile, task: Task): Task {
  if (!Object.isFrozen(task)) return task;
  const i = file.tasks.indexOf(task);
  if (i < 0) throw new Error(`task ${task.id} is not in this task file`);
  const copy = copyJson(task);
  file.tasks[i] = copy;
  return copy;
}
