// The core's TerminalFactory in VS Code: one VS Code task (type `launchpad`, a CustomExecution
// with a Pseudoterminal) per task the controller opens, named after it, showing the agent's,
// validation's and cleanup's output live with the controller's messages between. The processes
// still run through runProcess (process groups, timeouts); the terminal displays and relays. A
// person closing the terminal ends that task's processes; the core records the failure.
import * as vscode from 'vscode';

import type { ProcessKind, TaskTerminal, TerminalFactory } from '../../core/controller/types';
import type { Logger } from '../../core/logger';
import { runProcess } from '../../core/process/runProcess';
import { TASK_TYPE } from '../contributions';
import type { LaunchpadTaskDefinition } from './taskProvider';
import { TaskPseudoterminal } from './taskPseudoterminal';

const EXIT_CODES = { completed: 0, failed: 1, interrupted: 130 } as const;
/** How long after its end a task's VS Code task may take to report it before the next one starts anyway. */
const ORPHAN_END_MS = 15_000;

export interface TaskTerminalsOptions {
  logger: Logger;
  /** Where the tasks belong (the workspace folder holding the state root). */
  scope: vscode.WorkspaceFolder | vscode.TaskScope.Workspace;
  /** A process is about to start in a task's terminal (the worktree exists by then). */
  onProcessStart?: (taskId: string, kind: ProcessKind) => void;
}

export function vscodeTaskTerminals(opts: TaskTerminalsOptions): TerminalFactory {
  // VS Code will not start a task while the same one (same definition) is still active: it asks
  // the person instead. A retry in the same run waits for its previous terminal's task to end.
  const previousEnd = new Map<string, Promise<void>>();
  return {
    open(task, cwd) {
      const userAbort = new AbortController();
      const pty = new TaskPseudoterminal(() => {
        opts.logger.info(`${task.id}: terminal closed by the user; ending its processes`);
        userAbort.abort();
      });
      const before = previousEnd.get(task.id) ?? Promise.resolve();
      const ended = before.then(() => startVsCodeTask(task, cwd, pty, opts));
      previousEnd.set(task.id, ended);
      void ended.finally(() => previousEnd.get(task.id) === ended && previousEnd.delete(task.id));
      return taskTerminal(task.id, pty, userAbort.signal, opts);
    },
  };
}

function taskTerminal(taskId: string, pty: TaskPseudoterminal, userSignal: AbortSignal, opts: TaskTerminalsOptions): TaskTerminal {
  return {
    async run(kind, spec) {
      opts.onProcessStart?.(taskId, kind);
      const signal = spec.signal ? AbortSignal.any([spec.signal, userSignal]) : userSignal;
      const result = await runProcess({
        ...spec,
        signal,
        onOutput: (text) => {
          spec.onOutput?.(text);
          pty.write(text);
        },
      });
      pty.write(`\x1b[2m[${kind} ${describeExit(result)} after ${(result.durationMs / 1000).toFixed(1)}s]\x1b[0m\n`);
      return result;
    },
    write: (text) => pty.write(text),
    close(outcome) {
      pty.end(pty.userClosed ? EXIT_CODES.interrupted : EXIT_CODES[outcome]);
    },
  };
}

/** Starts the VS Code task showing `pty`; resolves when that task has ended (or could not start). */
function startVsCodeTask(
  task: { id: string; title: string },
  cwd: string,
  pty: TaskPseudoterminal,
  opts: TaskTerminalsOptions,
): Promise<void> {
  const definition: LaunchpadTaskDefinition = { type: TASK_TYPE, taskId: task.id };
  let handedOut = false;
  const execution = new vscode.CustomExecution(async () => {
    // Run again from the Tasks UI: this terminal only shows a controller's task; say so.
    if (handedOut) return rerunNotice(task.id);
    handedOut = true;
    return pty;
  });
  const name = taskTerminalName(task);
  terminalNames.set(task.id, name);
  const vsTask = new vscode.Task(definition, opts.scope, name, 'Launchpad', execution);
  vsTask.detail = cwd;
  vsTask.presentationOptions = {
    reveal: vscode.TaskRevealKind.Silent,
    panel: vscode.TaskPanelKind.Dedicated,
    focus: false,
    echo: false,
    clear: false,
    showReuseMessage: false,
  };
  return new Promise<void>((resolve) => {
    let started: vscode.TaskExecution | undefined;
    // Ours: the execution VS Code gave back, or (should that arrive after the end) the only
    // active task with this definition, since executions of one task id never overlap.
    const listener = vscode.tasks.onDidEndTask((e) => {
      const d = e.execution.task.definition as LaunchpadTaskDefinition;
      const ours = e.execution === started || (d.type === TASK_TYPE && d.action === undefined && d.taskId === task.id);
      if (!ours) return;
      listener.dispose();
      resolve();
    });
    vscode.tasks.executeTask(vsTask).then(
      (execution) => (started = execution),
      (err: unknown) => {
        // The processes run regardless; only the live view is missing.
        opts.logger.warn(
          `${task.id}: could not open its terminal (${err instanceof Error ? err.message : String(err)}); output goes to the transcript only`,
        );
        listener.dispose();
        resolve();
      },
    );
    // Never hold the next attempt's terminal back for long if VS Code did not report the end.
    void pty.whenEnded.then(() => setTimeout(() => (listener.dispose(), resolve()), ORPHAN_END_MS));
  });
}

/** Longest title shown in a terminal's name; the hover and the Tasks view have the whole. */
const NAME_TITLE_CHARS = 32;

/**
 * `Parse front matter · task-003`. The terminal list beside the panel shows the first seven or
 * so characters of each name: ids share their beginning (`task-0…`), titles seldom do, so the
 * title comes first and the id, which the log and the Tasks view use, after it.
 */
export function taskTerminalName(task: { id: string; title: string }): string {
  const title = task.title.replace(/\s+/g, ' ').trim();
  const short = title.length > NAME_TITLE_CHARS ? `${title.slice(0, NAME_TITLE_CHARS - 1).trimEnd()}…` : title;
  return short ? `${short} · ${task.id}` : task.id;
}

/** The name each task's terminal got when it last opened (the title may change since). */
const terminalNames = new Map<string, string>();

/** The terminal showing a task's latest attempt in this window, if it is still open. */
export function terminalOfTask(taskId: string): vscode.Terminal | undefined {
  const name = terminalNames.get(taskId);
  return name === undefined ? undefined : vscode.window.terminals.findLast((t) => t.name === name);
}

function describeExit(r: { code: number | null; signal: string | null; timedOut: boolean; aborted: boolean; spawnError?: string }): string {
  if (r.spawnError) return `could not start: ${r.spawnError}`;
  if (r.timedOut) return 'timed out';
  if (r.aborted) return 'ended';
  return r.code !== null ? `exited ${r.code}` : `ended by ${r.signal}`;
}

function rerunNotice(taskId: string): vscode.Pseudoterminal {
  const write = new vscode.EventEmitter<string>();
  const close = new vscode.EventEmitter<number>();
  return {
    onDidWrite: write.event,
    onDidClose: close.event,
    open() {
      write.fire(
        `This terminal shows Launchpad's work on ${taskId}; it cannot be run on its own.\r\nUse "Launchpad: Run" or "Launchpad: Retry Task".\r\n`,
      );
      close.fire(0);
    },
    close() {
      write.dispose();
      close.dispose();
    },
  };
}
