// launchpad pool [clear]: the idle worktrees session_config.worktree_pool keeps, and freeing them.
import { escapeControlChars as e } from '../../core/controlChars';
import { formatBytes } from '../../core/worktrees/diskUse';
import { clearPool, type PoolClearing } from '../../core/worktrees/poolClear';
import { type PoolReport, readPool } from '../../core/worktrees/poolReport';
import { describePool, describeSlot } from '../../core/worktrees/poolText';
import type { Command } from '../command';
import { EXIT, UsageError } from '../exit';
import { existingStateRoot } from '../stateRoot';

export const poolCommand: Command = {
  name: 'pool',
  usage: 'launchpad pool [clear] [--disk] [--worktree-dir DIR] [--json]',
  summary:
    'Show the worktree pool (session_config.worktree_pool): each idle worktree kept for reuse, its state and base. "pool clear" removes the idle ones.',
  details: [
    'States: prepared (at the base, or behind it: moved there when handed out), claimed (a live process is',
    'preparing or taking it), stale claim (its process is gone), not prepared, on a branch (an attempt recovered',
    'there: never touched). --disk adds the disk each holds (a walk of every file: about 0.1 s per 20,000 files).',
    '',
    '"launchpad pool clear" removes every idle slot (prepared, not prepared, a stale claim), each claimed first as the pool',
    'claims one, so it is safe while a run is going: a slot a live process claimed, one on a branch and one with a',
    'rebase or merge in progress are kept, and each kept one is printed with its reason. It prints the disk freed.',
    'A run refills the pool as its tasks end, and the next run fills it to worktree_pool at its start.',
    '',
    'examples:',
    '  launchpad pool --disk',
    '  launchpad pool clear',
  ].join('\n'),
  options: {
    disk: { type: 'boolean', help: 'also measure the disk each slot holds (walks every file)' },
    'worktree-dir': { type: 'string', value: 'DIR', help: 'where task worktrees go, as given to run --worktree-dir' },
    json: { type: 'boolean', help: 'print the pool (or what clear did) as JSON' },
  },
  positionals: { min: 0, max: 1 },
  async run(ctx) {
    const sub = ctx.positionals[0];
    if (sub !== undefined && sub !== 'clear') throw new UsageError(`pool: unknown subcommand "${sub}"\nusage: ${poolCommand.usage}`);
    const store = existingStateRoot(ctx, 'pool');
    const { file } = store.load();
    const settings = { worktreeDir: ctx.values['worktree-dir'] as string | undefined, env: ctx.io.env };
    const json = ctx.values.json === true;
    if (sub === 'clear') {
      const cleared = await clearPool(store.paths, file, { settings });
      ctx.io.out(json ? JSON.stringify(cleared, null, 2) + '\n' : formatClearing(cleared, store.paths.root));
      return EXIT.OK;
    }
    const report = await readPool(store.paths, file, { settings, disk: ctx.values.disk === true });
    ctx.io.out(json ? JSON.stringify(report ?? null, null, 2) + '\n' : formatPool(report, store.paths.root));
    return EXIT.OK;
  },
};

export function formatPool(r: PoolReport | undefined, root: string): string {
  if (!r) return `no worktree pool: ${e(root)} is not in a git repository\n`;
  const lines = [`Worktree pool: ${e(r.dir)} (worktree_pool: ${r.size})`];
  if (!r.slots.length) return lines.concat('  (no slots)', '').join('\n');
  const width = Math.max(...r.slots.map((s) => s.name.length)) + 2;
  for (const s of r.slots) {
    const disk = s.bytes === null ? '' : `  ${formatBytes(s.bytes)}`;
    lines.push(`  ${e(s.name).padEnd(width)}${e(describeSlot(s))}${disk}`);
  }
  const total = r.bytes === null ? ' (--disk measures their disk)' : `, ${formatBytes(r.bytes)} on disk`;
  lines.push(`${describePool(r)}${total}`);
  return lines.join('\n') + '\n';
}

export function formatClearing(c: PoolClearing, root: string): string {
  if (!c.before) return `no worktree pool: ${e(root)} is not in a git repository\n`;
  const lines: string[] = [];
  for (const s of c.removed) lines.push(`removed ${e(s.path)} (${formatBytes(s.bytes)})`);
  for (const s of c.kept) lines.push(`kept ${e(s.path)}: ${e(s.reason)}`);
  const n = c.removed.length;
  lines.push(
    n || c.kept.length
      ? `${n} slot${n === 1 ? '' : 's'} removed, ${formatBytes(c.bytes_freed)} freed; ${c.kept.length} kept`
      : `nothing to clear: ${e(c.before.dir)} holds no slots`,
  );
  return lines.join('\n') + '\n';
}
