// Hovering a task id in the progress log shows that task as the task file has it now: title,
// state, attempts, the last error (with the tail of the failing output), the validation command.
import * as vscode from 'vscode';

import { parseLogLine } from '../../core/log/logLine';
import type { TaskState } from '../../core/tasks/dag';
import { COMMANDS } from '../contributions';
import type { StateModel, TaskEntry } from '../model/stateModel';
import { revealTaskUri } from './revealTaskUri';
import { MAX_LINK_LINES } from './taskLinks';
import { TASK_TOKEN } from './taskTokens';

const STATE_ICONS: Record<TaskState, string> = {
  completed: 'pass',
  running: 'sync',
  interrupted: 'debug-pause',
  awaiting_answer: 'question',
  awaiting_review: 'git-pull-request',
  ready: 'circle-outline',
  waiting: 'clock',
  needs_validation: 'warning',
  retryable: 'debug-restart',
  failed: 'error',
  blocked: 'circle-slash',
};
const TAIL_LINES = 8;

export class TaskHoverProvider implements vscode.HoverProvider {
  constructor(private readonly model: StateModel) {}

  provideHover(doc: vscode.TextDocument, position: vscode.Position): vscode.Hover | undefined {
    const range = doc.getWordRangeAtPosition(position, new RegExp(TASK_TOKEN.source));
    if (!range) return undefined;
    const id = doc.getText(range);
    const entry = this.model.snapshot?.byId.get(id);
    // A document small enough for links has the same link on the id already.
    if (entry) return new vscode.Hover(taskMarkdown(entry, doc.lineCount > MAX_LINK_LINES), range);
    // The line's own task, gone from the task file: say so rather than nothing.
    if (parseLogLine(doc.lineAt(position.line).text)?.taskId === id) {
      return new vscode.Hover(new vscode.MarkdownString().appendText(`${id} is not in harness-tasks.json.`), range);
    }
    return undefined;
  }
}

export function taskMarkdown(t: TaskEntry, withLink = true): vscode.MarkdownString {
  const md = new vscode.MarkdownString('', true);
  md.isTrusted = { enabledCommands: [COMMANDS.revealTask] };
  md.appendMarkdown('**').appendText(t.id).appendMarkdown('** — ').appendText(t.title).appendMarkdown('\n\n');
  md.appendMarkdown(`$(${STATE_ICONS[t.state]}) `).appendText(
    `${t.state.replace('_', ' ')} · attempts ${t.attempts}/${t.max_attempts} · ${t.priority}`,
  );
  if (t.depends_on.length) md.appendText(` · depends on ${t.depends_on.join(', ')}`);
  md.appendMarkdown('\n\n');
  if (t.blocked_reason) md.appendText(`Blocked: ${t.blocked_reason}`).appendMarkdown('\n\n');
  if (t.last_error) {
    md.appendText(`Last error: ${t.last_error}`).appendMarkdown('\n\n');
    const tail = t.task.error_tail?.trimEnd().split('\n').slice(-TAIL_LINES).join('\n');
    if (tail) md.appendCodeblock(tail, 'text');
  }
  if (t.out_of_scope.length) md.appendText(`Merged outside files_hint: ${t.out_of_scope.join(', ')}`).appendMarkdown('\n\n');
  md.appendText(`Validation: ${t.validation_command ?? '(none: the task cannot complete until it has one)'}`);
  if (withLink) md.appendMarkdown(`\n\n[Reveal in Tasks view](${revealTaskUri(t.id).toString()})`);
  return md;
}
