// Loaded into a `launchpad run` the benchmarks time (node --import): at its exit, the CPU time of
// that process alone (user + system, its children not included) goes to the file BENCH_OWN_CPU
// names, which the benchmark reads: the controller's own time, which no other process's share of
// the machine or the disk stretches.
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_OWN_CPU;
if (file) {
  // Not for what it starts (an agent may be node too).
  delete process.env.BENCH_OWN_CPU;
  process.on('exit', () => {
    const { user, system } = process.cpuUsage();
    writeFileSync(file, `${(user + system) / 1000}\n`);
  });
}
