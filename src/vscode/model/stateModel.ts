// The one copy of the Launchpad state the extension's views read: the task file as the core
// parses and analyses it, the task worktrees, the live run's lock holder. It reloads when the
// state files change on disk, whoever changed them (a run here, the CLI in a terminal, another
// window, an edit), through a short debounce. Views never keep state of their own.
import { existsSync, watch as watchDirectory } from 'node:fs';
import { join } from 'node:path';

import * as vscode from 'vscode';

import { type KeptAttempt, keptAttemptsIn, keptByTask } from '../../core/git/keptAttempts';
import { listTaskWorktrees, type TaskWorktree } from '../../core/git/taskWorktrees';
import type { IntegrationState } from '../../core/integration/state';
import { liveLockHolder, type LockHolder } from '../../core/lock';
import type { Logger } from '../../core/logger';
import { ACTIVE_MARKER, type AttemptPaths, PROGRESS_FILE, StatePaths, TASKS_FILE } from '../../core/statePaths';
import { summarizeTasks, type TaskSummary } from '../../core/statusReport';
import type { ReadTaskFile } from '../../core/taskFile/read';
import type { Task, TaskFile } from '../../core/taskFile/schema';
import { countStates, type TaskCounts } from '../../core/tasks/counts';
import type { PoolReport } from '../../core/worktrees/poolReport';
import { SLOT_STATE_FILES } from '../../core/worktrees/poolSlot';
import { readSettings, toRunSettings } from '../config';
import { CONTEXT_KEYS } from '../contributions';
import { loadCore } from '../coreLoader';

export interface TaskEntry extends TaskSummary {
  task: Task;
}

export interface StateSnapshot {
  paths: StatePaths;
  /** harness-tasks.json exists (it may still be invalid: see `error`). */
  exists: boolean;
  file?: TaskFile | undefined;
  /** The task file's text as read (two snapshots with the same text hold the same tasks). */
  fileText?: string | undefined;
  /** Why the task file could not be read (its message names the file and the field). */
  error?: Error | undefined;
  tasks: TaskEntry[];
  byId: Map<string, TaskEntry>;
  /** The tasks counted by state (core/tasks/counts.ts): what every count the window shows reads. */
  counts: TaskCounts;
  /** Task worktrees (git worktree list). Empty in Restricted Mode, where no git process runs. */
  worktrees: TaskWorktree[];
  /** The worktree pool's slots (no disk walked); undefined in Restricted Mode or without a valid task file. */
  pool?: PoolReport | undefined;
  /** Kept attempts (refs/launchpad/attempts/), listed with the worktrees; each task's are in its kept_attempts. */
  keptAttempts: KeptAttempt[];
  /** Ids of tasks that have at least one attempt folder (prompt, transcripts). */
  withAttempts: ReadonlySet<string>;
  activeSession?: LockHolder | undefined;
  /** The integration gate's record of the base branch (`.launchpad/integration.json`), when there is one that reads. */
  integration?: IntegrationState | undefined;
}

/** Past a lease's end, so the reload sees it ended. */
const LEASE_END_MARGIN_MS = 250;
/** A lease further ahead is looked at again by then (a timer's range is bounded). */
const MAX_LEASE_WAIT_MS = 60 * 60_000;

/** When the first worker's lease still current at `now` ends (epoch ms), if any task has one. */
export function nextLeaseEnd(
  tasks: readonly { status: string; lease_expires_at?: string | null | undefined }[],
  now: number,
): number | undefined {
  let first: number | undefined;
  for (const t of tasks) {
    if (t.status !== 'in_progress' || !t.lease_expires_at) continue;
    const end = Date.parse(t.lease_expires_at);
    if (end > now && (first === undefined || end < first)) first = end;
  }
  return first;
}

/** Reload delay after a change: coalesces the .bak/.tmp/rename bursts of one write. */
const DEBOUNCE_MS = 100;

/**
 * What the watcher looks at, relative to the state root (files are replaced by rename): a pool
 * slot's claim and ready mark too, so its row follows a run preparing and taking it.
 */
const WATCHED = `{harness-tasks.json,harness-progress.txt,.harness-active,.launchpad/session.lock,.launchpad/session.lock/holder.json,.launchpad/integration.json,.git/worktrees/*,${SLOT_STATE_FILES.map((f) => `.git/worktrees/*/${f}`).join(',')}}`;

export class StateModel implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<StateSnapshot>();
  readonly onDidChange = this.emitter.event;
  private readonly disposables: vscode.Disposable[] = [this.emitter];
  private watcher: vscode.Disposable | undefined;
  private watchedRoot: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private loading: Promise<StateSnapshot> | undefined;
  private reloading: Promise<StateSnapshot> | undefined;
  private current: StateSnapshot | undefined;
  /** The task file as last read: its parse is used again while the file holds the same bytes. */
  private lastRead: ReadTaskFile | undefined;
  private firstLoad: { promise: Promise<StateSnapshot>; resolve: (s: StateSnapshot) => void };

  constructor(private readonly logger: Logger) {
    let resolve!: (s: StateSnapshot) => void;
    this.firstLoad = { promise: new Promise((r) => (resolve = r)), resolve };
    this.disposables.push(
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.scheduleRefresh(0)),
      // Trust granted: worktrees can now be listed (that runs git).
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.scheduleRefresh(0)),
    );
  }

  /** The latest snapshot, or undefined before the first load finishes. */
  get snapshot(): StateSnapshot | undefined {
    return this.current;
  }

  /** The latest snapshot, waiting for the first load when there is none yet. */
  whenLoaded(): Promise<StateSnapshot> {
    return this.current ? Promise.resolve(this.current) : this.firstLoad.promise;
  }

  /** The state root: the first workspace folder holding harness-tasks.json, else the first folder. */
  stateRoot(): StatePaths | undefined {
    const folders = vscode.workspace.workspaceFolders?.filter((f) => f.uri.scheme === 'file') ?? [];
    const withHarness = folders.find((f) => existsSync(join(f.uri.fsPath, TASKS_FILE)));
    const folder = withHarness ?? folders[0];
    return folder ? new StatePaths(folder.uri.fsPath) : undefined;
  }

  /**
   * Loads now and notifies listeners. Calls during a load share one more load after it, so a
   * change that lands while reading is never missed.
   */
  refresh(): Promise<StateSnapshot> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.loading) {
      this.loading = this.load().finally(() => (this.loading = undefined));
      return this.loading;
    }
    this.reloading ??= this.loading
      .catch(() => undefined)
      .then(() => {
        this.reloading = undefined;
        return this.refresh();
      });
    return this.reloading;
  }

  /**
   * A reload soon. An already scheduled one is not pushed back: a steady stream of changes (a
   * run appending to the log) still refreshes every DEBOUNCE_MS instead of never.
   */
  scheduleRefresh(delay = DEBOUNCE_MS): void {
    if (this.timer && delay > 0) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), delay);
  }

  private async load(): Promise<StateSnapshot> {
    const paths = this.stateRoot();
    if (!paths) {
      const empty = emptySnapshot(new StatePaths('/'));
      this.publish(empty);
      return empty;
    }
    this.watch(paths);
    const { readTaskFile, TaskFileMissingError, readIntegrationState } = await loadCore();
    const snapshot = emptySnapshot(paths);
    try {
      this.lastRead = readTaskFile(paths, this.current?.paths.root === paths.root ? this.lastRead : undefined);
      snapshot.file = this.lastRead.file;
      snapshot.fileText = this.lastRead.bytes.toString('utf8');
      snapshot.exists = true;
      snapshot.activeSession = liveLockHolder(paths.sessionLock);
      setTasks(snapshot, this.current?.paths.root === paths.root ? this.current.keptAttempts : []);
    } catch (err) {
      snapshot.exists = !(err instanceof TaskFileMissingError);
      if (snapshot.exists) snapshot.error = err as Error;
    }
    snapshot.withAttempts = new Set(paths.tasksWithAttempts());
    try {
      snapshot.integration = readIntegrationState(paths.integrationState);
    } catch (err) {
      // The run says so in its log, and checks the base again.
      this.logger.debug(`integration state not shown: ${(err as Error).message}`);
    }
    snapshot.activeSession = liveLockHolder(paths.sessionLock);
    // A worker's lease that runs out changes what its task shows (running → interrupted) with no
    // file changing: the model loads again when the first current one ends.
    const leaseEnd = snapshot.file && !snapshot.activeSession ? nextLeaseEnd(snapshot.file.tasks, Date.now()) : undefined;
    if (leaseEnd !== undefined) this.scheduleRefresh(Math.min(leaseEnd - Date.now() + LEASE_END_MARGIN_MS, MAX_LEASE_WAIT_MS));
    // The files are read: show them now, with the worktrees as last seen; listing worktrees runs
    // git (not in Restricted Mode) and follows with a second update only when they changed.
    const same = this.current?.paths.root === paths.root;
    const previous = same ? this.current!.worktrees : [];
    snapshot.worktrees = previous;
    snapshot.pool = same ? this.current!.pool : undefined;
    this.publish(snapshot);
    if (!vscode.workspace.isTrusted) return snapshot;
    let worktrees: StateSnapshot['worktrees'];
    let kept: KeptAttempt[];
    let pool: PoolReport | undefined;
    try {
      [worktrees, kept, pool] = await Promise.all([listTaskWorktrees(paths.root), keptAttemptsIn(paths.root), this.readPool(snapshot)]);
    } catch (err) {
      this.logger.warn(`could not list worktrees: ${(err as Error).message}`);
      return snapshot;
    }
    const unchanged = JSON.stringify([worktrees, kept, pool]) === JSON.stringify([previous, snapshot.keptAttempts, snapshot.pool]);
    if (unchanged || this.current !== snapshot) return snapshot;
    const complete = { ...snapshot, worktrees, pool };
    if (complete.file) setTasks(complete, kept);
    else complete.keptAttempts = kept;
    this.publish(complete);
    return complete;
  }

  /** The pool where a run from this window would keep it (launchpad.worktree.location, the task file). */
  private async readPool(snapshot: StateSnapshot): Promise<PoolReport | undefined> {
    if (!snapshot.file) return undefined;
    const [{ readPool }, { settings }] = await Promise.all([loadCore(), readSettings()]);
    return readPool(snapshot.paths, snapshot.file, { settings: toRunSettings(settings) });
  }

  private publish(snapshot: StateSnapshot): void {
    this.current = snapshot;
    void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.hasTaskFile, snapshot.exists);
    this.firstLoad.resolve(snapshot);
    this.emitter.fire(snapshot);
  }

  /**
   * Files are replaced by rename, so the watch is on names in the folder, not on inodes: the
   * folder itself through node (immediate), and VS Code's watcher for what lies deeper (the run's
   * lock, git's worktree records) and for folders node cannot watch.
   */
  private watch(paths: StatePaths): void {
    if (this.watchedRoot === paths.root) return;
    this.watcher?.dispose();
    this.watchedRoot = paths.root;
    const poke = () => this.scheduleRefresh();
    const w = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(paths.root), WATCHED));
    this.watcher = vscode.Disposable.from(
      w,
      w.onDidChange(poke),
      w.onDidCreate(poke),
      w.onDidDelete(poke),
      watchStateFiles(paths.root, poke, this.logger),
    );
  }

  /** The newest attempt of a task (its prompt, transcript, validation output). */
  latestAttempt(taskId: string): AttemptPaths | undefined {
    return this.current?.paths.attemptsOf(taskId).at(-1);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.watcher?.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

const STATE_FILES = new Set([TASKS_FILE, PROGRESS_FILE, ACTIVE_MARKER]);

/** A watch on the state root's own entries; nothing when the platform cannot watch it. */
function watchStateFiles(root: string, onChange: () => void, logger: Logger): vscode.Disposable {
  try {
    const w = watchDirectory(root, (_event, name) => {
      if (!name || STATE_FILES.has(name.toString())) onChange();
    });
    w.on('error', (err) => {
      logger.debug(`watching ${root} stopped: ${err.message}`);
      w.close();
    });
    return new vscode.Disposable(() => w.close());
  } catch (err) {
    logger.debug(`cannot watch ${root}: ${(err as Error).message}`);
    return new vscode.Disposable(() => undefined);
  }
}

function emptySnapshot(paths: StatePaths): StateSnapshot {
  return {
    paths,
    exists: false,
    tasks: [],
    byId: new Map(),
    counts: countStates([]),
    worktrees: [],
    keptAttempts: [],
    withAttempts: new Set(),
  };
}

/** The snapshot's task entries from its file, with the kept attempts given. */
function setTasks(snapshot: StateSnapshot, kept: KeptAttempt[]): void {
  // An in_progress task is running while a run holds the session lock, else interrupted.
  const summaries = summarizeTasks(snapshot.file!, keptByTask(kept), { live: !!snapshot.activeSession, now: Date.now() });
  snapshot.counts = countStates(summaries.map((t) => t.state));
  snapshot.keptAttempts = kept;
  snapshot.tasks = summaries.map((s, i) => ({ ...s, task: snapshot.file!.tasks[i]! }));
  snapshot.byId = new Map(snapshot.tasks.map((t) => [t.id, t]));
}
