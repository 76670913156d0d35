// Launchpad in "Tasks: Run Task" (type `launchpad`): what a person would run from there, and bind
// to a key or name in tasks.json.
//   { "type": "launchpad", "action": "run" }                          Launchpad: Run Tasks
//   { "type": "launchpad", "action": "validate", "taskId": "task-003" } validate task-003 · title
// "run" is the same run as the command (this window's run, its checks and messages), shown in a
// terminal of its own that prints the progress log lines and ends with the run's exit code;
// closing it stops the run. "validate" runs one task's validation command in the repository as
// it is now (the folder of harness-tasks.json), as a run does in the task's worktree (/bin/sh,
// the task's time limit): whether the check passes here, without an agent. One per task that
// has a command.
// The run's own per-task terminals are tasks of this type too (`taskId` without `action`):
// started by the run only, never listed here.
import * as vscode from 'vscode';

import { runProcess } from '../../core/process/runProcess';
import { DEFAULT_VALIDATION_TIMEOUT_S } from '../../core/taskFile/schema';
import { COMMANDS, TASK_TYPE } from '../contributions';
import type { StateModel, TaskEntry } from '../model/stateModel';
import { requireTrust } from '../trust';
import type { ActiveRun, RunManager } from './runManager';
import { TaskPseudoterminal, toTerminal } from './taskPseudoterminal';

export interface LaunchpadTaskDefinition extends vscode.TaskDefinition {
  type: typeof TASK_TYPE;
  action?: 'run' | 'validate';
  taskId?: string;
}

const SOURCE = 'Launchpad';
const MIN_OPEN_MS = 700;

export function registerTaskProvider(model: StateModel, runs: RunManager): vscode.Disposable {
  return vscode.tasks.registerTaskProvider(TASK_TYPE, {
    async provideTasks() {
      // Tasks run processes: VS Code offers none in Restricted Mode, and Launchpad lists none there.
      if (!vscode.workspace.isTrusted) return [];
      const s = await model.whenLoaded();
      const scope = scopeOf(model);
      const validations = s.tasks
        .filter((t) => t.validation_command)
        .map((t) => validateTask({ type: TASK_TYPE, action: 'validate', taskId: t.id }, scope, model, t));
      return [runTask({ type: TASK_TYPE, action: 'run' }, scope, runs), ...validations];
    },
    resolveTask(task) {
      // A tasks.json entry: the same execution as the listed task, under the entry's definition.
      if (!vscode.workspace.isTrusted) return undefined;
      const definition = task.definition as LaunchpadTaskDefinition;
      const scope = task.scope ?? scopeOf(model);
      if (definition.action === 'run') return runTask(definition, scope, runs);
      const entry = definition.taskId ? model.snapshot?.byId.get(definition.taskId) : undefined;
      if (definition.action === 'validate' && entry?.validation_command) return validateTask(definition, scope, model, entry);
      return undefined;
    },
  });
}

type Scope = vscode.WorkspaceFolder | vscode.TaskScope.Workspace | vscode.TaskScope.Global;

function scopeOf(model: StateModel): vscode.WorkspaceFolder | vscode.TaskScope.Workspace {
  const root = model.stateRoot()?.root;
  return (root && vscode.workspace.getWorkspaceFolder(vscode.Uri.file(root))) || vscode.TaskScope.Workspace;
}

/** The label a task's validation has in "Run Task": `validate task-003 · Parse front matter`. */
function validateLabel(t: { id: string; title: string }): string {
  return `validate ${t.id} · ${t.title}`;
}

function validateTask(definition: LaunchpadTaskDefinition, scope: Scope, model: StateModel, t: TaskEntry): vscode.Task {
  const root = model.stateRoot()?.root;
  const command = t.validation_command!;
  const timeoutS = t.task.validation?.timeout_seconds ?? DEFAULT_VALIDATION_TIMEOUT_S;
  const execution = new vscode.CustomExecution(async () => validationTerminal(t.id, command, root ?? process.cwd(), timeoutS));
  // An explicit empty list of problem matchers: VS Code then does not ask which to attach.
  const task = new vscode.Task(definition, scope, validateLabel(t), SOURCE, execution, []);
  task.detail = `${command}  (in ${root ?? 'the workspace'})`;
  task.group = vscode.TaskGroup.Test;
  return task;
}

/**
 * The validation as a run starts it (runProcess: /bin/sh, its own process group, the task's
 * time limit), shown live; closing the terminal ends it. Exits with the command's code (124
 * after the time limit).
 */
function validationTerminal(taskId: string, command: string, cwd: string, timeoutS: number): vscode.Pseudoterminal {
  const abort = new AbortController();
  const pty = new TaskPseudoterminal(() => abort.abort());
  if (!requireTrust('Validate')) {
    pty.write('Not run: this workspace is not trusted (Restricted Mode).\n');
    pty.end(1);
    return pty;
  }
  pty.write(`$ ${command}\n`);
  void runProcess({
    command,
    cwd,
    env: { ...process.env, LAUNCHPAD_TASK_ID: taskId, LAUNCHPAD_WORKTREE: cwd },
    timeoutMs: timeoutS * 1000,
    signal: abort.signal,
    captureBytes: 1024,
    onOutput: (text) => pty.write(text),
  }).then((r) => {
    const how = r.spawnError
      ? `could not start: ${r.spawnError}`
      : r.timedOut
        ? `timed out after ${timeoutS}s`
        : r.code !== null
          ? `exited ${r.code}`
          : `ended by ${r.signal}`;
    pty.write(`\x1b[2m[validation ${how}]\x1b[0m\n`);
    pty.end(r.timedOut ? 124 : (r.code ?? 1));
  });
  return pty;
}

function runTask(definition: LaunchpadTaskDefinition, scope: Scope, runs: RunManager): vscode.Task {
  const execution = new vscode.CustomExecution(async () => runTerminal(runs));
  const task = new vscode.Task(definition, scope, 'Run', SOURCE, execution, []);
  task.detail = 'Run the agents on the task list (the same run as "Launchpad: Run Tasks"); closing the terminal stops it';
  task.presentationOptions = { reveal: vscode.TaskRevealKind.Always, panel: vscode.TaskPanelKind.Dedicated, clear: true, echo: false };
  return task;
}

/** Shows this window's run: starts one (as the command does) unless one is going, prints its log lines, ends with its exit code. */
function runTerminal(runs: RunManager): vscode.Pseudoterminal {
  const write = new vscode.EventEmitter<string>();
  const close = new vscode.EventEmitter<number>();
  let lines: vscode.Disposable | undefined;
  let run: ActiveRun | undefined;
  let openedAt = 0;
  let ended = false;
  const end = (code: number, text: string) => {
    if (ended) return;
    ended = true;
    lines?.dispose();
    write.fire(toTerminal(`${text}\n`));
    // VS Code calls a terminal that ends within its first half second "failed to launch".
    setTimeout(() => close.fire(code), Math.max(0, MIN_OPEN_MS - (Date.now() - openedAt)));
  };
  return {
    onDidWrite: write.event,
    onDidClose: close.event,
    async open() {
      openedAt = Date.now();
      lines = runs.onLogLine((line) => write.fire(toTerminal(`${line}\n`)));
      run = runs.active ?? (await vscode.commands.executeCommand<ActiveRun | undefined>(COMMANDS.run));
      if (!run) return end(2, 'Launchpad did not start a run: its message says why.');
      write.fire(toTerminal(`Launchpad run in ${run.paths.root}\n`));
      run.done.then(
        (outcome) => end(outcome.exitCode, `\n${outcome.message}`),
        (err: unknown) => end(2, `\nThe run failed: ${err instanceof Error ? err.message : String(err)}`),
      );
    },
    close() {
      // Closed or terminated by a person while the run goes: stop it (agents end; their tasks
      // stay in progress for the next run).
      if (!ended && run && runs.active === run) void runs.stop();
      ended = true;
      lines?.dispose();
      write.dispose();
      close.dispose();
    },
  };
}
