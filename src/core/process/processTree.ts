// All the processes one task process started, wherever they went: the members of its cgroup,
// or else the processes carrying its environment marker. A signal to the process group misses
// those that left it (setsid, a shell's job control); these reach them, and count them.
import { cgroupPids, killCgroup } from './cgroup';
import { markedPids, processGroupOf } from './environmentMarker';

export class ProcessTree {
  private readonly escaped = new Set<number>();

  constructor(
    /** The run's process group (its first process's pid). */
    readonly pgid: number,
    readonly token: string,
    readonly cgroup: string | undefined,
  ) {}

  /** Live processes of the run, in its process group or not. */
  members(): number[] {
    return this.cgroup ? cgroupPids(this.cgroup) : markedPids(this.token);
  }

  /** Signals the run's processes that are outside its process group; returns how many. */
  signalEscaped(signal: NodeJS.Signals): number {
    let signalled = 0;
    for (const pid of this.members()) {
      const group = processGroupOf(pid);
      if (group === undefined || group === this.pgid) continue; // gone, or reached by the group signal
      try {
        process.kill(pid, signal);
        this.escaped.add(pid);
        signalled++;
      } catch {
        // gone meanwhile
      }
    }
    return signalled;
  }

  /** SIGKILLs every process of the run outside its group (and, with a cgroup, all of it). */
  killEscaped(): void {
    // Again while a pass finds some: one may have started another while the list was read.
    for (let pass = 0; pass < 5 && this.signalEscaped('SIGKILL') > 0; pass++);
    if (this.cgroup) killCgroup(this.cgroup);
  }

  /** How many processes outside the group were signalled so far. */
  get escapedCount(): number {
    return this.escaped.size;
  }
}
