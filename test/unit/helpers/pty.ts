// Runs the built CLI in a pseudo-terminal (test/fixtures/tty/pty-run.py), as a person at a
// keyboard: stdin and stdout are a terminal, prompts are answered as they appear.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { CLI } from './cli';
import { tempDir } from './tmp';

const PTY_RUN = resolve(__dirname, '../../../../test/fixtures/tty/pty-run.py');

export interface PtyStep {
  /** A regular expression (Python syntax) the output must show before `send` is typed. */
  expect: string;
  send: string;
}

export interface PtyResult {
  code: number;
  /** Everything the terminal received, escape codes and \r\n included. */
  output: string;
  timedOut: boolean;
  /** Steps whose prompt never appeared. */
  stepsLeft: number;
}

export function runInPty(
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv; steps?: PtyStep[]; timeoutS?: number; columns?: number },
): PtyResult {
  const spec = join(tempDir('launchpad-pty-'), 'spec.json');
  const env: NodeJS.ProcessEnv = { ...process.env, HARNESS_STATE_ROOT: '', LAUNCHPAD_AGENT: '', TERM: 'xterm-256color', ...opts.env };
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  writeFileSync(
    spec,
    JSON.stringify({
      argv: [process.execPath, CLI, ...args],
      cwd: opts.cwd,
      env,
      steps: opts.steps ?? [],
      timeout: opts.timeoutS ?? 90,
      columns: opts.columns ?? 100,
    }),
  );
  const r = spawnSync('python3', [PTY_RUN, spec], { encoding: 'utf8', timeout: ((opts.timeoutS ?? 90) + 30) * 1000 });
  if (r.status !== 0) throw new Error(`pty-run.py failed: ${r.stderr}`);
  const out = JSON.parse(r.stdout) as { code: number; output: string; timed_out: boolean; steps_left: number };
  return { code: out.code, output: out.output, timedOut: out.timed_out, stepsLeft: out.steps_left };
}
