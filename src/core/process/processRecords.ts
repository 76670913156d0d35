// A file per live process group under .launchpad/procs, so a session that starts after a crash
// can end the agents and validations the dead controller left running.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isSameProcessAlive, processIdentity } from '../processIdentity';
import { logTimestamp } from '../log/logLine';
import { groupAlive, killGroup } from './killGroup';

interface ProcessRecord {
  pid: number;
  identity?: string | undefined;
  label: string;
  started_at: string;
}

export class ProcessRecords {
  constructor(readonly dir: string) {}

  add(name: string, pid: number, label: string): void {
    mkdirSync(this.dir, { recursive: true });
    const record: ProcessRecord = { pid, identity: processIdentity(pid), label, started_at: logTimestamp() };
    writeFileSync(join(this.dir, `${name}.json`), JSON.stringify(record) + '\n');
  }

  remove(name: string): void {
    rmSync(join(this.dir, `${name}.json`), { force: true });
  }

  /** Ends every recorded group whose leader is still the same process; returns their labels. */
  killAll(): string[] {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((n) => n.endsWith('.json'));
    } catch {
      return [];
    }
    const killed: string[] = [];
    for (const name of names) {
      const path = join(this.dir, name);
      try {
        const record = JSON.parse(readFileSync(path, 'utf8')) as ProcessRecord;
        if (processExists(record.pid)) {
          // The leader is alive: ours only if it is still the same process (pids are reused).
          if (isSameProcessAlive(record.pid, record.identity) && killGroup(record.pid, 'SIGKILL')) killed.push(record.label);
        } else if (groupAlive(record.pid)) {
          // The leader is gone but its group lives on: a group id is not reused while the group
          // exists, so what is left in it is what our process started.
          killGroup(record.pid, 'SIGKILL');
          killed.push(record.label);
        }
      } catch {
        // An unreadable record names nothing we could safely signal.
      }
      rmSync(path, { force: true });
    }
    return killed;
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
