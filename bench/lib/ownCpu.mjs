// Loaded into a `launchpad run` the benchmarks time (node --import): at its exit, the CPU time of
// that process (user + system, its children not included) and of the helper it starts its
// commands from once it is large (spawnerMain.py or .js, its child), in ms, go to the file BENCH_OWN_CPU
// names, which the benchmark reads: the controller's own time, which no other process's share of
// the machine or the disk stretches. The helper's work is the controller's (a small controller
// starts its commands itself), so it counts.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

const file = process.env.BENCH_OWN_CPU;
if (file) {
  // Not for what it starts (an agent may be node too).
  delete process.env.BENCH_OWN_CPU;
  process.on('exit', () => {
    const { user, system } = process.cpuUsage();
    writeFileSync(file, `${(user + system) / 1000} ${helperCpuMs()}\n`);
  });
}

/**
 * The helper's CPU time so far (it ends after this process), from /proc: the time each of its
 * threads has spent on a CPU (schedstat, in nanoseconds), or else its user + system time (stat,
 * in hundredths of a second). 0 without a helper, or without /proc.
 */
function helperCpuMs() {
  let children;
  try {
    children = readFileSync(`/proc/self/task/${process.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    return 0;
  }
  let ms = 0;
  for (const pid of children) {
    try {
      if (!/spawnerMain\.(js|py)\0/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))) continue;
      ms += processCpuMs(pid);
    } catch {
      // It ended already.
    }
  }
  return ms;
}

/** A process's CPU time so far (ms): its threads' time on a CPU, else its user + system time. */
export function processCpuMs(pid) {
  return onCpuMs(pid) ?? ticksMs(pid);
}

function onCpuMs(pid) {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`))
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    return ns / 1e6;
  } catch {
    return undefined;
  }
}

function ticksMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // After the command name in parentheses: field 3 (state) first, so utime and stime (fields 14
  // and 15) are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
