// The comments of a review in the editor: one comment controller whose commenting ranges are the
// changed files of the tasks opened for review. A person's comments are drafts held here, per
// task, until Request Changes sends them (or Approve drops them); nothing is written before.
import * as vscode from 'vscode';

export const REVIEW_CONTROLLER_ID = 'launchpad-review';

/** A file opened for review: its task and its path from the repository's top. */
interface ReviewedFile {
  taskId: string;
  path: string;
}

/** A draft comment, as `launchpad request-changes --comment` takes it. */
export interface DraftComment {
  file: string;
  /** 1-based, in the task's version of the file. */
  line: number;
  comment: string;
}

export class ReviewComments implements vscode.Disposable {
  readonly controller = vscode.comments.createCommentController(REVIEW_CONTROLLER_ID, 'Launchpad Review');
  /** uri.toString() of a modified file → its task and path. */
  private readonly files = new Map<string, ReviewedFile>();
  private readonly threads = new Map<vscode.CommentThread, ReviewedFile>();

  constructor() {
    this.controller.options = { prompt: 'Comment for the agent', placeHolder: 'What should change on this line' };
    this.controller.commentingRangeProvider = {
      provideCommentingRanges: (doc) =>
        this.files.has(doc.uri.toString()) ? [new vscode.Range(0, 0, Math.max(doc.lineCount - 1, 0), 0)] : [],
    };
  }

  /** The task's modified files take comments from now on (replacing what it had). */
  open(taskId: string, files: ReadonlyArray<{ uri: vscode.Uri; path: string }>): void {
    for (const [key, f] of this.files) if (f.taskId === taskId) this.files.delete(key);
    for (const f of files) this.files.set(f.uri.toString(), { taskId, path: f.path });
  }

  /** A comment typed into a thread's reply box: a draft of that file's task. */
  reply({ thread, text }: vscode.CommentReply): void {
    const file = this.threads.get(thread) ?? this.files.get(thread.uri.toString());
    if (!file || !text.trim()) return;
    this.threads.set(thread, file);
    const draft: vscode.Comment = {
      body: text,
      mode: vscode.CommentMode.Preview,
      author: { name: 'You' },
      label: 'Draft',
      contextValue: 'draft',
    };
    thread.comments = [...thread.comments, draft];
    thread.label = `Draft for ${file.taskId}`;
    thread.contextValue = 'draft';
    thread.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
  }

  /** The task a thread (a comment menu's argument) belongs to. */
  taskOf(thread: vscode.CommentThread): string | undefined {
    return (this.threads.get(thread) ?? this.files.get(thread.uri.toString()))?.taskId;
  }

  /** Every draft comment of the task, in file and line order. */
  drafts(taskId: string): DraftComment[] {
    const out: DraftComment[] = [];
    for (const [thread, file] of this.threads) {
      if (file.taskId !== taskId || !thread.range) continue;
      for (const c of thread.comments) {
        const comment = typeof c.body === 'string' ? c.body : c.body.value;
        if (comment.trim()) out.push({ file: file.path, line: thread.range.start.line + 1, comment });
      }
    }
    return out.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  }

  /** The review of the task is over: its drafts and threads go, its files take no more comments. */
  clear(taskId: string): void {
    for (const [thread, file] of this.threads) {
      if (file.taskId !== taskId) continue;
      this.threads.delete(thread);
      thread.dispose();
    }
    for (const [key, f] of this.files) if (f.taskId === taskId) this.files.delete(key);
  }

  dispose(): void {
    this.controller.dispose();
  }
}
