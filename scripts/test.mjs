// npm test: every stage in turn (build, type check, lint, the unit suites, the agent CLIs against the scripted model server, the VS Code host
// suites), each one's time printed as it ends and all of them at the end; the first that fails
// ends the run with its exit code.
import { spawnSync } from 'node:child_process';

const STAGES = [
  ['build', 'build'],
  ['typecheck', 'typecheck'],
  ['lint', 'lint'],
  ['unit', 'test:unit'],
  ['agents', 'test:agents'],
  ['vscode', 'test:vscode'],
];

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const times = [];
const started = Date.now();
const clock = (ms) => `${Math.floor(ms / 60000)}:${String(Math.round((ms % 60000) / 1000)).padStart(2, '0')}`;
let code = 0;
// Ctrl-C reaches the running stage too (one process group): it ends, and this stops after it
// with the summary, instead of dying without one. SIGTERM keeps its default: a kill of this
// process alone must not leave it running the next stages.
process.on('SIGINT', () => {});
for (const [name, script] of STAGES) {
  const t0 = Date.now();
  console.log(`\n=== ${name} (npm run ${script})`);
  // Not `npm run --silent`: npm passes its log level on to every npm the tests start.
  const r = spawnSync(npm, ['run', script], { stdio: 'inherit' });
  const ms = Date.now() - t0;
  const signal = r.signal ?? (r.status === 130 ? 'SIGINT' : undefined);
  code = signal ? 130 : (r.status ?? 1);
  const verdict = signal ? `interrupted (${signal})` : code === 0 ? 'ok' : `FAILED (exit ${code})`;
  times.push(`${name.padEnd(10)} ${clock(ms).padStart(6)}  ${verdict}`);
  console.log(`=== ${name}: ${signal ? verdict : code === 0 ? 'ok' : `failed, exit ${code}`} in ${clock(ms)}`);
  if (code !== 0) break;
}
console.log(`\n${times.join('\n')}\n${'total'.padEnd(10)} ${clock(Date.now() - started).padStart(6)}`);
process.exit(code);
