// Review before merge in the editor: Review Changes… opens a task awaiting review in the
// multi-file diff (its base against its worktree, or against its commit when only the branch is
// left), where a person comments on lines; Approve and Request Changes send the verdict through
// the bundled CLI (`launchpad review | approve | request-changes`), as a terminal would.
import { join } from 'node:path';

import * as vscode from 'vscode';

import type { ReviewView } from '../../core/review/review';
import type { ReviewComment } from '../../core/taskFile/schema';
import { taskIdOf } from '../commands/args';
import { baseUri } from '../commands/compareWorktree';
import type { CommandDeps, Handlers } from '../commands/deps';
import { reportEditError } from '../commands/errors';
import { COMMANDS } from '../contributions';
import { cliJson } from '../run/cli';
import { requireTrust } from '../trust';
import type { DraftComment, ReviewComments } from './reviewComments';

/** What `launchpad review ID --json` prints: the core's view of a change under review. */
type ReviewInfo = ReviewView;

type ReviewCommand =
  typeof COMMANDS.reviewTask | typeof COMMANDS.approveTask | typeof COMMANDS.requestChanges | typeof COMMANDS.addReviewComment;

export function reviewCommands(deps: CommandDeps, review: ReviewComments): Handlers<ReviewCommand> {
  return {
    [COMMANDS.reviewTask]: (arg) => reviewTask(deps, review, arg),
    [COMMANDS.approveTask]: (arg) => approveTask(deps, review, arg),
    [COMMANDS.requestChanges]: (arg) => requestChanges(deps, review, arg),
    [COMMANDS.addReviewComment]: (arg) => {
      if (isReply(arg)) review.reply(arg);
    },
  };
}

/**
 * Review Changes…: the task given (a row, an id, a notification's button), else a pick of the
 * tasks awaiting review. Each changed file opens with the base on the left and the task's
 * version on the right: the file in its worktree (comments sit on the real file), or the file
 * at its commit.
 */
async function reviewTask(deps: CommandDeps, review: ReviewComments, arg: unknown): Promise<void> {
  if (!requireTrust('Review Changes')) return;
  const id = await awaitingTask(deps, review, arg, 'Review Changes');
  const paths = deps.model.stateRoot();
  if (!id || !paths) return;
  let info: ReviewInfo;
  try {
    info = await cliJson<ReviewInfo>(['review', id, '--dir', paths.root], { cwd: paths.root });
  } catch (err) {
    reportEditError('review', err, deps.logger);
    return;
  }
  const title = `${id}: review round ${info.round} (${info.base.slice(0, 7)}..${info.commit.slice(0, 7)})`;
  if (!info.files.length) {
    void vscode.window.showInformationMessage(
      `Launchpad: ${id} changes no file since ${info.base.slice(0, 7)}; approve it or request changes.`,
    );
    return;
  }
  const repo = paths.root;
  const resources = info.files.map(({ path, status }) => {
    const modified = info.worktree ? vscode.Uri.file(join(info.worktree, path)) : baseUri({ repo, commit: info.commit, path });
    // An added file's left side is empty (the provider gives '' for a path not in the base): the
    // multi-file diff then lists it with the others, every line added.
    const original = baseUri({ repo, commit: info.base, path });
    return { path, resource: modified, original, modified: status === 'D' ? undefined : modified };
  });
  review.open(
    id,
    resources.flatMap((r) => (r.modified ? [{ uri: r.modified, path: r.path }] : [])),
  );
  await vscode.commands.executeCommand(
    'vscode.changes',
    title,
    resources.map((r) => [r.resource, r.original, r.modified]),
  );
}

/** Approve: the next run merges the task first, no agent runs. */
async function approveTask({ model, logger }: CommandDeps, review: ReviewComments, arg: unknown): Promise<void> {
  if (!requireTrust('Approve')) return;
  const id = await awaitingTask({ model }, review, arg, 'Approve');
  const paths = model.stateRoot();
  if (!id || !paths) return;
  try {
    await cliJson(['approve', id, '--dir', paths.root], { cwd: paths.root });
    review.clear(id);
    void vscode.window.showInformationMessage(`Launchpad: ${id} is approved; the next run merges it first.`);
  } catch (err) {
    reportEditError('approve', err, logger);
  } finally {
    void model.refresh();
  }
}

/**
 * Request Changes: every draft comment of the task (or `comments` in the argument, for a
 * script), else one comment from an input box; the next run resumes the task's agent with them.
 */
async function requestChanges({ model, logger }: CommandDeps, review: ReviewComments, arg: unknown): Promise<void> {
  if (!requireTrust('Request Changes')) return;
  const id = await awaitingTask({ model }, review, arg, 'Request Changes');
  const paths = model.stateRoot();
  if (!id || !paths) return;
  const given = givenComments(arg);
  const drafts = given ?? review.drafts(id);
  const flags = drafts.map((d) => `${d.file}:${d.line} ${d.comment}`);
  if (!flags.length) {
    const general = await vscode.window.showInputBox({
      title: `Request changes to ${id}`,
      prompt: 'No comment on a line yet: what should the agent change?',
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() ? undefined : 'A comment is needed'),
    });
    if (general === undefined) return;
    flags.push(general.trim());
  }
  try {
    const r = await cliJson<{ round: number; comments: ReviewComment[] }>(
      ['request-changes', id, ...flags.flatMap((f) => ['--comment', f]), '--dir', paths.root],
      { cwd: paths.root },
    );
    review.clear(id);
    const n = r.comments.length;
    void vscode.window.showInformationMessage(
      `Launchpad: changes requested on ${id} (round ${r.round}); the next run resumes it with ${n} comment${n === 1 ? '' : 's'}.`,
    );
  } catch (err) {
    reportEditError('request changes', err, logger);
  } finally {
    void model.refresh();
  }
}

/**
 * The task a command acts on: an id or row, the task of a comment thread (its menus), else a
 * pick of the tasks awaiting review. Undefined, after saying why, when it does not await review.
 */
async function awaitingTask(
  { model }: Pick<CommandDeps, 'model'>,
  review: ReviewComments,
  arg: unknown,
  title: string,
): Promise<string | undefined> {
  const s = await model.refresh();
  let id = taskIdOf(arg) ?? (isThread(arg) ? review.taskOf(arg) : undefined) ?? (isReply(arg) ? review.taskOf(arg.thread) : undefined);
  if (!id) {
    const waiting = s.tasks.filter((t) => t.state === 'awaiting_review');
    if (!waiting.length) {
      void vscode.window.showInformationMessage(s.error ? `Launchpad: ${s.error.message}` : 'Launchpad: no task awaits review.');
      return undefined;
    }
    const picked = await vscode.window.showQuickPick(
      waiting.map((t) => ({ label: t.id, description: t.title, id: t.id })),
      { title, placeHolder: 'A task awaiting review', matchOnDescription: true },
    );
    id = picked?.id;
  }
  if (!id) return undefined;
  if (s.byId.get(id)?.state !== 'awaiting_review') {
    void vscode.window.showInformationMessage(`Launchpad: ${id} does not await review.`);
    return undefined;
  }
  return id;
}

function givenComments(arg: unknown): DraftComment[] | undefined {
  // A comment thread (the thread menus' argument) has comments of its own: those are drafts.
  if (!arg || typeof arg !== 'object' || isThread(arg) || !('comments' in arg) || !Array.isArray(arg.comments)) return undefined;
  const given = (arg.comments as unknown[]).filter(
    (c): c is DraftComment =>
      !!c &&
      typeof c === 'object' &&
      typeof (c as DraftComment).file === 'string' &&
      typeof (c as DraftComment).line === 'number' &&
      typeof (c as DraftComment).comment === 'string',
  );
  return given.length ? given : undefined;
}

function isThread(arg: unknown): arg is vscode.CommentThread {
  return !!arg && typeof arg === 'object' && 'uri' in arg && 'comments' in arg;
}

function isReply(arg: unknown): arg is vscode.CommentReply {
  return !!arg && typeof arg === 'object' && 'thread' in arg && 'text' in arg && isThread(arg.thread);
}
