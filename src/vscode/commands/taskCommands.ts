// Commands on one task: open it (a click on its row), retry (menu, palette), answer its agent's
// question (menu, palette, the notification), reveal it in the Tasks view, show its latest
// transcript, reveal its last line in the progress log.
import { existsSync } from 'node:fs';

import * as vscode from 'vscode';

import { lastLineOfTask } from '../../core/log/logPosition';
import { confirm } from '../confirm';
import { COMMANDS } from '../contributions';
import type { TaskEntry } from '../model/stateModel';
import { cliJson } from '../run/cli';
import { requireTrust } from '../trust';
import { taskIdOf } from './args';
import type { CommandDeps, Handlers } from './deps';
import { reportEditError } from './errors';
import { showTask } from './statusDocument';

type TaskCommand =
  | typeof COMMANDS.retryTask
  | typeof COMMANDS.answerQuestion
  | typeof COMMANDS.taskClicked
  | typeof COMMANDS.revealTask
  | typeof COMMANDS.showTranscript
  | typeof COMMANDS.revealInLog;

export function taskCommands(deps: CommandDeps): Handlers<TaskCommand> {
  return {
    [COMMANDS.retryTask]: (arg) => retryFromMenu(deps, arg),
    [COMMANDS.answerQuestion]: (arg) => answerQuestion(deps, arg),
    [COMMANDS.taskClicked]: (arg) => taskClicked(deps, taskIdOf(arg)),
    [COMMANDS.revealTask]: async (arg) => {
      const id = taskIdOf(arg);
      if (id && !(await deps.views.revealTask(id)))
        void vscode.window.showInformationMessage(`Launchpad: no task "${id}" in harness-tasks.json.`);
    },
    [COMMANDS.showTranscript]: (arg) => showTranscript(deps, taskIdOf(arg)),
    [COMMANDS.revealInLog]: (arg) => revealInLog(deps, taskIdOf(arg)),
  };
}

/**
 * Retry Task: the task of the menu item or id given (asking first, in a quick pick, when its
 * attempts are used up), else a pick of the failed tasks.
 */
async function retryFromMenu(deps: CommandDeps, arg: unknown): Promise<void> {
  if (!requireTrust('Retry Task')) return;
  const given = taskIdOf(arg);
  const id = given ?? (await pickFailedTask(deps));
  if (!id) return;
  const entry = deps.model.snapshot?.byId.get(id);
  if (given && entry?.state === 'failed') {
    const again = await confirm({
      title: `Retry ${entry.id}? It used all ${entry.max_attempts} attempts.`,
      action: 'Retry',
      detail: `A fresh budget of ${entry.max_attempts} attempts; its error log is kept for the next prompt.${entry.last_error ? ` Last: ${entry.last_error}` : ''}`,
    });
    if (!again) return;
  }
  await retry(deps, id);
}

/**
 * Open Task, what a click on a row runs: a task a run works on shows its terminal, a task awaiting
 * review its changes (Review Changes…); any other opens its
 * details (state, what it waits for, its error log and last output). A click changes nothing:
 * Retry Task is the row's button.
 */
async function taskClicked(deps: CommandDeps, id: string | undefined): Promise<void> {
  const entry = id ? deps.model.snapshot?.byId.get(id) : undefined;
  if (!entry) return;
  if (entry.state === 'running') {
    deps.runs.revealTerminal(entry.id);
    return;
  }
  if (entry.state === 'awaiting_review') {
    await vscode.commands.executeCommand(COMMANDS.reviewTask, entry.id);
    return;
  }
  await showTask(entry.id);
}

async function retry({ model, logger }: CommandDeps, id: string): Promise<void> {
  const paths = model.stateRoot();
  if (!paths) return;
  try {
    const { reset } = await cliJson<{ reset: Array<{ id: string }> }>(['retry', id, '--dir', paths.root], { cwd: paths.root });
    const others = reset.filter((t) => t.id !== id).map((t) => t.id);
    void vscode.window.showInformationMessage(
      `Launchpad: ${id} is pending again${others.length ? `; unblocked ${others.join(', ')}` : ''}. The next run picks it up.`,
    );
  } catch (err) {
    reportEditError('retry', err, logger);
  } finally {
    void model.refresh();
  }
}

/**
 * Answer Question…: the task of the menu item, notification or id given, else a pick of the tasks
 * awaiting an answer; the answer from an input box showing the question (or `answer` in the
 * argument, `{ taskId, answer }`, for a script); `launchpad answer` through the bundled CLI
 * records it, and the next run resumes the task first.
 */
async function answerQuestion({ model, logger }: CommandDeps, arg: unknown): Promise<void> {
  if (!requireTrust('Answer Question')) return;
  const s = await model.refresh();
  const waiting = s.tasks.filter((t) => t.state === 'awaiting_answer' && t.question);
  let id = taskIdOf(arg);
  if (!id) {
    if (!waiting.length) {
      void vscode.window.showInformationMessage(s.error ? `Launchpad: ${s.error.message}` : 'Launchpad: no task awaits an answer.');
      return;
    }
    const picked = await vscode.window.showQuickPick(
      waiting.map((t) => ({ label: t.id, description: t.title, detail: t.question!.text, id: t.id })),
      { title: 'Answer Question', placeHolder: 'A task whose agent asked a question', matchOnDescription: true, matchOnDetail: true },
    );
    id = picked?.id;
  }
  const entry = id ? s.byId.get(id) : undefined;
  if (!id || !entry) return;
  if (entry.state !== 'awaiting_answer' || !entry.question) {
    void vscode.window.showInformationMessage(`Launchpad: ${id} does not await an answer.`);
    return;
  }
  const given = arg && typeof arg === 'object' && 'answer' in arg && typeof arg.answer === 'string' ? arg.answer : undefined;
  const answer =
    given ??
    (await vscode.window.showInputBox({
      title: `${id} asks: ${entry.question.text}`,
      prompt: entry.question.text,
      placeHolder: 'Your answer: the agent continues its work with it',
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() ? undefined : 'An answer is needed'),
    }));
  if (answer === undefined) return;
  const paths = model.stateRoot();
  if (!paths) return;
  try {
    await cliJson(['answer', id, answer, '--json', '--dir', paths.root], { cwd: paths.root });
    void vscode.window.showInformationMessage(`Launchpad: ${id} is answered; the next run resumes it first.`);
  } catch (err) {
    reportEditError('answer', err, logger);
  } finally {
    void model.refresh();
  }
}

async function pickFailedTask({ model }: CommandDeps): Promise<string | undefined> {
  const s = await model.refresh();
  const failed = s.tasks.filter((t) => t.status === 'failed');
  if (!failed.length) {
    void vscode.window.showInformationMessage(s.error ? `Launchpad: ${s.error.message}` : 'Launchpad: no failed task to retry.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    failed.map((t) => ({ label: t.id, description: t.title, detail: failedDetail(t), id: t.id })),
    { title: 'Retry Task', placeHolder: 'A failed task to make pending again', matchOnDescription: true },
  );
  return picked?.id;
}

function failedDetail(t: TaskEntry): string {
  const why = t.state === 'blocked' ? t.blocked_reason : t.last_error;
  return `attempts ${t.attempts}/${t.max_attempts}${why ? ` · ${why}` : ''}`;
}

async function showTranscript({ model }: CommandDeps, id: string | undefined): Promise<void> {
  if (!id) return;
  const transcript = model.latestAttempt(id)?.transcript;
  if (!transcript || !existsSync(transcript)) {
    void vscode.window.showInformationMessage(`Launchpad: ${id} has no transcript yet; a run writes one per attempt.`);
    return;
  }
  await vscode.window.showTextDocument(vscode.Uri.file(transcript), { preview: true });
}

/** Opens harness-progress.txt at the task's last line (at its end without a task). */
async function revealInLog({ model }: CommandDeps, id: string | undefined): Promise<void> {
  const paths = model.stateRoot();
  if (!paths || !existsSync(paths.progress)) {
    void vscode.window.showInformationMessage('Launchpad: there is no harness-progress.txt yet.');
    return;
  }
  const uri = vscode.Uri.file(paths.progress);
  const found = id ? lastLineOfTask(paths.progress, id) : undefined;
  if (id && !found) void vscode.window.showInformationMessage(`Launchpad: the progress log has no line about ${id} yet.`);
  // vscode.open, not openTextDocument: a very large log opens in the editor without being
  // copied into the extension host.
  const line = found?.line ?? Number.MAX_SAFE_INTEGER;
  const selection = found ? new vscode.Range(line, 0, line, found.text.length) : new vscode.Range(line, 0, line, 0);
  await vscode.commands.executeCommand('vscode.open', uri, { selection, preview: true } satisfies vscode.TextDocumentShowOptions);
}
