// Merges happen one at a time; when several tasks are ready together, the lowest task id goes
// first (one at a time, in task-id order).
import { compareIds } from '../ids';

interface Waiting {
  id: string;
  run: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** Wraps each merge: a concurrent worker's merge lock and fencing check. */
export type MergeGuard = <T>(id: string, merge: () => Promise<T>) => Promise<T>;

export class MergeQueue {
  private waiting: Waiting[] = [];
  private busy = false;

  constructor(private readonly guard?: MergeGuard) {}

  enqueue<T>(id: string, run: () => Promise<T>): Promise<T> {
    const guarded = this.guard ? () => this.guard!(id, run) : run;
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ id, run: guarded, resolve: resolve as (v: unknown) => void, reject });
      void this.pump();
    });
  }

  private async pump(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      while (this.waiting.length) {
        this.waiting.sort((a, b) => compareIds(a.id, b.id));
        const next = this.waiting.shift()!;
        try {
          next.resolve(await next.run());
        } catch (err) {
          next.reject(err);
        }
      }
    } finally {
      this.busy = false;
    }
  }
}
