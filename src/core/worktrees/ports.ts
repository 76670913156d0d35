// A block of TCP ports per running task, so two tasks whose validations start a server (a dev
// server, a test database) do not fight over one port. The block's first port is in
// LAUNCHPAD_PORT_BASE (and its size in LAUNCHPAD_PORT_COUNT) for the task's set-up, agent and
// validation. A block is handed to one task at a time, and only after each of its ports was
// bound on 127.0.0.1 and let go: a port some other program listens on is never handed out.
// (Between that check and the task's own bind, another program could still take one: the check
// narrows the window, it cannot close it.)
import { createHash } from 'node:crypto';
import { createServer } from 'node:net';

/** session_config.port_block_size when absent. */
export const DEFAULT_PORT_BLOCK_SIZE = 10;
/**
 * The ports blocks are taken from: registered-port space below Linux's ephemeral range
 * (32768–60999), so an outgoing connection's local port does not land in a block.
 */
export const PORT_RANGE = { first: 20_000, end: 32_000 } as const;

export interface PortLease {
  /** The block's first port. */
  base: number;
  size: number;
  /** The variables a task's processes get. */
  env: { LAUNCHPAD_PORT_BASE: string; LAUNCHPAD_PORT_COUNT: string };
  /** Gives the block back once its holder is done (each lease once). */
  release(): void;
}

export class NoFreePortBlockError extends Error {}

/**
 * The blocks of one session. Leasing again for a task that holds a block gives the same block
 * (the validation of a running task, a re-validation after a rebase); the block is free again
 * once every lease of it is released.
 */
export class PortBlocks {
  private readonly held = new Map<string, { base: number; count: number }>();
  /** Blocks being checked or held: never handed to two tasks. */
  private readonly taken = new Set<number>();
  private readonly blocks: number;
  private readonly start: number;

  /**
   * @param seed where the search starts (the state root): two repositories on one machine start
   * in different places, so their runs rarely even need the bind check to stay apart.
   */
  constructor(
    readonly size: number,
    seed: string,
    private readonly range: { first: number; end: number } = PORT_RANGE,
  ) {
    this.blocks = Math.floor((range.end - range.first) / size);
    if (this.blocks < 1) throw new RangeError(`a port block of ${size} does not fit in ${range.first}–${range.end - 1}`);
    this.start = createHash('sha256').update(seed).digest().readUInt32BE(0) % this.blocks;
  }

  async lease(taskId: string): Promise<PortLease> {
    const current = this.held.get(taskId);
    if (current) {
      current.count++;
      return this.handle(taskId, current.base);
    }
    for (let i = 0; i < this.blocks; i++) {
      const base = this.range.first + ((this.start + i) % this.blocks) * this.size;
      if (this.taken.has(base)) continue;
      this.taken.add(base);
      if (await allFree(base, this.size)) {
        // Another lease for this task may have finished while this one checked.
        const meanwhile = this.held.get(taskId);
        if (meanwhile) {
          this.taken.delete(base);
          meanwhile.count++;
          return this.handle(taskId, meanwhile.base);
        }
        this.held.set(taskId, { base, count: 1 });
        return this.handle(taskId, base);
      }
      this.taken.delete(base);
    }
    throw new NoFreePortBlockError(
      `no block of ${this.size} free ports on 127.0.0.1 between ${this.range.first} and ${this.range.end - 1}`,
    );
  }

  /** The task's run has ended: its block is free again, whatever leases of it are left. */
  releaseTask(taskId: string): void {
    const h = this.held.get(taskId);
    if (!h) return;
    this.held.delete(taskId);
    this.taken.delete(h.base);
  }

  /** The block a task holds now, if any. */
  blockOf(taskId: string): number | undefined {
    return this.held.get(taskId)?.base;
  }

  private handle(taskId: string, base: number): PortLease {
    let released = false;
    return {
      base,
      size: this.size,
      env: { LAUNCHPAD_PORT_BASE: String(base), LAUNCHPAD_PORT_COUNT: String(this.size) },
      release: () => {
        if (released) return;
        released = true;
        const h = this.held.get(taskId);
        if (!h || h.base !== base || --h.count > 0) return;
        this.held.delete(taskId);
        this.taken.delete(base);
      },
    };
  }
}

async function allFree(base: number, size: number): Promise<boolean> {
  for (let port = base; port < base + size; port++) if (!(await canBind(port))) return false;
  return true;
}

/** Whether a listening socket can be bound on 127.0.0.1:port right now. */
export function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}
