// Previous policies, kept as references the benchmarks measure ours against in the same run.

/**
 * The eligible pool as it was ordered before the critical-path order: pending tasks by priority
 * then id, then retryable failed ones by priority, oldest failure, id. `core` holds dag.ts
 * (`dag`) and ids.ts's `compareIds`.
 */
export function idOrderPool(core, tasks) {
  const { hasValidationCommand, isRetryable } = core.dag;
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const ready = (t) => hasValidationCommand(t) && t.depends_on.every((d) => byId.get(d)?.status === 'completed');
  const rank = { P0: 0, P1: 1, P2: 2 };
  const pending = tasks.filter((t) => t.status === 'pending' && ready(t));
  const retry = tasks.filter((t) => isRetryable(t) && ready(t));
  pending.sort((a, b) => rank[a.priority] - rank[b.priority] || core.compareIds(a.id, b.id));
  retry.sort(
    (a, b) => rank[a.priority] - rank[b.priority] || (a.failed_at ?? '').localeCompare(b.failed_at ?? '') || core.compareIds(a.id, b.id),
  );
  return [...pending, ...retry];
}
