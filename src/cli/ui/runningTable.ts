// The live table of running tasks, as text: one row per task with its attempt, time running,
// what it is doing (the agent's last checkpoint, validating, merging) and its cost once the
// agent's tool has reported one. Pure: rows in, lines out (the Screen cuts them to width).
import type { Colours } from './colour';

export interface RunningRow {
  id: string;
  title: string;
  attempt: number | undefined;
  maxAttempts: number | undefined;
  /** Date.now() when it was dispatched. */
  since: number;
  phase: 'agent' | 'validating' | 'merging';
  /** The agent's last `CHECKPOINT step=M/N "…"`, as `M/N description`. */
  checkpoint?: string | undefined;
  costUsd?: number | undefined;
}

export interface RunTotals {
  completed: number;
  /** Failed attempts this run (a task retried later counts once per failure). */
  failed: number;
  /** Date.now() when the run started. */
  since: number;
}

const TITLE_WIDTH = 32;

export function renderRunningTable(rows: RunningRow[], totals: RunTotals, now: number, c: Colours): string[] {
  // This run's events, named apart from the task file's counts (`status`): a failed attempt may be retried.
  const failed = `${totals.failed} failed attempt${totals.failed === 1 ? '' : 's'}`;
  const head = `${c.bold(`running ${rows.length}`)}  ${c.green(`${totals.completed} completed this run`)}  ${totals.failed ? c.red(failed) : failed}  ${c.dim(duration(now - totals.since))}`;
  if (!rows.length) return [head];
  const idWidth = Math.max(...rows.map((r) => r.id.length));
  return [
    head,
    ...rows.map((r) => {
      const attempt = r.attempt === undefined ? '   ' : `${r.attempt}/${r.maxAttempts ?? '?'}`;
      const doing = r.phase === 'agent' ? (r.checkpoint ? `step ${r.checkpoint}` : 'agent working') : r.phase;
      const cost = r.costUsd === undefined ? '' : `  ${formatCost(r.costUsd)}`;
      return `  ${c.cyan(r.id.padEnd(idWidth))}  ${cut(r.title, TITLE_WIDTH).padEnd(TITLE_WIDTH)}  ${attempt.padStart(4)}  ${duration(now - r.since).padStart(5)}  ${r.phase === 'agent' ? doing : c.yellow(doing)}${cost}`;
    }),
  ];
}

/** 42 s → 0:42, 3725 s → 1:02:05. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

export function formatCost(usd: number): string {
  return `$${usd < 0.01 ? usd.toFixed(4) : usd.toFixed(2)}`;
}

function cut(text: string, width: number): string {
  const one = text.replace(/\s+/g, ' ');
  return one.length > width ? one.slice(0, width - 1) + '…' : one;
}
