// Runs the built CLI (dist/cli.js) as a child process, as a user would.
import { spawn, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

export const CLI = resolve(__dirname, '../../../../dist/cli.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number }): CliResult {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: opts.cwd,
    env: { ...process.env, HARNESS_STATE_ROOT: '', LAUNCHPAD_AGENT: '', ...opts.env },
    input: opts.input ?? '',
    encoding: 'utf8',
    timeout: opts.timeoutMs ?? 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The same, without blocking the test process (for concurrent runs and kills). */
export function startCli(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }) {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: opts.cwd,
    env: { ...process.env, HARNESS_STATE_ROOT: '', LAUNCHPAD_AGENT: '', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliResult>((resolvePromise) => child.on('close', (code) => resolvePromise({ code, stdout, stderr })));
  return { child, done, output: () => ({ stdout, stderr }) };
}
