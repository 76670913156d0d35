// The STATS fields. The counts are disjoint and add up to tasks_total: `blocked` takes the
// tasks the dependency rules hold back, `failed` the rest of the failed ones, `pending` every
// other task not yet started.
import { addUsd } from '../agents/parsers/parser';
import type { Task } from '../taskFile/schema';
import { analyzeTasks } from './dag';

export interface Stats {
  tasks_total: number;
  completed: number;
  failed: number;
  in_batch: number;
  pending: number;
  blocked: number;
  attempts_total: number;
  /** Checkpoints recorded on the tasks (they are kept across attempts and recoveries). */
  checkpoints: number;
  /** Dollars the tasks' agents reported, summed; absent when none reported any. */
  cost_usd?: number;
}

export function computeStats(tasks: readonly Task[]): Stats {
  const { states } = analyzeTasks(tasks);
  const stats: Stats = {
    tasks_total: tasks.length,
    completed: 0,
    failed: 0,
    in_batch: 0,
    pending: 0,
    blocked: 0,
    attempts_total: 0,
    checkpoints: 0,
  };
  for (const task of tasks) {
    stats.attempts_total += task.attempts;
    stats.checkpoints += task.checkpoints?.length ?? 0;
    if (task.cost?.usd !== undefined) stats.cost_usd = addUsd(stats.cost_usd, task.cost.usd);
    switch (states.get(task.id)) {
      case 'completed':
        stats.completed++;
        break;
      case 'running':
        stats.in_batch++;
        break;
      case 'blocked':
        stats.blocked++;
        break;
      case 'failed':
      case 'retryable':
        stats.failed++;
        break;
      default:
        stats.pending++;
    }
  }
  return stats;
}

/** `tasks_total=8 completed=1 failed=2 in_batch=0 pending=4 blocked=1 attempts_total=5 checkpoints=0 …` (cost_usd last, when reported). */
export function formatStats(stats: Stats, extra: Record<string, number> = {}): string {
  const { cost_usd, ...counts } = stats;
  return Object.entries({ ...counts, ...extra, ...(cost_usd !== undefined ? { cost_usd } : {}) })
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
}

/**
 * A task's reported cost for a person: `$0.0421 · 1200 in / 340 out tokens · 1 attempt`; '' when
 * nothing was reported. Only what the agents printed: a missing figure is left out, never guessed.
 */
export function describeCost(cost: Task['cost'] | null | undefined): string {
  if (!cost) return '';
  const parts: string[] = [];
  if (cost.usd !== undefined) parts.push(`$${cost.usd}`);
  if (cost.input_tokens !== undefined || cost.output_tokens !== undefined)
    parts.push(`${cost.input_tokens ?? '?'} in / ${cost.output_tokens ?? '?'} out tokens`);
  if (!parts.length) return '';
  const n = cost.attempts_reported ?? 0;
  return [...parts, `${n} attempt${n === 1 ? '' : 's'}`].join(' · ');
}
