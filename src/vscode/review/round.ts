// A task's review round as the task file holds it (`review_round`), read where the core's type
// does not name it yet.
import type { Task } from '../../core/taskFile/schema';

export interface ReviewComment {
  /** Relative to the repository's top. */
  file: string;
  /** 1-based, in the round's commit. */
  line: number;
  /** That line's text. */
  text: string;
  comment: string;
}

export interface ReviewRound {
  number: number;
  commit: string;
  base: string;
  requested_at: string;
  verdict?: 'approved' | 'changes_requested';
  decided_at?: string;
  comments?: ReviewComment[];
}

export function reviewRound(t: Task): ReviewRound | undefined {
  const r = (t as { review_round?: ReviewRound | null }).review_round;
  return r ?? undefined;
}
