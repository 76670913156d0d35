// Process bookkeeping for run.mjs: every command starts as the leader of its own process group
// and carries the run id in its environment, so cleanup can end all of it, including children
// that left the group (chromium's crashpad handler does).
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pids = () =>
  readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map(Number);

/** Starts cmd in a new process group; each output line goes to log as `[name] line`, and is emitted as 'line'. */
export function startGroup(name, cmd, args, { env, log }) {
  const child = spawn(cmd, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream.on('data', (d) => {
      const lines = (rest + d).split('\n');
      rest = lines.pop();
      for (const line of lines) {
        log(`[${name}] ${line}`);
        child.emit('line', line);
      }
    });
  }
  child.on('exit', (code, sig) => log(`[runner] ${name} (pid ${child.pid}) exited: ${sig ?? code}`));
  child.on('error', (e) => log(`[runner] ${name} failed to start: ${e.message}`));
  return child;
}

/** True while group pgid has a live member. Zombies are dead already: PID 1 reaps orphans late here. */
function groupAlive(pgid) {
  return pids().some((pid) => {
    try {
      const [state, , pgrp] = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').pop().split(' ');
      return Number(pgrp) === pgid && state !== 'Z';
    } catch {
      return false;
    } // exited meanwhile
  });
}

/** SIGTERM the whole group; SIGKILL whatever is left after the grace period. */
export async function killGroup(child, log, graceMs = 3000) {
  if (!child?.pid) return;
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  } // group already gone
  const t0 = Date.now();
  while (Date.now() - t0 < graceMs && groupAlive(child.pid)) await sleep(50);
  const kill = groupAlive(child.pid);
  if (kill)
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* gone meanwhile */
    }
  log(
    `[runner] process group ${child.pid} ${kill ? `outlived SIGTERM by ${graceMs} ms: SIGKILL` : `ended ${Date.now() - t0} ms after SIGTERM`}`,
  );
}

/** Live processes whose environment holds HOST_TEST_RUN_ID=runId (readable by their owner or root). */
export function runPids(runId) {
  const marker = `HOST_TEST_RUN_ID=${runId}\0`;
  return pids().filter((pid) => {
    if (pid === process.pid) return false;
    try {
      return readFileSync(`/proc/${pid}/environ`, 'latin1').includes(marker);
    } catch {
      return false;
    }
  });
}

export function rssKb(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
