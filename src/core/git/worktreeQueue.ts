// git's worktree commands run one at a time in this process (git.ts says why). A task's own
// command waiting for its turn goes before the worktree pool's background work that is waiting
// (a new slot's checkout of a large repository takes seconds): a dispatch waits for at most the
// one command already running, never for a queue of the pool's.

type Start = () => void;

const waiting: { task: Start[]; background: Start[] } = { task: [], background: [] };
let busy = false;

/** Runs `work` when no other worktree command of this process is running; `background` ones last. */
export function oneAtATime<T>(work: () => Promise<T>, background = false): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    (background ? waiting.background : waiting.task).push(() => {
      Promise.resolve().then(work).then(resolve, reject).finally(next);
    });
    if (!busy) next();
  });
}

function next(): void {
  const start = waiting.task.shift() ?? waiting.background.shift();
  busy = start !== undefined;
  start?.();
}
