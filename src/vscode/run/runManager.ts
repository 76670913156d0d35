// Owns the controller run of this window (at most one): starts it with the editor's settings
// and the VS Code task terminals, stops it, says when it starts and ends. What a person sees of
// a run (notification, status bar, outcome message) lives in runProgress.ts.
import * as vscode from 'vscode';

import type { RunSettings } from '../../core/controller/runConfig';
import type { RunOutcome } from '../../core/controller/types';
import type { Logger } from '../../core/logger';
import type { ExhaustedTask } from '../../core/runNotices';
import type { StatePaths } from '../../core/statePaths';
import { CONTEXT_KEYS } from '../contributions';
import { type Core, loadCore } from '../coreLoader';
import type { StateModel } from '../model/stateModel';
import { vscodeTaskTerminals } from './taskTerminals';

export interface ActiveRun {
  readonly paths: StatePaths;
  readonly startedAt: Date;
  readonly done: Promise<RunOutcome>;
}

export type RunEvent =
  | { kind: 'started'; run: ActiveRun }
  | { kind: 'ended'; run: ActiveRun; outcome?: RunOutcome; error?: unknown }
  /** A task of the run has used all its attempts; `summary` says which, and its last error. */
  | { kind: 'attempts-exhausted'; run: ActiveRun; task: ExhaustedTask; summary: string };

export class RunManager implements vscode.Disposable {
  private readonly events = new vscode.EventEmitter<RunEvent>();
  readonly onDidChange = this.events.event;
  private readonly lines = new vscode.EventEmitter<string>();
  /** Every progress log line the run writes, as it writes it. */
  readonly onLogLine = this.lines.event;
  private current: { run: ActiveRun; controller: InstanceType<Core['Controller']> } | undefined;
  private starting = false;

  constructor(
    readonly model: StateModel,
    readonly logger: Logger,
  ) {}

  get active(): ActiveRun | undefined {
    return this.current?.run;
  }

  /**
   * Starts a run now. The checks a person gets a clear message for come first (commands/run.ts);
   * whatever the core still refuses (lock taken meanwhile, dirty tree) rejects `done`.
   */
  async start(paths: StatePaths, settings: RunSettings): Promise<ActiveRun> {
    if (this.current || this.starting) throw new Error('a run is already going in this window');
    this.starting = true;
    let Controller: Core['Controller'];
    let attachJournal: Core['attachJournal'];
    try {
      ({ Controller, attachJournal } = await loadCore());
    } finally {
      this.starting = false;
    }
    const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(paths.root));
    const controller = new Controller({
      paths,
      settings,
      logger: this.logger,
      onLogLine: (line) => {
        this.logger.info(line);
        this.lines.fire(line);
      },
      terminals: vscodeTaskTerminals({
        logger: this.logger,
        scope: folder ?? vscode.TaskScope.Workspace,
        // The worktree exists by now: the Worktrees view should show it without waiting for a log line.
        onProcessStart: () => this.model.scheduleRefresh(),
      }),
    });
    controller.onDidChangeTask((e) => {
      this.model.scheduleRefresh();
      const run = this.current?.run;
      if (e.kind === 'failed' && run) void this.checkExhausted(run, e.taskId);
    });
    // The journal (.agent-os/progress/) and a spec's task files follow the run, as with the CLI.
    const journal = attachJournal(controller, paths, { logger: this.logger, command: 'launchpad run (VS Code)' });
    const done = journal.track(controller.run());
    void done.then(
      () => journal.dispose(),
      () => journal.dispose(),
    );
    const run: ActiveRun = { paths, startedAt: new Date(), done };
    this.current = { run, controller };
    void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.running, true);
    this.events.fire({ kind: 'started', run });
    done.then(
      (outcome) => this.finish(run, { outcome }),
      (error: unknown) => this.finish(run, { error }),
    );
    return run;
  }

  /** Tells when a task that just failed has no attempt left (read from the task file as written). */
  private async checkExhausted(run: ActiveRun, taskId: string): Promise<void> {
    try {
      const { StateStore, exhaustedTask, describeExhausted } = await loadCore();
      const task = exhaustedTask(new StateStore(run.paths).load().file, taskId);
      if (task) this.events.fire({ kind: 'attempts-exhausted', run, task, summary: describeExhausted(task) });
    } catch (err) {
      this.logger.warn(`could not read ${run.paths.tasks} after ${taskId} failed: ${(err as Error).message}`);
    }
  }

  /** Running agents end; their tasks stay in progress for the next run's recovery. */
  stop(): boolean {
    if (!this.current) return false;
    this.logger.info('stop requested: ending the running agents');
    this.current.controller.stop();
    return true;
  }

  private finish(run: ActiveRun, result: { outcome?: RunOutcome; error?: unknown }): void {
    if (this.current?.run !== run) return;
    this.current = undefined;
    void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.running, false);
    void this.model.refresh();
    this.events.fire({ kind: 'ended', run, ...result });
  }

  dispose(): void {
    // The window is closing: end the agents (their tasks are recovered by the next run).
    this.current?.controller.stop();
    this.events.dispose();
    this.lines.dispose();
  }
}
