// What a person sees of a run: a progress notification with the task counts while it runs, a
// status-bar item with the same counts (both from the model's snapshot, core/tasks/counts.ts) that stays for the run and shows its outcome afterwards,
// one message with the outcome and its counts (or why the run could not start), one for each
// task that uses all its attempts, one for each question an agent asks and one for each task that awaits review. Messages are never modal: each button runs a command.
import * as vscode from 'vscode';

import type { RunOutcome } from '../../core/controller/types';
import { isExpectedError } from '../../core/expectedErrors';
import type { Logger } from '../../core/logger';
import { formatCounts } from '../../core/tasks/counts';
import { computeStats } from '../../core/tasks/stats';
import { COMMANDS } from '../contributions';
import type { StateModel, StateSnapshot } from '../model/stateModel';
import { offer } from '../notify';
import type { ActiveRun, RunManager } from './runManager';

/** What the window shows of runs now: the status bar's text and the progress notification's message (host tests read them). */
export interface ShownRun {
  statusBar: string | undefined;
  progress: string | undefined;
}

const shown: ShownRun = { statusBar: undefined, progress: undefined };

export function shownRun(): ShownRun {
  return { ...shown };
}

export function registerRunProgress(context: vscode.ExtensionContext, runs: RunManager, model: StateModel, logger: Logger): void {
  let item: vscode.StatusBarItem | undefined;
  // The tasks' reported cost when the run started: the status bar shows what this run added.
  let costAtStart: number | undefined;
  let lastOutcome: RunOutcome | undefined;
  // The progress notifications open now: each shows the same line as the status bar.
  const reporters = new Set<(message: string) => void>();
  const statusItem = () => {
    if (!item) {
      item = vscode.window.createStatusBarItem('launchpad.run', vscode.StatusBarAlignment.Left, 50);
      item.name = 'Launchpad Run';
      context.subscriptions.push(item);
    }
    return item;
  };
  // One snapshot, one count, every place that shows it.
  const render = (s: StateSnapshot | undefined) => {
    const counts = s?.file ? formatCounts(s.counts) : undefined;
    if (runs.active) {
      const message = counts ? `running: ${counts}` : 'starting…';
      shown.progress = message;
      for (const report of reporters) report(message);
      showRunning(statusItem(), counts, runCost(s?.file ? computeStats(s.file.tasks).cost_usd : undefined, costAtStart));
    } else if (lastOutcome && item) showOutcome(item, lastOutcome, counts);
    else return;
    shown.statusBar = item?.text;
  };

  context.subscriptions.push(
    runs.onDidChange((e) => {
      if (e.kind === 'started') {
        const file = model.snapshot?.file;
        costAtStart = file ? computeStats(file.tasks).cost_usd : undefined;
        lastOutcome = undefined;
        void notify(e.run, reporters);
        render(model.snapshot);
        return;
      }
      if (e.kind === 'attempts-exhausted') {
        announceExhausted(e.task.id, e.summary);
        return;
      }
      if (e.kind === 'question') {
        announceQuestion(e.taskId, e.question);
        return;
      }
      if (e.kind === 'review') {
        announceReview(e.taskId, e.round);
        return;
      }
      lastOutcome = e.outcome;
      if (e.outcome) render(model.snapshot);
      else {
        statusItem().hide();
        shown.statusBar = undefined;
      }
      announce(e.outcome, e.error, logger, model.snapshot);
    }),
    model.onDidChange((s) => {
      if (item) render(s);
    }),
  );
}

/** Dollars the run's agents reported so far: `$0.0842`; '' until one reported any. */
export function runCost(now: number | undefined, atStart: number | undefined): string {
  if (now === undefined || now === atStart) return '';
  return `$${Number((now - (atStart ?? 0)).toFixed(10))}`;
}

function showRunning(item: vscode.StatusBarItem, counts: string | undefined, cost: string): void {
  item.text = `$(sync~spin) Launchpad${counts ? `: ${counts}` : ''}${cost ? ` · ${cost}` : ''}`;
  item.tooltip = 'Launchpad is running agents. Click to show the tasks; "Launchpad: Stop Run" ends them.';
  item.command = 'workbench.view.extension.launchpad';
  item.backgroundColor = undefined;
  item.show();
}

function showOutcome(item: vscode.StatusBarItem, outcome: RunOutcome, counts: string | undefined): void {
  const ok = outcome.exitCode === 0;
  item.text = `${ok ? '$(pass)' : '$(warning)'} Launchpad${counts ? `: ${counts}` : ''}`;
  item.tooltip = `Last run (session ${outcome.session}): ${outcome.message}. Click for the status.`;
  item.command = COMMANDS.status;
  item.backgroundColor = ok ? undefined : new vscode.ThemeColor('statusBarItem.warningBackground');
  item.show();
}

async function notify(run: ActiveRun, reporters: Set<(message: string) => void>): Promise<void> {
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Launchpad' }, async (progress) => {
    const report = (message: string) => progress.report({ message });
    reporters.add(report);
    try {
      await run.done.catch(() => undefined);
    } finally {
      reporters.delete(report);
      if (!reporters.size) shown.progress = undefined;
    }
  });
}

function announce(outcome: RunOutcome | undefined, error: unknown, logger: Logger, s: StateSnapshot | undefined): void {
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
  // The work left waits for people (exit 8): answers and reviews are what move it on.
  if (outcome.exitCode === 8) {
    if (s?.counts.awaiting_answer || !s?.counts.awaiting_review)
      actions['Answer Question…'] = () => vscode.commands.executeCommand(COMMANDS.answerQuestion);
    if (s?.counts.awaiting_review) actions['Review Changes…'] = () => vscode.commands.executeCommand(COMMANDS.reviewTask);
  }
  actions['Open Log'] = () => vscode.commands.executeCommand(COMMANDS.revealInLog);
  // A budget (6) or a usage limit (7) stopped the run: a warning saying when to go on, not an
  // error. Notes (files an in-place attempt moved away) make a success a warning too.
  const notes = outcome.notes ?? [];
  const level =
    outcome.exitCode === 0 && !notes.length
      ? 'info'
      : outcome.exitCode <= 1 || outcome.exitCode === 6 || outcome.exitCode === 7 || outcome.exitCode === 8
        ? 'warning'
        : 'error';
  for (const n of notes) logger.warn(n);
  offer(level, [`Launchpad: ${outcome.message}`, ...notes].join(' · '), actions);
}

/** A task's agent asked a question: answer it (the task waits, the run goes on). */
function announceQuestion(taskId: string, question: string): void {
  offer('warning', `Launchpad: ${taskId} asks: ${question}`, {
    Answer: () => vscode.commands.executeCommand(COMMANDS.answerQuestion, taskId),
  });
}

/** A task awaits a person's review (the run goes on with the others). */
function announceReview(taskId: string, round: number): void {
  offer('warning', `Launchpad: ${taskId} awaits your review (round ${round})`, {
    Review: () => vscode.commands.executeCommand(COMMANDS.reviewTask, taskId),
  });
}

/** A task has used all its attempts: retry it, or see its error where the log records it. */
function announceExhausted(taskId: string, summary: string): void {
  offer('warning', `Launchpad: ${summary}`, {
    Retry: () => vscode.commands.executeCommand(COMMANDS.retryTask, taskId),
    'Show Error': () => vscode.commands.executeCommand(COMMANDS.revealInLog, taskId),
  });
}
