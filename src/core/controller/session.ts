// One controller session's context and the state transitions every part of it shares:
// logging in the session's name, transactions, where a task's worktree lives, and the two ends
// of a task (completed, failed). Each transition writes the task file first and logs after.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Emitter } from '../events';
import type { Git } from '../git/git';
import { branchFor } from '../ids';
import { logTimestamp, type Category } from '../log/logLine';
import type { Logger } from '../logger';
import { ProcessRecords } from '../process/processRecords';
import type { LogEvent, ProgressLog } from '../log/progressLog';
import type { StatePaths } from '../statePaths';
import type { StateStore } from '../taskFile/store';
import type { Task, TaskFile } from '../taskFile/schema';
import type { RunConfig } from './runConfig';
import type { TaskEvent, TerminalFactory } from './types';

/** How much failing output an error_tail keeps (characters): enough for a hover, bounded. */
export const ERROR_TAIL_CHARS = 4000;

export class Session {
  readonly records: ProcessRecords;
  /** The base branch's commit new worktrees start from; moves with every merge. */
  head = '';
  /** BATCH lines logged this session, for STATS. */
  batches = 0;
  readonly taskEvents = new Emitter<TaskEvent>();
  private readonly stopController = new AbortController();

  constructor(
    readonly number: number,
    readonly paths: StatePaths,
    readonly store: StateStore,
    readonly progress: ProgressLog,
    readonly git: Git,
    readonly toplevel: string,
    readonly baseBranch: string,
    readonly config: RunConfig,
    readonly terminals: TerminalFactory,
    readonly logger: Logger,
  ) {
    this.records = new ProcessRecords(paths.processRecords);
  }

  /** Aborted when a person stops the run: every agent, validation and cleanup ends. */
  get stopSignal(): AbortSignal {
    return this.stopController.signal;
  }
  get stopping(): boolean {
    return this.stopController.signal.aborted;
  }
  requestStop(): void {
    this.stopController.abort();
  }

  log(...events: LogEvent[]): void {
    this.progress.append(this.number, ...events);
  }

  transact<T>(mutate: (file: TaskFile) => T): Promise<T> {
    return this.store.transact(mutate);
  }

  worktreePath(taskId: string): string {
    return join(this.config.worktreeRoot, taskId);
  }

  /** The state root's counterpart inside a worktree: where agents and validations run. */
  projectDirIn(worktree: string): string {
    const sub = relative(this.toplevel, this.paths.root);
    const dir = sub ? join(worktree, sub) : worktree;
    return existsSync(dir) ? dir : worktree;
  }

  /** A fresh folder for one attempt's prompt and transcripts. */
  attemptDir(taskId: string, attempt: number): string {
    const base = this.paths.runsOf(taskId);
    mkdirSync(base, { recursive: true });
    let n = 1;
    while (existsSync(join(base, `attempt-${attempt}${n > 1 ? `.${n}` : ''}`))) n++;
    const dir = join(base, `attempt-${attempt}${n > 1 ? `.${n}` : ''}`);
    mkdirSync(dir);
    writeFileSync(join(dir, 'session'), `${this.number}\n`);
    return dir;
  }

  /**
   * Recorded once the agent's work is committed in its worktree, before validation runs. A
   * recovery that finds it knows any uncommitted files came after (a validation's build output,
   * caches) and must not be committed as the agent's work.
   */
  markWorkCommitted(attemptDir: string, agentId: string): void {
    writeFileSync(join(attemptDir, 'work-committed'), `${agentId}\n`);
  }

  workCommitted(taskId: string, agentId: string | null | undefined): boolean {
    if (!agentId) return false;
    const base = this.paths.runsOf(taskId);
    let dirs: string[];
    try {
      dirs = readdirSync(base);
    } catch {
      return false;
    }
    return dirs.some((d) => {
      try {
        return readFileSync(join(base, d, 'work-committed'), 'utf8').trim() === agentId;
      } catch {
        return false;
      }
    });
  }

  async completeTask(task: Task, mergeCommit: string | undefined, extra: LogEvent[] = []): Promise<void> {
    await this.transact((file) => {
      const t = mustFind(file, task.id);
      t.status = 'completed';
      t.completed_at = logTimestamp();
      t.agent_id = null;
      t.worktree_branch = null;
      t.error_tail = null;
    });
    const branch = branchFor(task.id);
    this.log(
      ...extra,
      ...(mergeCommit
        ? [{ type: 'MERGE' as const, taskId: task.id, message: `branch=${branch} into=${this.baseBranch} (commit ${mergeCommit})` }]
        : []),
      { type: 'Completed', taskId: task.id, message: mergeCommit ? `(commit ${mergeCommit})` : '' },
    );
    this.taskEvents.fire({ taskId: task.id, kind: 'completed' });
    await this.removeWorktree(task.id);
  }

  /**
   * Records a failed attempt: status failed, `[CATEGORY] reason` appended to error_log, the
   * output tail kept, then the worktree discarded.
   */
  async failTask(task: Task, category: Category, reason: string, tail: string | undefined, discardReason: string): Promise<void> {
    const oneLine = reason.replace(/\s*\n\s*/g, ' ').trim().slice(0, 500);
    await this.transact((file) => {
      const t = mustFind(file, task.id);
      t.status = 'failed';
      t.error_log.push(`[${category}] ${oneLine}`);
      t.error_tail = tail ? tail.slice(-ERROR_TAIL_CHARS) : null;
      t.failed_at = new Date().toISOString();
      t.agent_id = null;
      t.worktree_branch = null;
    });
    this.log(
      { type: 'DISCARD', taskId: task.id, message: `worktree=${branchFor(task.id)} reason="${discardReason}"` },
      { type: 'ERROR', taskId: task.id, category, message: oneLine },
    );
    this.taskEvents.fire({ taskId: task.id, kind: 'failed' });
    await this.removeWorktree(task.id);
  }

  /**
   * Removes the task's worktree and branch, wherever they are; missing ones are fine. Almost
   * always the worktree is the one made at worktreePath(): it goes first, and only when the
   * branch is then still checked out somewhere else (a worktree made under another worktree_dir,
   * or one whose folder a person deleted) are the worktrees listed to find it.
   */
  async removeWorktree(taskId: string): Promise<void> {
    const branch = branchFor(taskId);
    const own = this.worktreePath(taskId);
    if (existsSync(own)) await this.git.removeWorktree(own);
    if (await this.git.deleteBranch(branch)) return;
    const ref = `refs/heads/${branch}`;
    for (const w of await this.git.listWorktrees()) if (w.branch === ref) await this.git.removeWorktree(w.path);
    await this.git.deleteBranch(branch);
  }
}

export function mustFind(file: TaskFile, id: string): Task {
  const task = file.tasks.find((t) => t.id === id);
  // A person deleted the task from the file while it ran: nothing left to record it in.
  if (!task) throw new TaskVanishedError(id);
  return task;
}

export class TaskVanishedError extends Error {
  constructor(readonly taskId: string) {
    super(`task ${taskId} is no longer in harness-tasks.json`);
    this.name = 'TaskVanishedError';
  }
}
