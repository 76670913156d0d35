// How a task looks: its state's words, icon and colour, its row (label and description) and the hover.
// Everything shown comes from the snapshot; nothing here decides a state.
import * as vscode from 'vscode';

import type { RevertedTask } from '../../core/integration/state';
import { INTERRUPTED_HINT } from '../../core/statusReport';
import type { TaskState } from '../../core/tasks/dag';
import { describeCost } from '../../core/tasks/stats';
import { escapeMarkdown, fencedBlock } from '../markdown';
import type { TaskEntry } from '../model/stateModel';
import { reviewRound } from '../review/round';

export const STATE_LABELS: Record<TaskState, string> = {
  running: 'Running',
  interrupted: 'Interrupted, to resume',
  awaiting_answer: 'Awaiting an answer',
  awaiting_review: 'Awaiting review',
  ready: 'Ready',
  retryable: 'Failed, will be retried',
  needs_validation: 'Needs a validation command',
  waiting: 'Waiting on dependencies',
  blocked: 'Blocked',
  failed: 'Failed (attempts exhausted)',
  completed: 'Completed',
};

const ICONS: Record<TaskState, [icon: string, color: string | undefined]> = {
  running: ['sync~spin', 'charts.blue'],
  interrupted: ['debug-pause', 'list.warningForeground'],
  awaiting_answer: ['question', 'list.warningForeground'],
  awaiting_review: ['git-pull-request', 'list.warningForeground'],
  ready: ['circle-large-outline', 'charts.green'],
  retryable: ['error', 'list.warningForeground'],
  needs_validation: ['warning', 'list.warningForeground'],
  waiting: ['watch', undefined],
  blocked: ['circle-slash', 'list.errorForeground'],
  failed: ['error', 'list.errorForeground'],
  completed: ['pass', 'testing.iconPassed'],
};

/** A task's icon: its state's (a pause for a task in progress that no run holds). */
export function taskIcon(t: TaskEntry): vscode.ThemeIcon {
  return stateIcon(t.state);
}

export function stateIcon(state: TaskState, spin = true): vscode.ThemeIcon {
  const [icon, color] = ICONS[state];
  const id = spin ? icon : icon.replace('~spin', '');
  return new vscode.ThemeIcon(id, color ? new vscode.ThemeColor(color) : undefined);
}

/** The state in a word or two, where the row itself must say it (the dependency view has no groups). */
export const STATE_WORDS: Record<TaskState, string> = {
  running: 'running',
  interrupted: 'interrupted',
  awaiting_answer: 'asks a question',
  awaiting_review: 'awaits review',
  ready: 'ready',
  retryable: 'will retry',
  needs_validation: 'no validation',
  waiting: 'waiting',
  blocked: 'blocked',
  failed: 'failed',
  completed: 'completed',
};

export interface TaskRow {
  /** The title: what a person calls the task, first, so a cut row keeps it. */
  label: string;
  /** `task-003 · 1/3 · P1 · step 2/5`: the id the log and terminals use, then what changes. */
  description: string;
  /** The whole row in words, for screen readers. */
  accessible: string;
}

/** What a row needs to know beyond its task: the run's lock, and (dependency view) where it sits. */
export interface RowContext {
  /** The dependency view has no groups: the state is a word. */
  stateWord?: boolean;
  cycle?: boolean;
  /** Its unfinished dependencies, for a task that waits or is blocked. */
  waitsFor?: readonly string[];
  /** Dependency view: its other dependencies, where it is shown in full. */
  alsoAfter?: readonly string[];
  /** Dependency view: the dependency it is shown in full under ('' for the top level), where this row only points there. */
  shownUnder?: string;
  /** The integration gate's last revert of this task's merge, when it has one. */
  reverted?: RevertedTask | undefined;
}

/** The state's words for this task: a task in progress that no run holds is interrupted, as `launchpad status` says. */
export function stateLabel(t: TaskEntry): string {
  return t.state === 'interrupted' ? `Interrupted (${INTERRUPTED_HINT.replace('interrupted: ', '')})` : STATE_LABELS[t.state];
}

/**
 * A task's row. VS Code cuts a row at its end, so the title leads (the label) and the id, the
 * attempts used of the budget, the priority and the checkpoint of a running task follow in the
 * description; the hover has everything whole. The state is the icon and the group (in the
 * dependency view, a word).
 */
export function taskRow(t: TaskEntry, ctx: RowContext): TaskRow {
  const interrupted = t.state === 'interrupted';
  const parts = [t.id];
  if (interrupted || ctx.stateWord) parts.push(STATE_WORDS[t.state]);
  parts.push(`${t.attempts}/${t.max_attempts}`, t.priority);
  // Checkpoints outlive their attempt: only the running (or interrupted) agent's own say where it is.
  const checkpoint =
    t.state === 'running' || interrupted ? t.task.checkpoints?.findLast((c) => !c.agent_id || c.agent_id === t.agent_id) : undefined;
  if (checkpoint) parts.push(`step ${checkpoint.step}/${checkpoint.total}`);
  // Concurrent mode: which worker holds it, and until when (its lease, renewed while it works).
  if (t.state === 'running' && t.task.claimed_by) parts.push(`${t.task.claimed_by}${leaseTime(t) ? ` until ${leaseTime(t)}` : ''}`);
  if (t.cost?.usd !== undefined) parts.push(`$${t.cost.usd}`);
  if (ctx.cycle) parts.push('cycle');
  if (ctx.shownUnder !== undefined) parts.push(ctx.shownUnder ? `shown under ${ctx.shownUnder}` : 'shown at the top');
  else if (ctx.alsoAfter?.length) parts.push(`also after ${ctx.alsoAfter.join(', ')}`);
  else if (ctx.waitsFor?.length) parts.push(`waits for ${ctx.waitsFor.join(', ')}`);
  const accessible = [
    `${t.title} (${t.id})`,
    stateLabel(t),
    `attempts ${t.attempts} of ${t.max_attempts}`,
    `priority ${t.priority}`,
    ...(checkpoint ? [`step ${checkpoint.step} of ${checkpoint.total}`] : []),
    ...(ctx.waitsFor?.length ? [`waits for ${ctx.waitsFor.join(', ')}`] : []),
  ].join(', ');
  return { label: t.title, description: parts.join(' · '), accessible };
}

/** The dependencies of a task that are not completed yet (unknown ids included: they never complete). */
export function unfinishedDependencies(t: TaskEntry, byId: ReadonlyMap<string, TaskEntry>): string[] {
  return t.depends_on.filter((d) => byId.get(d)?.status !== 'completed');
}

/** The lease's end as HH:MM:SS UTC, or undefined. */
function leaseTime(t: TaskEntry): string | undefined {
  return /T(\d\d:\d\d:\d\d)/.exec(t.task.lease_expires_at ?? '')?.[1];
}

const MAX_ERRORS = 10;
const MAX_CHECKPOINTS = 5;
const TAIL_LINES = 30;
const TAIL_CHARS = 2000;

/** The hover: the task's details in short. */
export function taskTooltip(t: TaskEntry, ctx: Pick<RowContext, 'waitsFor' | 'reverted'>): vscode.MarkdownString {
  return new vscode.MarkdownString(taskDetails(t, ctx));
}

/**
 * A task's details as Markdown, for its hover and for Open Task: state, what it waits for,
 * validation, why it is blocked, what failed and where it got.
 */
export function taskDetails(t: TaskEntry, ctx: Pick<RowContext, 'waitsFor' | 'reverted'>, heading = false): string {
  const out: string[] = [];
  const line = (label: string, value: string) => out.push(`**${label}:** ${escapeMarkdown(value)}\n\n`);
  out.push(heading ? `# ${escapeMarkdown(t.title)}\n\n\`${t.id}\`\n\n` : `**${escapeMarkdown(t.title)}** ${escapeMarkdown(t.id)}\n\n`);
  line('State', `${stateLabel(t)} · ${t.priority} · attempts ${t.attempts}/${t.max_attempts}`);
  line('Depends on', t.depends_on.length ? t.depends_on.join(', ') : 'nothing');
  if (ctx.waitsFor?.length) line('Waits for', ctx.waitsFor.join(', '));
  line('Validation', t.validation_command ?? 'none (a run will not start this task)');
  if (describeCost(t.cost)) line('Cost reported', describeCost(t.cost));
  if (t.out_of_scope.length) line('Merged outside files_hint', t.out_of_scope.join(', '));
  if (t.blocked_reason) line('Blocked', t.blocked_reason);
  if (t.question) {
    line(t.state === 'awaiting_answer' ? 'Asks' : 'Asked', t.question.text);
    if (typeof t.question.answer === 'string') line('Answer', t.question.answer);
    else line('To answer', `Answer Question… on its row, or launchpad answer ${t.id} "…"`);
  }
  const round = reviewRound(t.task);
  if (round && t.state === 'awaiting_review') {
    line('Review', `round ${round.number}, commit ${round.commit.slice(0, 7)} (from ${round.base.slice(0, 7)})`);
    line('To review', `Review Changes… on its row, or launchpad review ${t.id}`);
  } else if (round?.verdict) {
    const n = round.comments?.length ?? 0;
    line(
      'Review',
      round.verdict === 'approved'
        ? `round ${round.number} approved: the next run merges it`
        : `round ${round.number}: changes requested (${n} comment${n === 1 ? '' : 's'})`,
    );
  }
  // Reverted by the integration gate: its merge, the revert, and the tasks it broke the base together with.
  const r = ctx.reverted;
  if (r && t.status !== 'completed') {
    const withWhom = r.collided_with.length ? `; it collided with ${r.collided_with.join(', ')}` : '';
    line('Reverted from the base', `merge ${r.merge.slice(0, 7)} reverted by ${r.revert.slice(0, 7)} (${r.at})${withWhom}`);
  }
  if (t.state === 'running' && t.agent_id)
    line('Agent', `${t.agent_id}${t.worktree_branch ? ` on ${t.worktree_branch}` : ' in the main working tree (in place)'}`);
  if (t.state === 'running' && t.task.claimed_by) {
    line(
      'Claimed by',
      // A queue worker (claimed_by "queue:<id>") has no lease here: its job's lock is the queue's.
      `${t.task.claimed_by}${t.task.lease_expires_at ? `, lease until ${t.task.lease_expires_at} (claim ${t.task.claim_generation ?? 0})` : ''}`,
    );
  }
  if (t.kept_attempts.length) line('Kept attempts', `${t.kept_attempts.join(', ')} (launchpad prune-attempts deletes them)`);

  const checkpoints = t.task.checkpoints ?? [];
  if (checkpoints.length) {
    out.push('**Checkpoints:**\n\n');
    if (checkpoints.length > MAX_CHECKPOINTS) out.push(`- … ${checkpoints.length - MAX_CHECKPOINTS} earlier\n`);
    for (const c of checkpoints.slice(-MAX_CHECKPOINTS)) {
      out.push(
        `- ${escapeMarkdown(`${c.attempt ? `attempt ${c.attempt}, ` : ''}step ${c.step}/${c.total} "${c.description}" (${c.timestamp})`)}\n`,
      );
    }
    out.push('\n');
  }

  const errors = t.task.error_log;
  if (errors.length) {
    out.push('**Error log:**\n\n');
    if (errors.length > MAX_ERRORS) out.push(`- … ${errors.length - MAX_ERRORS} earlier entries\n`);
    for (const e of errors.slice(-MAX_ERRORS)) out.push(`- ${escapeMarkdown(e)}\n`);
    out.push('\n');
  }
  const tail = t.task.error_tail?.trim();
  if (tail) out.push('**Last output of the failure:**\n\n', fencedBlock(boundTail(tail)));
  return out.join('');
}

/** The last lines of a failure's output, bounded for a hover. */
export function boundTail(tail: string): string {
  let lines = tail.split(/\r?\n/);
  const cut = lines.length > TAIL_LINES;
  lines = lines.slice(-TAIL_LINES);
  let text = lines.join('\n');
  if (text.length > TAIL_CHARS) text = text.slice(-TAIL_CHARS);
  return (cut || text.length < tail.length ? '…\n' : '') + text;
}
