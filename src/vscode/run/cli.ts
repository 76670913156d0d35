// The one way the window starts the bundled CLI (dist/cli.js): with the editor's own node
// (`process.execPath`, ELECTRON_RUN_AS_NODE=1), so no node need be installed. A run and a long
// run are started detached and followed through their files; everything else that writes state
// or runs a step is one command run to its end here, the person's answers passed as its flags.
// The callers check workspace trust first, and a trusted workspace is the approval of the
// repository's own commands that the CLI otherwise asks for (LAUNCHPAD_TRUST=1, docs/trust.md).
// A command is not ended when the window goes: each has its own time limits, and one that
// writes is safe to interrupt only the way Ctrl-C is.
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

import * as vscode from 'vscode';

import { ExpectedError } from '../../core/expectedErrors';

export interface CliOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** Its own session and process group, nothing of ours held open: it outlives the window. */
  detached?: boolean;
}

/** Starts `launchpad ARGS`; its output comes on the pipes. */
export function startCli(
  args: string[],
  { cwd, env = process.env, detached = false }: CliOptions,
): ChildProcessByStdio<null, Readable, Readable> {
  return spawn(process.execPath, [join(__dirname, 'cli.js'), ...args], {
    cwd,
    env: { ...env, ELECTRON_RUN_AS_NODE: '1', ...(vscode.workspace.isTrusted ? { LAUNCHPAD_TRUST: '1' } : {}) },
    detached,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export interface CliResult {
  /** The exit code; null when it was ended by a signal or could not start. */
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `launchpad ARGS` to its end. */
export function runCli(args: string[], opts: CliOptions): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = startCli(args, { ...opts, detached: false });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (err) => resolve({ code: null, stdout, stderr: `${stderr}launchpad: could not start: ${err.message}\n` }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs `launchpad ARGS` and returns what it printed; throws its error unless it exited 0. */
export async function cliOutput(args: string[], opts: CliOptions): Promise<string> {
  const r = await runCli(args, opts);
  if (r.code !== 0) throw cliError(args, r);
  return r.stdout;
}

/** Runs `launchpad ARGS --json` and returns the object it printed; throws its error unless it exited 0. */
export async function cliJson<T>(args: string[], opts: CliOptions): Promise<T> {
  return JSON.parse(await cliOutput([...args, '--json'], opts)) as T;
}

/**
 * Why a command failed, in its own words: the `--json` error object, else what it wrote after
 * "launchpad: " on stderr. Exit 2 and 3 are a person's to fix (shown without a stack); anything
 * else is not expected.
 */
export function cliError(args: string[], { code, stdout, stderr }: CliResult): Error {
  let message: string | undefined;
  try {
    message = (JSON.parse(stdout) as { error?: { message?: string } }).error?.message;
  } catch {
    // Not the error object: stderr says it.
  }
  const at = stderr.lastIndexOf('launchpad: ');
  message ??= at >= 0 ? stderr.slice(at + 'launchpad: '.length).trim() : stderr.trim();
  message ||= `launchpad ${args[0]} exited with ${code ?? 'a signal'}`;
  return code === 2 || code === 3 ? new ExpectedError(message) : new Error(message);
}
