// What wakes the run loop, as one closed set of events posted to one inbox: the loop takes the
// next event and looks at the whole state again (events that came meanwhile are already in the
// state it reads, so a burst of them costs one more pass at most).

export type LoopEvent =
  /** A person's stop, or a cause that stops the session. */
  | { kind: 'stop' }
  /** A task's completion ran the next pool pass and claimed work for the loop to dispatch. */
  | { kind: 'pass-ready' }
  /** An attempt ended (recorded, or interrupted). */
  | { kind: 'attempt-ended'; taskId: string }
  /** A failed task's retry back-off is over. */
  | { kind: 'retry-due' }
  /** A concurrent worker looks at the other workers' claims again. */
  | { kind: 'poll' };

export class LoopInbox {
  private readonly queued: LoopEvent[] = [];
  private wake: (() => void) | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();

  post(event: LoopEvent): void {
    this.queued.push(event);
    this.wake?.();
    this.wake = undefined;
  }

  /** The next event (at once when one is waiting), and whatever else was waiting with it. */
  async next(): Promise<LoopEvent[]> {
    while (!this.queued.length) await new Promise<void>((resolve) => (this.wake = resolve));
    return this.queued.splice(0);
  }

  /** Posts `event` after `ms`, unless cancelled first; `clearTimers` cancels every pending one. */
  after(ms: number, event: LoopEvent): void {
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        this.post(event);
      },
      Math.max(0, ms),
    );
    this.timers.add(timer);
  }

  clearTimers(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
