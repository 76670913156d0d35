// Review before merge, as a person drives it: what a task awaiting review changed (the files and
// the diff since its branch left the base), its approval, and a request for changes with comments
// on lines of the reviewed commit. The task's state changes go through transitions.ts; this
// reads git and writes the REVIEW log lines. Both faces (the CLI, the editor) call it.
import type { Git } from '../git/git';
import { branchFor } from '../ids';
import { InputError } from '../inputError';
import { ProgressLog } from '../log/progressLog';
import { DEFAULT_REVIEW_ROUNDS, type ReviewComment, type Task } from '../taskFile/schema';
import type { StateStore } from '../taskFile/store';
import { SHARED } from '../tasks/edits';
import { taskWithId } from '../tasks/taskIndex';
import { approveReview, requestChanges } from '../tasks/transitions';

export interface ChangedFile {
  /** Relative to the repository top. */
  path: string;
  /** git's letter: A added, M modified, D deleted, R renamed (then `from` is the old path). */
  status: string;
  from?: string;
}

export interface ReviewView {
  id: string;
  title: string;
  status: Task['status'];
  round: number;
  max_rounds: number;
  branch: string;
  base: string;
  commit: string;
  /** The task's worktree, absolute; null when only its branch is left. */
  worktree: string | null;
  files: ChangedFile[];
  comments: ReviewComment[];
}

/** A comment as a person gives it: `path:line text`, the line counted from 1 in the reviewed commit. */
export interface CommentInput {
  file: string;
  line: number;
  comment: string;
}

/** The task awaiting review, or an InputError naming why not. */
function underReview(store: StateStore, id: string): Task {
  const task = taskWithId(store.load().file.tasks, id);
  if (!task) throw new InputError(`no task "${id}" in harness-tasks.json`);
  if (task.status !== 'awaiting_review' || !task.review_round) {
    throw new InputError(`task "${id}" is ${task.status.replace('_', ' ')}, not awaiting review`);
  }
  return task;
}

/** What a person reviews: the task's changes from its base to the reviewed commit. */
export async function reviewOf(store: StateStore, git: Git, id: string): Promise<ReviewView> {
  const task = underReview(store, id);
  const round = task.review_round!;
  const branch = branchFor(id);
  const worktree = (await git.listWorktrees()).find((w) => w.branch === `refs/heads/${branch}`)?.path ?? null;
  return {
    id,
    title: task.title,
    status: task.status,
    round: round.number,
    max_rounds: maxRounds(store),
    branch,
    base: round.base,
    commit: round.commit,
    worktree,
    files: await changedFiles(git, round.base, round.commit),
    comments: round.comments ?? [],
  };
}

/** `git diff` of the reviewed change, for a terminal. */
export async function reviewDiff(git: Git, view: ReviewView, color: boolean): Promise<string> {
  const r = await git.run(['diff', color ? '--color=always' : '--no-color', '-M', view.base, view.commit], { cwd: await top(git) });
  return r.stdout;
}

async function changedFiles(git: Git, base: string, commit: string): Promise<ChangedFile[]> {
  const r = await git.run(['diff', '--name-status', '-z', '-M', base, commit], { cwd: await top(git) });
  const parts = r.stdout.split('\0').filter((p, i, all) => p !== '' || i < all.length - 1);
  const files: ChangedFile[] = [];
  for (let i = 0; i < parts.length && parts[i];) {
    const status = parts[i]!.charAt(0);
    if (status === 'R' || status === 'C') {
      files.push({ path: parts[i + 2]!, status, from: parts[i + 1]! });
      i += 3;
    } else {
      files.push({ path: parts[i + 1]!, status });
      i += 2;
    }
  }
  return files;
}

/** A person approves: the next run validates the reviewed commit again and merges it, first. */
export async function approveLogged(store: StateStore, id: string): Promise<Task> {
  const { task, session } = await store.transact((file) => ({ task: approveReview(file, id), session: file.session_count }), SHARED);
  const round = task.review_round!;
  log(store, session, `approved round=${round.number} commit=${round.commit.slice(0, 7)}`, id);
  return task;
}

/**
 * A person asks for changes: each comment's line is read from the reviewed commit (a line that
 * is not there is refused, naming the comment), then the task is pending with the comments and
 * the next run resumes its agent with them. Nothing changes when any comment is refused.
 */
export async function requestChangesLogged(store: StateStore, git: Git, id: string, inputs: readonly CommentInput[]): Promise<Task> {
  const task = underReview(store, id);
  const commit = task.review_round!.commit;
  const comments: ReviewComment[] = [];
  for (const [i, c] of inputs.entries()) {
    const where = `comment ${i + 1} (${c.file}:${c.line})`;
    if (!c.comment.trim()) throw new InputError(`${where}: the comment is empty`);
    const shown = await git.run(['show', `${commit}:${c.file}`], { allowFail: true, cwd: await top(git) });
    if (shown.code !== 0) throw new InputError(`${where}: ${c.file} is not in the reviewed commit ${commit.slice(0, 7)}`);
    const lines = shown.stdout.split('\n');
    if (lines.at(-1) === '') lines.pop();
    if (c.line < 1 || c.line > lines.length) {
      throw new InputError(`${where}: ${c.file} has ${lines.length} line(s) in the reviewed commit ${commit.slice(0, 7)}`);
    }
    comments.push({ file: c.file, line: c.line, text: lines[c.line - 1]!, comment: c.comment });
  }
  const max = maxRounds(store);
  const { changed, session } = await store.transact(
    (file) => ({ changed: requestChanges(file, id, comments, max), session: file.session_count }),
    SHARED,
  );
  log(store, session, `changes requested round=${changed.review_round!.number} comments=${comments.length}`, id);
  return changed;
}

/** `path:line text`, as `request-changes --comment` takes it; the path may hold colons, the line may not. */
export function parseComment(spec: string, index: number): CommentInput {
  const m = /^(.+?):(\d+)\s+([\s\S]+)$/.exec(spec.trim());
  if (!m) throw new InputError(`--comment ${index + 1} "${spec}": expected "path:line text" (the line counted from 1)`);
  return { file: m[1]!.replace(/^\.\//, ''), line: Number(m[2]), comment: m[3]!.trim() };
}

function maxRounds(store: StateStore): number {
  return store.load().file.session_config.max_review_rounds ?? DEFAULT_REVIEW_ROUNDS;
}

async function top(git: Git): Promise<string> {
  return (await git.toplevel()) ?? git.cwd;
}

function log(store: StateStore, session: number, message: string, taskId: string): void {
  new ProgressLog(store.paths.progress).append(session, { type: 'REVIEW', taskId, message });
}
