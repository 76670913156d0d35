// A file per live task process under .launchpad/procs, so a session that starts after a crash
// can end the agents and validations the dead controller left running: their process group,
// the processes that left it (found by cgroup or environment marker), and their watchdog.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { logTimestamp } from '../log/logLine';
import { isSameProcessAlive, processIdentity } from '../processIdentity';
import { isCgroup, removeCgroupWhenEmptySync } from './cgroup';
import { groupAlive, killGroup } from './killGroup';
import { ProcessTree } from './processTree';

interface ProcessRecord {
  pid: number;
  identity?: string | undefined;
  label: string;
  started_at: string;
  /** The _LAUNCHPAD_PROC value every process of the run inherits. */
  marker?: string;
  /** The run's cgroup directory, where one was made. */
  cgroup?: string;
  watchdog?: { pid: number; identity?: string | undefined };
}

export interface RunTracking {
  marker: string;
  cgroup?: string | undefined;
  watchdog?: { pid: number; identity: string | undefined } | undefined;
}

/** A recorded run that was ended: its label, and how many of its processes had left its group. */
export interface EndedRun {
  label: string;
  escaped: number;
}

export class ProcessRecords {
  constructor(readonly dir: string) {}

  add(name: string, pid: number, label: string, tracking?: RunTracking): void {
    mkdirSync(this.dir, { recursive: true });
    const record: ProcessRecord = { pid, identity: processIdentity(pid), label, started_at: logTimestamp() };
    if (tracking) {
      record.marker = tracking.marker;
      if (tracking.cgroup) record.cgroup = tracking.cgroup;
      if (tracking.watchdog) record.watchdog = tracking.watchdog;
    }
    writeFileSync(join(this.dir, `${name}.json`), JSON.stringify(record) + '\n');
  }

  remove(name: string): void {
    rmSync(join(this.dir, `${name}.json`), { force: true });
  }

  /** Ends every recorded run still running; returns their labels. */
  killAll(): string[] {
    return this.endAll().map((r) => r.label);
  }

  /**
   * Ends every recorded run still running, each record removed: its group while the leader is
   * still the same process (or the leader is gone and the group lives on), the processes that
   * left the group, and its watchdog.
   */
  endAll(): EndedRun[] {
    return this.endWhere(() => true);
  }

  /** Ends the recorded runs of one task only (`<id>.agent`, `<id>.validate`, …): a concurrent worker's take-over. */
  endTask(taskId: string): EndedRun[] {
    return this.endWhere((name) => name.startsWith(`${taskId}.`) && !name.slice(taskId.length + 1, -'.json'.length).includes('.'));
  }

  private endWhere(match: (name: string) => boolean): EndedRun[] {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((n) => n.endsWith('.json') && match(n));
    } catch {
      return [];
    }
    const ended: EndedRun[] = [];
    for (const name of names) {
      const path = join(this.dir, name);
      try {
        const record = JSON.parse(readFileSync(path, 'utf8')) as ProcessRecord;
        const group = endGroup(record);
        // Processes that carry the run's marker or sit in its cgroup are the run's whatever
        // became of its leader's pid.
        const cgroup = record.cgroup && isCgroup(record.cgroup) ? record.cgroup : undefined;
        const tree = record.marker ? new ProcessTree(record.pid, record.marker, cgroup) : undefined;
        tree?.killEscaped();
        if (record.watchdog && isSameProcessAlive(record.watchdog.pid, record.watchdog.identity)) killGroup(record.watchdog.pid, 'SIGKILL');
        if (cgroup) removeCgroupWhenEmptySync(cgroup);
        if (group || tree?.escapedCount) ended.push({ label: record.label, escaped: tree?.escapedCount ?? 0 });
      } catch {
        // An unreadable record names nothing we could safely signal.
      }
      rmSync(path, { force: true });
    }
    return ended;
  }
}

/** SIGKILLs the recorded group if it is still ours; true when it did. */
function endGroup(record: ProcessRecord): boolean {
  if (processExists(record.pid)) {
    // The leader is alive: ours only if it is still the same process (pids are reused).
    return isSameProcessAlive(record.pid, record.identity) && killGroup(record.pid, 'SIGKILL');
  }
  // The leader is gone but its group lives on: a group id is not reused while the group
  // exists, so what is left in it is what our process started.
  return groupAlive(record.pid) && killGroup(record.pid, 'SIGKILL');
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
