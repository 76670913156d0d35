// The pool's report in words, for the CLI and the Worktrees view alike. Pure: the view imports it
// at activation, where the report's readers (and the task file's schema behind them) must not load.
import type { PoolReport, PoolSlot } from './poolReport';

/** One slot's state in words: `prepared at the base (a1b2c3d, 2025-07-01 10:00:00 UTC)`. */
export function describeSlot(s: PoolSlot): string {
  const prepared = s.base
    ? `${s.at_base ? 'at the base' : 'behind the base'} (${s.base.slice(0, 7)}, ${s.prepared_at!.slice(0, 19).replace('T', ' ')} UTC)`
    : '';
  switch (s.state) {
    case 'prepared':
      return `prepared ${prepared}`;
    case 'claimed':
      return `claimed by pid ${s.claimed_by} (being prepared or taken)`;
    case 'stale_claim':
      return `stale claim of pid ${s.claimed_by} (gone)${s.base ? `, prepared ${prepared}` : ''}`;
    case 'not_prepared':
      return s.git_busy ? 'not prepared, a rebase or merge in progress' : 'not prepared';
    case 'on_branch':
      return `on branch ${s.branch} (an attempt recovered there: never touched)`;
    case 'not_worktree':
      return 'not a worktree (the pool deletes it at its next start)';
  }
}

/** `6 slots (5 prepared at the base, 1 claimed)`: what `status` says of the pool, no disk walked. */
export function describePool(r: PoolReport): string {
  const n = r.slots.length;
  const states = describeStates(r);
  return `${n} slot${n === 1 ? '' : 's'}${states ? ` (${states})` : ''}`;
}

/** `5 prepared at the base, 1 claimed`: the slots counted by state, those with none left out. */
export function describeStates(r: PoolReport): string {
  const count = (test: (s: PoolSlot) => boolean) => r.slots.filter(test).length;
  const parts: Array<[number, string]> = [
    [count((s) => s.state === 'prepared' && s.at_base === true), 'prepared at the base'],
    [count((s) => s.state === 'prepared' && s.at_base !== true), 'prepared behind the base'],
    [count((s) => s.state === 'claimed'), 'claimed'],
    [count((s) => s.state === 'stale_claim'), 'with a stale claim'],
    [count((s) => s.state === 'not_prepared'), 'not prepared'],
    [count((s) => s.state === 'on_branch'), 'on a branch'],
    [count((s) => s.state === 'not_worktree'), 'not a worktree'],
  ];
  return parts
    .filter(([n]) => n > 0)
    .map(([n, what]) => `${n} ${what}`)
    .join(', ');
}
