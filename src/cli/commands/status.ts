import { escapeControlChars } from '../../core/controlChars';
import { buildStatus, describeCost, INTERRUPTED_HINT, type StatusReport, type TaskSummary } from '../../core/statusReport';
import { TaskFileError } from '../../core/taskFile/parse';
import { formatCounts } from '../../core/tasks/counts';
import type { Command } from '../command';
import { EXIT } from '../exit';
import { existingStateRoot } from '../stateRoot';
import { type Colours, colours } from '../ui/colour';
import { paintLogLine } from '../ui/logLineView';
import { warnUnknownFields } from '../unknownFieldWarnings';

export const statusCommand: Command = {
  name: 'status',
  usage: 'launchpad status [--json]',
  summary: 'Show the tasks, their states, active worktrees and the last log lines. Read-only: takes no lock.',
  details:
    'Under a task, "kept attempts" names the refs (refs/launchpad/attempts/<id>/<attempt>) holding the commits of its failed or interrupted attempts; "launchpad prune-attempts" deletes them.',
  options: {
    json: { type: 'boolean', help: 'print the status as JSON' },
  },
  globals: ['dir', 'no-color'],
  async run(ctx) {
    const store = existingStateRoot(ctx, 'status');
    let report: StatusReport;
    try {
      report = await buildStatus(store, 5, ctx.io.env);
    } catch (err) {
      if (err instanceof TaskFileError && store.canRestoreBackup()) {
        const fix = err.where ? `fix ${err.where} by hand, or run` : 'fix the file by hand, or run';
        ctx.io.err(
          `note: harness-tasks.json.bak is valid: ${fix} "launchpad restore-backup" to go back to it (the broken file is kept as harness-tasks.json.corrupt-<time>)\n`,
        );
      }
      throw err;
    }
    if (!ctx.values.json) warnUnknownFields(ctx.io, store.paths);
    ctx.io.out(ctx.values.json ? JSON.stringify(report, null, 2) + '\n' : formatStatus(report, ctx.colour));
    return EXIT.OK;
  },
};

const STATE_HINT: Record<TaskSummary['state'], string> = {
  running: 'running',
  interrupted: INTERRUPTED_HINT,
  awaiting_answer: 'awaiting an answer',
  awaiting_review: 'awaiting review',
  ready: 'ready',
  waiting: 'waiting on dependencies',
  needs_validation: 'needs a validation command',
  retryable: 'will be retried',
  failed: 'attempts exhausted',
  blocked: 'blocked',
  completed: '',
};

function statePaint(state: TaskSummary['state'], c: Colours): (text: string) => string {
  if (state === 'completed') return c.green;
  if (state === 'failed' || state === 'retryable') return c.red;
  if (state === 'blocked' || state === 'needs_validation' || state === 'awaiting_answer') return c.yellow;
  if (state === 'running' || state === 'interrupted') return c.cyan;
  return (t) => t;
}

export function formatStatus(r: StatusReport, c: Colours = colours(false)): string {
  const lines: string[] = [];
  // Titles, errors and log lines come from files anyone can edit: they never drive the terminal.
  const e = escapeControlChars;
  lines.push(`Launchpad: ${e(r.root)}`);
  lines.push(
    `Tasks: ${formatCounts(r, { all: true })} (attempts ${r.attempts_total}${r.cost_usd !== null ? `, $${r.cost_usd} reported` : ''})`,
  );
  lines.push(`Sessions: ${r.session_count}${r.last_session ? ` (last ${r.last_session})` : ''}`);
  if (r.active_session)
    lines.push(`Active run: ${e(r.active_session.command)} (pid=${r.active_session.pid}, since ${e(r.active_session.acquired_at)})`);
  lines.push('');
  for (const t of r.tasks) {
    const shown = t.state === 'blocked' ? 'blocked' : t.status;
    let line = `${statePaint(t.state, c)(`[${shown}]`)} ${t.id}: ${e(t.title)} (${t.attempts}/${t.max_attempts})`;
    if (t.status === 'in_progress' && t.agent_id) line += ` [agent=${t.agent_id}]`;
    const hint = STATE_HINT[t.state];
    if (hint && hint !== shown) line += ` - ${hint}`;
    if (t.state === 'blocked' && t.blocked_reason) line += `: ${e(t.blocked_reason)}`;
    else if ((t.state === 'retryable' || t.state === 'failed') && t.last_error) line += `: ${e(t.last_error)}`;
    lines.push(line);
    if (t.state === 'awaiting_answer' && t.question) {
      lines.push(`    asks: ${e(t.question.text)}`);
      lines.push(`    answer: launchpad answer ${t.id} "…"`);
    } else if (t.question?.answer !== undefined && t.question.answer !== null) {
      lines.push(`    asked: ${e(t.question.text)}  answered: ${e(t.question.answer)}`);
    }
    if (t.kept_attempts.length) lines.push(`    kept attempts: ${t.kept_attempts.join(', ')}`);
    if (describeCost(t.cost)) lines.push(`    cost reported: ${describeCost(t.cost)}`);
    if (t.out_of_scope.length) lines.push(`    merged outside files_hint: ${e(t.out_of_scope.join(', '))}`);
  }
  if (!r.tasks.length) lines.push('(no tasks yet: launchpad add "Title" --validate "CMD")');
  const gate = integrationLine(r);
  if (gate) lines.push('', e(gate));
  lines.push('');
  lines.push('Worktrees:');
  if (r.worktrees.length) for (const w of r.worktrees) lines.push(`  ${e(w.branch)}  ${e(w.path)}`);
  else lines.push('  (none)');
  if (r.worktree_pool) lines.push(`Worktree pool (worktree_pool: ${r.worktree_pool.size}): ${r.worktree_pool.summary}`);
  lines.push('');
  lines.push('Recent log:');
  for (const l of r.recent_log) lines.push(`  ${paintLogLine(e(l), c)}`);
  if (!r.recent_log.length) lines.push('  (empty)');
  return lines.join('\n') + '\n';
}

/** The base branch's last integration check, its flaky results and the tasks it reverted. */
function integrationLine(r: StatusReport): string | undefined {
  if (r.integration_error) return `Integration check: cannot read its state: ${r.integration_error} (the next run checks the base again)`;
  const g = r.integration;
  if (!g?.commit) return undefined;
  const parts = [`Integration check: ${g.status} at ${g.commit.slice(0, 7)}${g.checked_at ? ` (${g.checked_at})` : ''}`];
  if (g.status !== 'green' && g.last_green) parts.push(`last green ${g.last_green.slice(0, 7)}`);
  if (g.flaky.length) parts.push(`${g.flaky.length} flaky`);
  if (g.reverted.length) parts.push(`reverted: ${g.reverted.map((x) => `${x.task} (${x.merge.slice(0, 7)})`).join(', ')}`);
  return parts.join('; ');
}
