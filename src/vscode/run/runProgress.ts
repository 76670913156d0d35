// What a person sees of a run: a progress notification with the task counts while it runs, a
// status-bar item with the same counts that stays for the run and shows its outcome afterwards,
// one message with the outcome and its counts (or why the run could not start), and one for each
// task that uses all its attempts. Messages are never modal: each button runs a command.
import * as vscode from 'vscode';

import type { RunOutcome } from '../../core/controller/types';
import { isExpectedError } from '../../core/expectedErrors';
import type { Logger } from '../../core/logger';
import { computeStats, type Stats } from '../../core/tasks/stats';
import { COMMANDS } from '../contributions';
import type { StateModel } from '../model/stateModel';
import { offer } from '../notify';
import type { ActiveRun, RunManager } from './runManager';

export function registerRunProgress(context: vscode.ExtensionContext, runs: RunManager, model: StateModel, logger: Logger): void {
  let item: vscode.StatusBarItem | undefined;
  // The tasks' reported cost when the run started: the status bar shows what this run added.
  let costAtStart: number | undefined;
  const statusItem = () => {
    if (!item) {
      item = vscode.window.createStatusBarItem('launchpad.run', vscode.StatusBarAlignment.Left, 50);
      item.name = 'Launchpad Run';
      context.subscriptions.push(item);
    }
    return item;
  };

  context.subscriptions.push(
    runs.onDidChange((e) => {
      if (e.kind === 'started') {
        costAtStart = currentStats(model)?.cost_usd;
        showRunning(statusItem(), model, costAtStart);
        void notify(e.run, model);
        return;
      }
      if (e.kind === 'attempts-exhausted') {
        announceExhausted(e.task.id, e.summary);
        return;
      }
      if (e.outcome) showOutcome(statusItem(), e.outcome);
      else statusItem().hide();
      announce(e.outcome, e.error, logger);
    }),
    model.onDidChange(() => {
      if (runs.active && item) showRunning(item, model, costAtStart);
    }),
  );
}

/** `2/6 completed · 2 running · 1 failed`: the counts of the task file as it is now. */
export function formatCounts(st: Stats): string {
  const parts = [`${st.completed}/${st.tasks_total} completed`];
  if (st.in_batch) parts.push(`${st.in_batch} running`);
  if (st.failed) parts.push(`${st.failed} failed`);
  if (st.blocked) parts.push(`${st.blocked} blocked`);
  return parts.join(' · ');
}

function currentStats(model: StateModel): Stats | undefined {
  const file = model.snapshot?.file;
  return file ? computeStats(file.tasks) : undefined;
}

/** Dollars the run's agents reported so far: `$0.0842`; '' until one reported any. */
export function runCost(now: number | undefined, atStart: number | undefined): string {
  if (now === undefined || now === atStart) return '';
  return `$${Number((now - (atStart ?? 0)).toFixed(10))}`;
}

function showRunning(item: vscode.StatusBarItem, model: StateModel, costAtStart: number | undefined): void {
  const st = currentStats(model);
  const cost = runCost(st?.cost_usd, costAtStart);
  item.text = `$(sync~spin) Launchpad${st ? `: ${formatCounts(st)}` : ''}${cost ? ` · ${cost}` : ''}`;
  item.tooltip = 'Launchpad is running agents. Click to show the tasks; "Launchpad: Stop Run" ends them.';
  item.command = 'workbench.view.extension.launchpad';
  item.backgroundColor = undefined;
  item.show();
}

function showOutcome(item: vscode.StatusBarItem, outcome: RunOutcome): void {
  const ok = outcome.exitCode === 0;
  item.text = `${ok ? '$(pass)' : '$(warning)'} Launchpad: ${formatCounts(outcome.stats)}`;
  item.tooltip = `Last run (session ${outcome.session}): ${outcome.message}. Click for the status.`;
  item.command = COMMANDS.status;
  item.backgroundColor = ok ? undefined : new vscode.ThemeColor('statusBarItem.warningBackground');
  item.show();
}

async function notify(run: ActiveRun, model: StateModel): Promise<void> {
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Launchpad' }, async (progress) => {
    const report = () => {
      const st = currentStats(model);
      progress.report({ message: st ? `running: ${formatCounts(st)}` : 'starting…' });
    };
    report();
    const sub = model.onDidChange(report);
    try {
      await run.done.catch(() => undefined);
    } finally {
      sub.dispose();
    }
  });
}

function announce(outcome: RunOutcome | undefined, error: unknown, logger: Logger): void {
  if (!outcome) {
    const known = isExpectedError(error);
    const message = error instanceof Error ? error.message : String(error);
    if (!known) logger.error(error instanceof Error ? error : message);
    offer('error', `Launchpad: ${known ? message : `the run failed: ${message} (see the extension log)`}`, {
      'Show Log': () => vscode.commands.executeCommand(COMMANDS.showOutput),
    });
    return;
  }
  const st = outcome.stats;
  // (The outcome's message has the counts.) The failures of this run: its session's ERROR lines, in a filtered view of the log.
  const actions: Record<string, () => unknown> = {};
  if (st.failed || st.blocked)
    actions['Show Failures'] = () => vscode.commands.executeCommand(COMMANDS.filterLog, { type: 'ERROR', session: outcome.session });
  actions['Open Log'] = () => vscode.commands.executeCommand(COMMANDS.revealInLog);
  // A budget (6) or a usage limit (7) stopped the run: a warning saying when to go on, not an
  // error. Notes (files an in-place attempt moved away) make a success a warning too.
  const notes = outcome.notes ?? [];
  const level =
    outcome.exitCode === 0 && !notes.length
      ? 'info'
      : outcome.exitCode <= 1 || outcome.exitCode === 6 || outcome.exitCode === 7
        ? 'warning'
        : 'error';
  for (const n of notes) logger.warn(n);
  offer(level, [`Launchpad: ${outcome.message}`, ...notes].join(' · '), actions);
}

/** A task has used all its attempts: retry it, or see its error where the log records it. */
function announceExhausted(taskId: string, summary: string): void {
  offer('warning', `Launchpad: ${summary}`, {
    Retry: () => vscode.commands.executeCommand(COMMANDS.retryTask, taskId),
    'Show Error': () => vscode.commands.executeCommand(COMMANDS.revealInLog, taskId),
  });
}
