// Owns the long run of this window (at most one): the core's runner with nobody to ask at its
// gates — it does all the work it can and stops where a person must decide; the gates are then
// notifications and actions in the Milestones view, and a decision starts the run again. A
// decision made while the run still works elsewhere is applied as soon as it stops.
import * as vscode from 'vscode';

import type { Logger } from '../../core/logger';
import type { LongRunOutcome } from '../../core/milestones/runner';
import { reportEditError } from '../commands/errors';
import { CONTEXT_KEYS } from '../contributions';
import { type Core, loadCore } from '../coreLoader';
import { offer } from '../notify';
import type { MilestonesModel } from './milestonesModel';

export interface ActiveLongRun {
  dir: string;
  done: Promise<LongRunOutcome | undefined>;
}

export class LongRunManager implements vscode.Disposable {
  private current: { run: ActiveLongRun; runner: InstanceType<Core['LongRunner']> } | undefined;
  private readonly pending: Array<() => Promise<unknown>> = [];
  private readonly ended = new vscode.EventEmitter<{ dir: string; outcome?: LongRunOutcome; error?: unknown }>();
  readonly onDidEnd = this.ended.event;
  /** The last outcome (tests read it). */
  lastOutcome: LongRunOutcome | undefined;

  constructor(
    private readonly model: MilestonesModel,
    private readonly logger: Logger,
  ) {}

  get active(): ActiveLongRun | undefined {
    return this.current?.run;
  }

  async start(dir: string): Promise<ActiveLongRun> {
    if (this.current) throw new Error('a long run is already going in this window');
    const { LongRunner } = await loadCore();
    let last = 'starting…';
    const runner = new LongRunner({
      dir,
      logger: this.logger,
      say: (text) => {
        this.logger.info(text);
        last = text.split('\n').find((l) => l.trim()) ?? last;
        this.model.scheduleRefresh();
      },
      onControllerLine: (id, line) => this.logger.info(`${id} | ${line}`),
    });
    const done = runner.run().then(
      (outcome) => this.finish(dir, { outcome }),
      (error: unknown) => this.finish(dir, { error }),
    );
    const run: ActiveLongRun = { dir, done };
    this.current = { run, runner };
    void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.longRunning, true);
    void vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'Launchpad long run' }, async (progress) => {
      const timer = setInterval(() => progress.report({ message: last }), 500);
      try {
        await done;
      } finally {
        clearInterval(timer);
      }
    });
    return run;
  }

  stop(): boolean {
    if (!this.current) return false;
    this.current.runner.stop();
    return true;
  }

  /** Runs `apply` as soon as the run in this window stops (it holds the harness lock until then). */
  afterRun(apply: () => Promise<unknown>): void {
    this.pending.push(apply);
  }

  private async finish(dir: string, result: { outcome?: LongRunOutcome; error?: unknown }): Promise<LongRunOutcome | undefined> {
    this.current = undefined;
    void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.longRunning, false);
    this.lastOutcome = result.outcome;
    await this.model.refresh();
    this.announce(result);
    this.ended.fire({ dir, ...result });
    const queued = this.pending.splice(0);
    for (const apply of queued) await apply();
    return result.outcome;
  }

  private announce({ outcome, error }: { outcome?: LongRunOutcome; error?: unknown }): void {
    if (error) {
      reportEditError('long run', error, this.logger);
      return;
    }
    if (!outcome) return;
    this.logger.info(`long run ended (exit ${outcome.exitCode}, ${outcome.reason}): ${outcome.message}`);
    // A gate announces itself (milestonesModel): exit 4 needs no message of its own.
    if (outcome.exitCode === 0) offer('info', `Launchpad: ${outcome.message}`);
    else if (outcome.exitCode === 5) offer('warning', `Launchpad: ${outcome.message}`);
    else if (outcome.exitCode !== 4) offer('warning', `Launchpad: long run stopped — ${outcome.message.split('\n').join(' ')}`);
  }

  dispose(): void {
    this.current?.runner.stop();
    this.ended.dispose();
  }
}
