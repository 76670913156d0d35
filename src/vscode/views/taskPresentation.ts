// How a task looks: its state's words, icon and colour, its row (label and description) and the hover.
// Everything shown comes from the snapshot; nothing here decides a state.
import * as vscode from 'vscode';

import type { TaskState } from '../../core/tasks/dag';
import { describeCost } from '../../core/tasks/stats';
import { escapeMarkdown, fencedBlock } from '../markdown';
import type { TaskEntry } from '../model/stateModel';

export const STATE_LABELS: Record<TaskState, string> = {
  running: 'Running',
  interrupted: 'Interrupted, to resume',
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
  ready: ['circle-large-outline', 'charts.green'],
  retryable: ['error', 'list.warningForeground'],
  needs_validation: ['warning', 'list.warningForeground'],
  waiting: ['watch', undefined],
  blocked: ['circle-slash', 'list.errorForeground'],
  failed: ['error', 'list.errorForeground'],
  completed: ['pass', 'testing.iconPassed'],
};

export function stateIcon(state: TaskState, spin = true): vscode.ThemeIcon {
  const [icon, color] = ICONS[state];
  const id = spin ? icon : icon.replace('~spin', '');
  return new vscode.ThemeIcon(id, color ? new vscode.ThemeColor(color) : undefined);
}

/** The state in a word or two, where the row itself must say it (the dependency view has no groups). */
export const STATE_WORDS: Record<TaskState, string> = {
  running: 'running',
  interrupted: 'interrupted',
  ready: 'ready',
  retryable: 'will retry',
  needs_validation: 'no validation',
  waiting: 'waiting',
  blocked: 'blocked',
  failed: 'failed',
  completed: 'completed',
};

export interface TaskRow {
  /** The id: short, and what the log, the terminals and the status name a task by. */
  label: string;
  /** `1/3 · P1 · step 2/5 · title`: what changes first, the title last, where a narrow sidebar cuts. */
  description: string;
  /** The whole row in words, for screen readers. */
  accessible: string;
}

/**
 * A task's row. The sidebar cuts a row at its end, so what must survive at its default width
 * (300 px: some 30 characters after the icon) comes first: the id, the attempts used of the
 * budget, the priority, the checkpoint of a running task. The title follows, as much as fits;
 * the hover has it whole. The state is the icon and the group (in the dependency view, a word).
 */
export function taskRow(t: TaskEntry, opts: { stateWord?: boolean; cycle?: boolean } = {}): TaskRow {
  const parts = [`${t.attempts}/${t.max_attempts}`, t.priority];
  if (opts.stateWord) parts.unshift(STATE_WORDS[t.state]);
  // Checkpoints outlive their attempt: only the running (or interrupted) agent's own say where it is.
  const checkpoint =
    t.state === 'running' || t.state === 'interrupted'
      ? t.task.checkpoints?.findLast((c) => !c.agent_id || c.agent_id === t.agent_id)
      : undefined;
  if (checkpoint) parts.push(`step ${checkpoint.step}/${checkpoint.total}`);
  // Concurrent mode: which worker holds it, and until when (its lease, renewed while it works).
  if (t.state === 'running' && t.task.claimed_by) parts.push(`${t.task.claimed_by}${leaseTime(t) ? ` until ${leaseTime(t)}` : ''}`);
  if (t.cost?.usd !== undefined) parts.push(`$${t.cost.usd}`);
  if (opts.cycle) parts.push('cycle');
  parts.push(t.title);
  const accessible = [
    `${t.id}: ${t.title}`,
    STATE_LABELS[t.state],
    `attempts ${t.attempts} of ${t.max_attempts}`,
    `priority ${t.priority}`,
    ...(checkpoint ? [`step ${checkpoint.step} of ${checkpoint.total}`] : []),
  ].join(', ');
  return { label: t.id, description: parts.join(' · '), accessible };
}

/** The lease's end as HH:MM:SS UTC, or undefined. */
function leaseTime(t: TaskEntry): string | undefined {
  return /T(\d\d:\d\d:\d\d)/.exec(t.task.lease_expires_at ?? '')?.[1];
}

const MAX_ERRORS = 10;
const MAX_CHECKPOINTS = 5;
const TAIL_LINES = 30;
const TAIL_CHARS = 2000;

/** The hover: state, dependencies, validation, why it is blocked, what failed and where it got. */
export function taskTooltip(t: TaskEntry): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  const line = (label: string, value: string) => {
    md.appendMarkdown(`**${label}:** ${escapeMarkdown(value)}\n\n`);
  };
  md.appendMarkdown(`**${escapeMarkdown(t.id)}** ${escapeMarkdown(t.title)}\n\n`);
  line('State', `${STATE_LABELS[t.state]} · ${t.priority} · attempts ${t.attempts}/${t.max_attempts}`);
  line('Depends on', t.depends_on.length ? t.depends_on.join(', ') : 'nothing');
  line('Validation', t.validation_command ?? 'none (a run will not start this task)');
  if (describeCost(t.cost)) line('Cost reported', describeCost(t.cost));
  if (t.out_of_scope.length) line('Merged outside files_hint', t.out_of_scope.join(', '));
  if (t.blocked_reason) line('Blocked', t.blocked_reason);
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
    md.appendMarkdown('**Checkpoints:**\n\n');
    if (checkpoints.length > MAX_CHECKPOINTS) md.appendMarkdown(`- … ${checkpoints.length - MAX_CHECKPOINTS} earlier\n`);
    for (const c of checkpoints.slice(-MAX_CHECKPOINTS)) {
      md.appendMarkdown(
        `- ${escapeMarkdown(`${c.attempt ? `attempt ${c.attempt}, ` : ''}step ${c.step}/${c.total} "${c.description}" (${c.timestamp})`)}\n`,
      );
    }
    md.appendMarkdown('\n');
  }

  const errors = t.task.error_log;
  if (errors.length) {
    md.appendMarkdown('**Error log:**\n\n');
    if (errors.length > MAX_ERRORS) md.appendMarkdown(`- … ${errors.length - MAX_ERRORS} earlier entries\n`);
    for (const e of errors.slice(-MAX_ERRORS)) {
      md.appendMarkdown(`- ${escapeMarkdown(e)}\n`);
    }
    md.appendMarkdown('\n');
  }
  const tail = t.task.error_tail?.trim();
  if (tail) {
    md.appendMarkdown('**Last output of the failure:**\n\n');
    md.appendMarkdown(fencedBlock(boundTail(tail)));
  }
  return md;
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
