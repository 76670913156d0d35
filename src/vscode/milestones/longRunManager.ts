// The long run this window started (at most one): `launchpad milestones run` with nobody to ask
// at its gates, a process of its own started with the editor's node (detached, as a run is: it
// outlives the window). It does all the work it can and stops where a person must decide; the
// gates are then notifications and actions in the Milestones view, and a decision starts it
// again. A decision made while it still works is applied as soon as it stops.
import type { ChildProcess } from 'node:child_process';

import * as vscode from 'vscode';

import type { Logger } from '../../core/logger';
import type { LongRunOutcome } from '../../core/milestones/runner';
import { reportEditError } from '../commands/errors';
import { CONTEXT_KEYS } from '../contributions';
import { offer } from '../notify';
import { startCli } from '../run/cli';
import type { MilestonesModel } from './milestonesModel';

/** What the window learns of a long run's end: its exit code and message (`milestones run --json`). */
export type LongRunEnd = Pick<LongRunOutcome, 'exitCode' | 'reason' | 'message'>;

export interface ActiveLongRun {
  dir: string;
  done: Promise<LongRunEnd | undefined>;
}

export class LongRunManager implements vscode.Disposable {
  private current: { run: ActiveLongRun; child: ChildProcess } | undefined;
  private readonly pending: Array<() => Promise<unknown>> = [];
  private readonly ended = new vscode.EventEmitter<{ dir: string; outcome?: LongRunEnd; error?: unknown }>();
  readonly onDidEnd = this.ended.event;
  /** The last outcome (tests read it). */
  lastOutcome: LongRunEnd | undefined;

  constructor(
    private readonly model: MilestonesModel,
    private readonly logger: Logger,
  ) {}

  get active(): ActiveLongRun | undefined {
    return this.current?.run;
  }

  async start(dir: string): Promise<ActiveLongRun> {
    if (this.current) throw new Error('a long run is already going in this window');
    const child = startCli(['milestones', 'run', dir, '--json'], { cwd: dir, detached: true });
    child.unref();
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => this.logger.info(d.toString().trimEnd()));
    const exited = new Promise<{ code: number | null; error?: Error }>((resolve) => {
      child.on('error', (error) => resolve({ code: null, error }));
      child.on('close', (code) => resolve({ code }));
    });
    const done = exited.then(({ code, error }) => this.finish(dir, error ? { error } : endOf(stdout, code)));
    const run: ActiveLongRun = { dir, done };
    this.current = { run, child };
    void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.longRunning, true);
    // The view follows the harness files; a refresh now and then shows the phases as they change.
    const refresh = setInterval(() => this.model.scheduleRefresh(), 1000);
    void vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'Launchpad long run' }, async (progress) => {
      progress.report({ message: 'running (the Milestones view shows where)' });
      try {
        await done;
      } finally {
        clearInterval(refresh);
      }
    });
    return run;
  }

  /** Asks the long run to stop as Ctrl-C does: its agents end, each milestone resumes where it was. */
  stop(): boolean {
    if (!this.current) return false;
    this.current.child.kill('SIGINT');
    return true;
  }

  /** Runs `apply` as soon as the run in this window stops (it holds the harness lock until then). */
  afterRun(apply: () => Promise<unknown>): void {
    this.pending.push(apply);
  }

  private async finish(dir: string, result: { outcome?: LongRunEnd; error?: unknown }): Promise<LongRunEnd | undefined> {
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

  private announce({ outcome, error }: { outcome?: LongRunEnd; error?: unknown }): void {
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
    // The long run goes on without the window: a process of its own.
    this.ended.dispose();
  }
}

/** The outcome `milestones run --json` printed, or its error. */
function endOf(stdout: string, code: number | null): { outcome?: LongRunEnd; error?: unknown } {
  try {
    const out = JSON.parse(stdout) as { exit_code?: number; reason?: LongRunEnd['reason']; message?: string; error?: { message?: string } };
    if (out.error) return { error: new Error(out.error.message ?? `launchpad milestones run exited with ${code}`) };
    if (typeof out.exit_code === 'number')
      return { outcome: { exitCode: out.exit_code as LongRunEnd['exitCode'], reason: out.reason ?? 'error', message: out.message ?? '' } };
  } catch {
    // Not its JSON: it was killed.
  }
  return { error: new Error(`launchpad milestones run exited with ${code ?? 'a signal'} without its outcome`) };
}
