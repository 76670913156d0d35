// What `run` shows while it runs. Every progress log line, coloured on a terminal, a retry's
// dispatch labelled with its attempt; on a terminal, under the lines, a live table of the
// running tasks redrawn in place (cleared at the end); with -v, each process's output as lines
// prefixed by its task. Fed by the controller's onLogLine and terminal output.
import { readAgentReport } from '../../core/agents/report';
import type { LogEntry } from '../../core/log/logLine';
import type { StatePaths } from '../../core/statePaths';
import type { Task } from '../../core/taskFile/schema';
import { StateStore } from '../../core/taskFile/store';
import type { Colours } from './colour';
import { paintLogLine } from './logLineView';
import { renderRunningTable, type RunningRow, type RunTotals } from './runningTable';
import { Screen } from './screen';
import { TaskOutputLines } from './taskOutput';

export interface RunViewOptions {
  paths: StatePaths;
  colour: Colours;
  write(text: string): void;
  /** Draw the live table (stdout is a terminal). */
  live: boolean;
  columns(): number | undefined;
  /** Show each process's output (-v). */
  verbose: boolean;
  /** Ring the terminal bell when an agent asks a question or a change awaits review: a person may be elsewhere. */
  bell?: boolean;
  /** How to call launchpad here, for the command that answers a question. */
  launchpad?: string;
}

/** How often the table's clocks move. */
const TICK_MS = 1000;

export class RunView {
  private readonly screen: Screen;
  private readonly rows = new Map<string, RunningRow>();
  private readonly totals: RunTotals = { completed: 0, failed: 0, since: Date.now() };
  private readonly tasks: TaskLookup;
  private readonly output: TaskOutputLines;
  private readonly ticker: NodeJS.Timeout | undefined;

  constructor(private readonly opts: RunViewOptions) {
    this.screen = new Screen({ write: opts.write, live: opts.live, columns: opts.columns });
    this.tasks = new TaskLookup(opts.paths);
    this.output = new TaskOutputLines(
      (taskId, lines) => this.screen.print(lines.map((l) => `  ${opts.colour.dim(`${taskId} |`)} ${l}`)),
      opts.colour.enabled,
    );
    if (opts.live) {
      this.screen.setBlock(() => renderRunningTable([...this.rows.values()], this.totals, Date.now(), opts.colour));
      this.ticker = setInterval(() => this.screen.redraw(), TICK_MS);
      this.ticker.unref();
    }
  }

  /** A line the controller logged. */
  logLine(line: string, entry: LogEntry): void {
    let attempt: { n: number; of: number } | undefined;
    if (entry.type === 'DISPATCH' && entry.taskId) {
      const task = this.tasks.get(entry.taskId);
      if (task) attempt = { n: task.attempts, of: task.max_attempts };
      this.rows.set(entry.taskId, {
        id: entry.taskId,
        title: task?.title ?? '',
        attempt: attempt?.n,
        maxAttempts: attempt?.of,
        since: Date.now(),
        phase: 'agent',
      });
    } else if (entry.taskId) {
      this.track(entry.taskId, entry);
    }
    this.screen.print([paintLogLine(line, this.opts.colour, { entry, attempt })]);
    if (entry.type === 'QUESTION' && entry.taskId) {
      this.screen.print([`  ${this.opts.colour.yellow('answer:')} ${this.opts.launchpad ?? 'launchpad'} answer ${entry.taskId} "…"`]);
      if (this.opts.bell) this.opts.write('\x07');
    } else if (entry.type === 'REVIEW' && entry.taskId && entry.message.startsWith('awaiting review')) {
      this.screen.print([`  ${this.opts.colour.yellow('review:')} ${this.opts.launchpad ?? 'launchpad'} review ${entry.taskId}`]);
      if (this.opts.bell) this.opts.write('\x07');
    }
    this.screen.redraw();
  }

  /** Output of a task's process (or the controller's notes about it), for -v. */
  processOutput(taskId: string, kind: string, text: string): void {
    if (this.opts.verbose) this.output.push(taskId, kind, text);
  }

  /** Writes to stderr (a warning, the stop notice) without breaking the table. */
  stderr(write: () => void): void {
    this.screen.interject(write);
  }

  /** The run is over: partial output printed, the table cleared. */
  close(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.output.flush();
    this.screen.close();
  }

  private track(taskId: string, entry: LogEntry): void {
    if (entry.type === 'Completed') this.totals.completed++;
    if (entry.type === 'ERROR' && this.rows.has(taskId)) this.totals.failed++;
    const row = this.rows.get(taskId);
    if (!row) return;
    switch (entry.type) {
      case 'CHECKPOINT': {
        const m = /^step=(\d+\/\d+) "(.*)"$/.exec(entry.message);
        row.checkpoint = m ? `${m[1]} ${m[2]}` : entry.message;
        break;
      }
      case 'AGENT_DONE':
        row.phase = 'validating';
        row.costUsd = this.costOf(taskId);
        break;
      case 'VALIDATE':
        if (/result=PASS/.test(entry.message)) row.phase = 'merging';
        break;
      case 'Completed':
      case 'DISCARD':
      case 'ERROR':
      case 'QUESTION':
        this.rows.delete(taskId);
        break;
    }
  }

  /** The cost the agent's tool reported for the newest attempt (agent.json), when it did. */
  private costOf(taskId: string): number | undefined {
    const attempt = this.opts.paths.attemptsOf(taskId).at(-1);
    return attempt ? readAgentReport(attempt)?.costUsd : undefined;
  }
}

/** A task as the task file holds it now (just after its dispatch was written), if it can be read. */
class TaskLookup {
  private readonly store: StateStore;

  constructor(paths: StatePaths) {
    this.store = new StateStore(paths);
  }

  get(id: string): Task | undefined {
    try {
      // The dispatch this process just wrote, without reading (or copying) the whole file again
      // for every DISPATCH line.
      return (this.store.lastKnown() ?? this.store.peek()).tasks.find((t) => t.id === id);
    } catch {
      // Broken meanwhile: the view goes without the title and attempt.
      return undefined;
    }
  }
}
