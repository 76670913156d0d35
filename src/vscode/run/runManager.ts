// The runs this window shows. A run is always a `launchpad run` process: Run starts the bundled
// CLI with the editor's own node, detached in its own session, so a window reload or the editor's
// exit leaves it running. The window attaches to every live run of the state root on this machine
// (its own, one started in a terminal or by another window; concurrent workers too) through the
// run's event stream (docs/events.md): on activation and whenever the lock or the stream changes.
// Nothing here owns a run: Stop asks it to stop as Ctrl-C does, a second Stop ends it at once.
// What a person sees of a run (notification, status bar, outcome message) lives in runProgress.ts.
import { join } from 'node:path';

import * as vscode from 'vscode';

import type { RunSettings } from '../../core/controller/runConfig';
import type { RunOutcome } from '../../core/controller/types';
import { ExpectedError } from '../../core/expectedErrors';
import type { Logger } from '../../core/logger';
import { isSameProcessAlive, processIdentity } from '../../core/processIdentity';
import { liveRuns, type StopAction, stopRun, stopTask, type StopTaskAnswer } from '../../core/runControl';
import {
  type AttemptRecord,
  EventFileReader,
  type RunEventRecord,
  sessionFiles,
  SessionProgress,
  type SessionRecord,
} from '../../core/runEvents/reader';
import type { ExhaustedTask } from '../../core/runNotices';
import type { StatePaths } from '../../core/statePaths';
import { CONTEXT_KEYS } from '../contributions';
import { loadCore } from '../coreLoader';
import type { StateModel } from '../model/stateModel';
import { reviewRound } from '../review/round';
import { startCli } from './cli';
import { TaskTerminals } from './taskTerminals';

export interface ActiveRun {
  readonly paths: StatePaths;
  readonly startedAt: Date;
  /** The run's process, once known. */
  readonly pid: number | undefined;
  /** This window started it. */
  readonly startedHere: boolean;
  /** The run's outcome, from its stream's end; rejects when it could not start or ended without one. */
  readonly done: Promise<RunOutcome>;
}

export type RunEvent =
  | { kind: 'started'; run: ActiveRun }
  | { kind: 'ended'; run: ActiveRun; outcome?: RunOutcome; error?: unknown }
  /** A task of the run has used all its attempts; `summary` says which, and its last error. */
  | { kind: 'attempts-exhausted'; run: ActiveRun; task: ExhaustedTask; summary: string }
  /** A task's agent asked a question: the task awaits an answer. */
  | { kind: 'question'; run: ActiveRun; taskId: string; question: string }
  /** A task passed its validation and awaits a person's review. */
  | { kind: 'review'; run: ActiveRun; taskId: string; round: number };

/** How often the followed streams are read while a run is live (they are also read on every change). */
const FOLLOW_MS = 500;
/** How often the window looks for a run it does not follow yet (besides the lock's and the log's changes). */
const LOOK_MS = 2000;

const ATTEMPT_EXIT: Record<string, number> = { completed: 0, failed: 1, interrupted: 130, question: 0, review: 0 };

/** One run the window follows: its stream read on as it grows, and what it says so far. */
class FollowedRun implements ActiveRun {
  readonly startedAt = new Date();
  readonly progress = new SessionProgress();
  reader: EventFileReader | undefined;
  session: SessionRecord | undefined;
  private settle!: { resolve: (o: RunOutcome) => void; reject: (e: unknown) => void };
  readonly done = new Promise<RunOutcome>((resolve, reject) => (this.settle = { resolve, reject }));
  finished = false;

  constructor(
    readonly paths: StatePaths,
    readonly startedHere: boolean,
    public pid: number | undefined,
    /** A run started here: its process's identity, so a stream of another process with the same pid is never taken for it. */
    readonly identity?: string,
  ) {
    // A rejection nobody awaits is still handled: the ended event reports it.
    this.done.catch(() => undefined);
  }

  finish(result: { outcome: RunOutcome } | { error: unknown }): void {
    if (this.finished) return;
    this.finished = true;
    if ('outcome' in result) this.settle.resolve(result.outcome);
    else this.settle.reject(result.error);
  }
}

export class RunManager implements vscode.Disposable {
  private readonly events = new vscode.EventEmitter<RunEvent>();
  readonly onDidChange = this.events.event;
  private readonly lines = new vscode.EventEmitter<string>();
  /** Every progress log line of the followed runs, as they write it (from the session's start). */
  readonly onLogLine = this.lines.event;
  /** The runs followed, by their stream's file (a run starting here, not yet in a stream, by ''). */
  private readonly runs = new Map<string, FollowedRun>();
  private readonly terminals: TaskTerminals;
  private readonly disposables: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;
  private lastLook = 0;
  private running = false;

  constructor(
    readonly model: StateModel,
    readonly logger: Logger,
  ) {
    this.terminals = new TaskTerminals(logger, () => {
      const root = model.stateRoot()?.root;
      return (root && vscode.workspace.getWorkspaceFolder(vscode.Uri.file(root))) || vscode.TaskScope.Workspace;
    });
    // The lock, the log or the task file changed: a run may have started or ended, or moved on.
    let holder: string | undefined;
    this.disposables.push(
      this.terminals,
      model.onDidChange((s) => {
        const now = s.activeSession ? `${s.activeSession.pid} ${s.activeSession.acquired_at}` : undefined;
        const lockChanged = now !== holder;
        holder = now;
        this.sync(lockChanged);
      }),
    );
    this.timer = setInterval(() => this.sync(), FOLLOW_MS);
  }

  /** The run shown: the one this window started, else the lock's holder, else a concurrent worker. */
  get active(): ActiveRun | undefined {
    const live = [...this.runs.values()].filter((r) => !r.finished);
    return live.find((r) => r.startedHere) ?? live[0];
  }

  /** The live run this window started, if any. */
  get own(): ActiveRun | undefined {
    return this.all.find((r) => r.startedHere);
  }

  /** Every live run followed (more than one only with concurrent workers). */
  get all(): readonly ActiveRun[] {
    return [...this.runs.values()].filter((r) => !r.finished);
  }

  /**
   * Starts a run: `launchpad run` with this window's settings, detached. The checks a person gets
   * a clear message for come first (commands/runCommands.ts); whatever the run still refuses
   * (the lock taken meanwhile, a dirty tree) rejects `done` with its message.
   */
  async start(paths: StatePaths, settings: RunSettings): Promise<ActiveRun> {
    if (this.runs.has('')) throw new Error('a run is being started in this window');
    const args = ['run', '--json', '--dir', paths.root];
    if (settings.maxParallel !== undefined) args.push('--max-parallel', String(settings.maxParallel));
    if (settings.worktreeDir !== undefined) args.push('--worktree-dir', settings.worktreeDir);
    const env: NodeJS.ProcessEnv = { ...(settings.env ?? process.env) };
    if (settings.editorAgent !== undefined) {
      env.LAUNCHPAD_EDITOR_AGENT = settings.editorAgent;
      if (settings.editorAgentSource) env.LAUNCHPAD_EDITOR_AGENT_SOURCE = settings.editorAgentSource;
    }
    // Detached: it outlives this window. Its output comes here while the window lives (a closed
    // pipe is nothing to the CLI).
    const child = startCli(args, { cwd: paths.root, env, detached: true });
    child.unref();
    const run = new FollowedRun(paths, true, child.pid, child.pid ? processIdentity(child.pid) : undefined);
    this.runs.set('', run);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (stderr.length > 64 * 1024) stderr = stderr.slice(-32 * 1024);
    });
    child.on('error', (err) => this.startFailed(run, err));
    child.on('close', (code) => {
      // Its stream has the outcome; read to the end first. Without one, it could not start.
      this.sync(true);
      if (!run.finished) this.startFailed(run, new ExpectedError(startError(stdout, stderr, code)));
    });
    this.setRunning();
    this.events.fire({ kind: 'started', run });
    this.logger.info(`started launchpad run (pid ${child.pid}) in ${paths.root}`);
    return run;
  }

  private startFailed(run: FollowedRun, error: unknown): void {
    if (run.finished) return;
    for (const [key, r] of this.runs) if (r === run) this.runs.delete(key);
    this.end(run, { error });
  }

  /**
   * Reads the followed streams on, and (at most every LOOK_MS, or when `look`) looks for live runs
   * not followed yet and for followed runs whose process is gone.
   */
  sync(look = false): void {
    const paths = this.model.stateRoot();
    if (!paths) return;
    const now = Date.now();
    if (look || now - this.lastLook >= LOOK_MS) {
      this.lastLook = now;
      this.look(paths);
    }
    for (const [file, run] of this.runs) {
      if (!file || !run.reader) continue;
      this.apply(run, run.reader.read());
      if (!run.finished && run.session && !isSameProcessAlive(run.session.pid, run.session.identity ?? undefined)) {
        this.apply(run, run.reader.read());
        if (!run.finished)
          this.end(run, {
            error: new ExpectedError(
              `the run (pid ${run.session.pid}) ended without its outcome: it was killed, or its machine stopped; the next run recovers its tasks`,
            ),
          });
      }
      if (run.finished) this.runs.delete(file);
    }
    this.setRunning();
  }

  /** The `launchpad.running` context key (Run or Stop in the view's title), set when it changes. */
  private setRunning(): void {
    const running = this.all.length > 0;
    if (running === this.running) return;
    this.running = running;
    void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.running, running);
  }

  /** Follows each live run of the state root not followed yet, from its session's first record. */
  private look(paths: StatePaths): void {
    const starting = this.runs.get('');
    for (const f of sessionFiles(paths)) {
      if (this.runs.has(f.file)) continue;
      // The run this window started: followed from its first record even when it already ended.
      const ours = starting && f.session.pid === starting.pid && (!starting.identity || f.session.identity === starting.identity);
      if (!f.live && !ours) continue;
      const run = ours ? starting : new FollowedRun(paths, false, f.session.pid);
      if (ours) this.runs.delete('');
      run.reader = new EventFileReader(f.file);
      this.runs.set(f.file, run);
      if (!ours) this.events.fire({ kind: 'started', run });
      this.logger.info(`following the run of session ${f.session.session} (pid ${f.session.pid})`);
      this.apply(run, run.reader.read(), true);
      if (run.finished) this.runs.delete(f.file);
    }
  }

  private apply(run: FollowedRun, records: RunEventRecord[], catchingUp = false): void {
    if (!records.length) return;
    const attempts = new Map(run.progress.running);
    run.progress.apply(records);
    let changed = false;
    for (const r of records) {
      if (r.type === 'session') {
        run.session = r;
        run.pid = r.pid;
      } else if (r.type === 'log') {
        // A run followed late catches up on its lines without filling the output channel.
        if (!catchingUp) this.logger.info(r.line);
        this.lines.fire(r.line);
      } else if (r.type === 'attempt') {
        changed = true;
        attempts.set(r.task, r);
        // Live, every attempt gets its terminal, however quickly it ends.
        if (!catchingUp) this.showAttempt(run, r);
      } else if (r.type === 'task') {
        changed = true;
        const attempt = attempts.get(r.task);
        const code = ATTEMPT_EXIT[r.event];
        if (attempt && code !== undefined) {
          attempts.delete(r.task);
          this.endAttempt(run, attempt, code, `${r.task} ${r.event}`);
        }
        if (r.event === 'failed' && !catchingUp) void this.checkExhausted(run, r.task);
        // Also when catching up (a quick run's first records, a reload): a question still unanswered is news.
        if (r.event === 'question') void this.checkQuestion(run, r.task);
        if (r.event === 'review') void this.checkReview(run, r.task);
      }
    }
    // Caught up: a terminal for each attempt still running, its transcript from the first byte.
    if (catchingUp) for (const attempt of run.progress.running.values()) this.showAttempt(run, attempt);
    if (changed) this.model.scheduleRefresh();
    const end = run.progress.end;
    if (end) {
      if (end.outcome) {
        const o = end.outcome;
        const outcome: RunOutcome = {
          exitCode: o.exit_code as RunOutcome['exitCode'],
          reason: o.reason as RunOutcome['reason'],
          message: o.message,
          session: o.session,
          stats: o.stats,
          ...(o.notes.length ? { notes: o.notes } : {}),
        };
        this.end(run, { outcome });
      } else this.end(run, { error: new ExpectedError(end.error ?? 'the run ended without its outcome') });
    }
  }

  private showAttempt(run: FollowedRun, attempt: AttemptRecord): void {
    // VS Code runs no task in Restricted Mode: the views show the run, the log its lines.
    if (!vscode.workspace.isTrusted) return;
    this.terminals.show({
      taskId: attempt.task,
      title: this.model.snapshot?.byId.get(attempt.task)?.title ?? attempt.task,
      transcript: join(run.paths.root, attempt.transcript),
      key: attemptKey(run, attempt),
      detail: join(run.paths.root, attempt.dir),
    });
  }

  private endAttempt(run: FollowedRun, attempt: AttemptRecord, code: number, note: string): void {
    if (this.terminals.showing.get(attempt.task)?.key === attemptKey(run, attempt)) this.terminals.end(attempt.task, code, note);
  }

  private end(run: FollowedRun, result: { outcome: RunOutcome } | { error: unknown }): void {
    if (run.finished) return;
    // Attempts still running when the run ends stay in progress for the next run.
    for (const attempt of run.progress.running.values()) {
      const shown = this.terminals.showing.get(attempt.task);
      if (shown?.key === attemptKey(run, attempt))
        this.terminals.end(attempt.task, 130, 'the run ended: the task stays in progress for the next run');
    }
    run.finish(result);
    void this.model.refresh();
    this.setRunning();
    this.events.fire({ kind: 'ended', run, ...('outcome' in result ? { outcome: result.outcome } : { error: result.error }) });
  }

  /** Tells when a task that just failed has no attempt left (read from the task file as written). */
  private async checkExhausted(run: FollowedRun, taskId: string): Promise<void> {
    try {
      const { readTaskFile, exhaustedTask, describeExhausted } = await loadCore();
      const task = exhaustedTask(readTaskFile(run.paths).file, taskId);
      if (task) this.events.fire({ kind: 'attempts-exhausted', run, task, summary: describeExhausted(task) });
    } catch (err) {
      this.logger.warn(`could not read ${run.paths.tasks} after ${taskId} failed: ${(err as Error).message}`);
    }
  }

  /** Tells a task's question while the task still awaits its answer (read from the task file as written). */
  private async checkQuestion(run: FollowedRun, taskId: string): Promise<void> {
    try {
      const { readTaskFile, askingTask } = await loadCore();
      const task = askingTask(readTaskFile(run.paths).file, taskId);
      if (task) this.events.fire({ kind: 'question', run, taskId, question: task.question });
    } catch (err) {
      this.logger.warn(`could not read ${run.paths.tasks} after ${taskId} asked a question: ${(err as Error).message}`);
    }
  }

  /** Tells a task's review while the task still awaits it (read from the task file as written). */
  private async checkReview(run: FollowedRun, taskId: string): Promise<void> {
    try {
      const { readTaskFile } = await loadCore();
      const task = readTaskFile(run.paths).file.tasks.find((t) => t.id === taskId);
      const round = task?.status === 'awaiting_review' ? reviewRound(task) : undefined;
      if (round) this.events.fire({ kind: 'review', run, taskId, round: round.number });
    } catch (err) {
      this.logger.warn(`could not read ${run.paths.tasks} after ${taskId} entered review: ${(err as Error).message}`);
    }
  }

  /**
   * Stops every live run of the state root on this machine: the first Stop asks each to stop as
   * Ctrl-C does (agents end, their tasks stay in progress), a Stop while it stops ends it at once.
   * Returns what was done to each (empty when nothing runs).
   */
  async stop(): Promise<StopAction[]> {
    const paths = this.model.stateRoot();
    if (!paths) return [];
    const actions = await Promise.all(liveRuns(paths).map((r) => stopRun(r)));
    this.logger.info(`stop: ${actions.join(', ') || 'no run'}`);
    this.sync(true);
    return actions;
  }

  /** Ends one running task's agent (its attempt fails as stopped by a person), as `launchpad stop ID` does. */
  async stopTask(taskId: string, agentId: string): Promise<StopTaskAnswer> {
    const paths = this.model.stateRoot();
    if (!paths) return 'not-taken';
    return stopTask(paths, taskId, agentId);
  }

  /** What a task's terminal has shown of its latest attempt (tests read what a person sees). */
  terminalText(taskId: string): string | undefined {
    return this.terminals.textOf(taskId);
  }

  /** Shows a running task's terminal (opened again if a person closed it). */
  revealTerminal(taskId: string): void {
    this.terminals.reveal(taskId);
  }

  dispose(): void {
    // The runs go on: they are processes of their own, and the next window attaches to them.
    clearInterval(this.timer);
    for (const d of this.disposables) d.dispose();
    this.events.dispose();
    this.lines.dispose();
  }
}

/** An attempt of a run: its session's file and the attempt's folder. */
function attemptKey(run: FollowedRun, attempt: AttemptRecord): string {
  return `${run.session?.session ?? ''}:${attempt.dir}`;
}

/** Why the run could not start: its --json error, else the last line of its stderr. */
function startError(stdout: string, stderr: string, code: number | null): string {
  try {
    const parsed = JSON.parse(stdout) as { error?: { message?: string } };
    if (parsed.error?.message) return parsed.error.message;
  } catch {
    // Not the error object: read stderr.
  }
  const last = stderr
    .trim()
    .split('\n')
    .at(-1)
    ?.replace(/^launchpad: /, '');
  return last || `launchpad run exited with ${code ?? 'a signal'} before its session started`;
}
