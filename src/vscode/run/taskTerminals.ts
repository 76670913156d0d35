// One VS Code task (type `launchpad`, a CustomExecution with a Pseudoterminal) per running attempt
// of the runs this window follows, named after its task. It shows the attempt's transcript from
// its first byte and follows it as the agent writes, whoever started the run and whenever the
// window attached to it (after a reload too), and ends with the attempt. Closing it only stops
// the showing: the agent goes on ("Stop Task" ends it).
import { closeSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

import * as vscode from 'vscode';

import type { Logger } from '../../core/logger';
import { TASK_TYPE } from '../contributions';
import type { LaunchpadTaskDefinition } from './taskProvider';
import { TaskPseudoterminal } from './taskPseudoterminal';

/** How often a shown transcript is read for what the agent wrote since. */
const FOLLOW_MS = 250;
/** How long after its end a task's VS Code task may take to report it before the next one starts anyway. */
const ORPHAN_END_MS = 15_000;
/** How long an attempt's end waits for its terminal to open, so the transcript is shown whole first. */
const OPEN_WAIT_MS = 10_000;

export interface ShownAttempt {
  taskId: string;
  title: string;
  /** The agent's transcript (absolute path). */
  transcript: string;
  /** Tells this attempt from the task's next one. */
  key: string;
  /** The attempt's worktree or folder, shown as the task's detail. */
  detail: string;
}

interface Shown {
  attempt: ShownAttempt;
  pty: TaskPseudoterminal;
  follower: TranscriptFollower;
  ending?: Promise<void>;
}

/** What each task's last terminal showed is kept up to this many characters (from its start). */
const SHOWN_TEXT_CHARS = 256 * 1024;

export class TaskTerminals implements vscode.Disposable {
  private readonly shown = new Map<string, Shown>();
  // VS Code will not start a task while the same one (same definition) is still active: it asks
  // the person instead. A new attempt of a task waits for its previous terminal's task to end.
  private readonly previousEnd = new Map<string, Promise<void>>();
  /** The text each task's latest terminal showed, from its first character (bounded). */
  private readonly texts = new Map<string, string>();

  constructor(
    private readonly logger: Logger,
    private readonly scope: () => vscode.WorkspaceFolder | vscode.TaskScope.Workspace,
  ) {}

  /** The attempts shown now, by task id. */
  get showing(): ReadonlyMap<string, ShownAttempt> {
    return new Map([...this.shown].map(([id, s]) => [id, s.attempt]));
  }

  /** Shows the attempt in its task's terminal (a new terminal when it is the task's next attempt). */
  show(attempt: ShownAttempt): void {
    const current = this.shown.get(attempt.taskId);
    if (current?.attempt.key === attempt.key) return;
    if (current) this.end(attempt.taskId, 130, 'another attempt of this task started');
    const pty = new TaskPseudoterminal(() => {
      follower.stop();
      this.logger.info(`${attempt.taskId}: terminal closed; its agent goes on ("Launchpad: Stop Task" ends it)`);
    });
    const follower = new TranscriptFollower(attempt.transcript, (text) => pty.write(text));
    void pty.whenOpened.then(() => follower.start());
    this.shown.set(attempt.taskId, { attempt, pty, follower });
    this.texts.set(attempt.taskId, '');
    pty.onDidWrite((text) => {
      const kept = this.texts.get(attempt.taskId) ?? '';
      if (kept.length < SHOWN_TEXT_CHARS) this.texts.set(attempt.taskId, kept + text.slice(0, SHOWN_TEXT_CHARS - kept.length));
    });
    const before = this.previousEnd.get(attempt.taskId) ?? Promise.resolve();
    const ended = before.then(() => this.startVsCodeTask(attempt, pty));
    this.previousEnd.set(attempt.taskId, ended);
    void ended.finally(() => this.previousEnd.get(attempt.taskId) === ended && this.previousEnd.delete(attempt.taskId));
  }

  /** What the task's latest terminal has shown so far (as written to it: `\r\n` line ends). */
  textOf(taskId: string): string | undefined {
    return this.texts.get(taskId);
  }

  /** Shows the task's terminal; one a person closed is opened again (its transcript from the start). */
  reveal(taskId: string): void {
    const s = this.shown.get(taskId);
    if (!s) return;
    if (s.pty.userClosed) {
      this.shown.delete(taskId);
      this.show({ ...s.attempt });
    }
    terminalOfTask(taskId)?.show(true);
  }

  /**
   * The attempt is over: the rest of its transcript, then `note`, then the terminal's task ends
   * with `code` (0 completed, 1 failed, 130 interrupted). Waits for the terminal to open first
   * (briefly), so a quick attempt's whole transcript is shown.
   */
  end(taskId: string, code: number, note: string): void {
    const s = this.shown.get(taskId);
    if (!s || s.ending) return;
    this.shown.delete(taskId);
    const opened = Promise.race([s.pty.whenOpened, new Promise<void>((r) => setTimeout(r, OPEN_WAIT_MS))]);
    s.ending = opened.then(() => {
      s.follower.stop();
      s.pty.write(`\n\x1b[2m[launchpad] ${note}\x1b[0m\n`);
      s.pty.end(code);
    });
  }

  private startVsCodeTask(attempt: ShownAttempt, pty: TaskPseudoterminal): Promise<void> {
    const definition: LaunchpadTaskDefinition = { type: TASK_TYPE, taskId: attempt.taskId };
    let handedOut = false;
    const execution = new vscode.CustomExecution(async () => {
      // Run again from the Tasks UI: this terminal only shows a run's task; say so.
      if (handedOut) return rerunNotice(attempt.taskId);
      handedOut = true;
      return pty;
    });
    const name = taskTerminalName({ id: attempt.taskId, title: attempt.title });
    terminalNames.set(attempt.taskId, name);
    const vsTask = new vscode.Task(definition, this.scope(), name, 'Launchpad', execution);
    vsTask.detail = attempt.detail;
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
      // active task with this definition, since the terminals of one task id never overlap.
      const listener = vscode.tasks.onDidEndTask((e) => {
        const d = e.execution.task.definition as LaunchpadTaskDefinition;
        const ours = e.execution === started || (d.type === TASK_TYPE && d.action === undefined && d.taskId === attempt.taskId);
        if (!ours) return;
        listener.dispose();
        resolve();
      });
      vscode.tasks.executeTask(vsTask).then(
        (execution) => (started = execution),
        (err: unknown) => {
          this.logger.warn(
            `${attempt.taskId}: could not open its terminal (${err instanceof Error ? err.message : String(err)}); its transcript is ${attempt.transcript}`,
          );
          listener.dispose();
          resolve();
        },
      );
      // Never hold the next attempt's terminal back for long if VS Code did not report the end.
      void pty.whenEnded.then(() => setTimeout(() => (listener.dispose(), resolve()), ORPHAN_END_MS));
    });
  }

  dispose(): void {
    for (const s of this.shown.values()) s.follower.stop();
    this.shown.clear();
  }
}

/**
 * A file read from its first byte and then as it grows, each new piece handed on as text (a
 * character cut between two reads is whole again). The file may not exist yet.
 */
export class TranscriptFollower {
  private offset = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly decoder = new StringDecoder('utf8');

  constructor(
    private readonly file: string,
    private readonly onText: (text: string) => void,
  ) {}

  start(): void {
    if (this.timer) return;
    this.readNow();
    this.timer = setInterval(() => this.readNow(), FOLLOW_MS);
  }

  /** Reads what is there now; then no more. */
  stop(): void {
    clearInterval(this.timer);
    this.readNow();
    this.timer = undefined;
  }

  readNow(): void {
    let fd: number;
    try {
      fd = openSync(this.file, 'r');
    } catch {
      return;
    }
    try {
      const buf = Buffer.alloc(64 * 1024);
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, this.offset);
        if (n <= 0) break;
        this.offset += n;
        const text = this.decoder.write(buf.subarray(0, n));
        if (text) this.onText(text);
      }
    } finally {
      closeSync(fd);
    }
  }
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

function rerunNotice(taskId: string): vscode.Pseudoterminal {
  const write = new vscode.EventEmitter<string>();
  const close = new vscode.EventEmitter<number>();
  return {
    onDidWrite: write.event,
    onDidClose: close.event,
    open() {
      write.fire(
        `This terminal shows Launchpad's work on ${taskId}; it cannot be run on its own.\r\nUse "Launchpad: Run Tasks" or "Launchpad: Retry Task".\r\n`,
      );
      close.fire(0);
    },
    close() {
      write.dispose();
      close.dispose();
    },
  };
}
