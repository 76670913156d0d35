// Fake agent CLIs for end-to-end tests: an executable with the real tool's name, put first on
// PATH, that records how it was started (arguments, stdin, LAUNCHPAD_* variables, the message
// file) and replays the real tool's output, after doing the task (a file, a commit) like the
// tool would.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface FakeOptions {
  /** What it prints on stdout when it runs a task. */
  output: string;
  /** Its answer to --version (default `<name> 9.9.9-fake`). */
  version?: string;
  /** Never answers --version (to show the probe's time limit). */
  hangOnVersion?: boolean;
  /** Write src/<task>/done.txt and commit it (default true). */
  work?: boolean;
  /**
   * What it prints on its first run (counted in $FAKE_AGENT_LOG), doing no work then: a limit
   * message, say. `__RESET_EPOCH__` in it becomes the epoch second 2 s from now.
   */
  firstOutput?: string;
  /** How many runs print `firstOutput` (default 1). */
  firstRuns?: number;
  /** Those first runs leave work before their output: src/<task>/partial.txt, not committed. */
  firstWrites?: boolean;
  /** What it prints on stderr after its output, when it runs a task. */
  stderr?: string;
  /** Its exit code after a task's output (default 0). */
  exitCode?: number;
  /** Before printing, when running this task, waits (at most 60 s) until `file` contains `text`. */
  waitFor?: { task: string; file: string; text: string };
}

export interface FakeRecord {
  argv: string[];
  stdin: string;
  cwd: string;
  env: Record<string, string>;
  /** The content of the file after --message-file, when given. */
  messageFile: string | null;
}

/** Writes `<dir>/<name>`; records go to $FAKE_AGENT_LOG/<name>.<task>.<attempt>.json. */
export function installFake(dir: string, name: string, opts: FakeOptions): string {
  const path = join(dir, name);
  const script = `#!${process.execPath}
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const cp = require('node:child_process');
const NAME = ${JSON.stringify(name)};
const args = process.argv.slice(2);
if (args[0] === '--version') {
  if (${opts.hangOnVersion === true}) setInterval(() => undefined, 1000);
  else process.stdout.write(${JSON.stringify((opts.version ?? `${name} 9.9.9-fake`) + '\n')});
} else {
  const stdin = fs.readFileSync(0, 'utf8');
  const mf = args.indexOf('--message-file');
  // Launchpad's variables, and those FAKE_RECORD_VARS names (a comma-separated list).
  const wanted = (process.env.FAKE_RECORD_VARS || '').split(',');
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('LAUNCHPAD_') || wanted.includes(k)));
  const id = process.env.LAUNCHPAD_TASK_ID;
  const record = { argv: args, stdin, cwd: process.cwd(), env, messageFile: mf >= 0 ? fs.readFileSync(args[mf + 1], 'utf8') : null };
  fs.writeFileSync(path.join(process.env.FAKE_AGENT_LOG, NAME + '.' + id + '.' + process.env.LAUNCHPAD_ATTEMPT + '.json'), JSON.stringify(record, null, 2));
  const runs = path.join(process.env.FAKE_AGENT_LOG, NAME + '.runs');
  const before = fs.existsSync(runs) ? fs.readFileSync(runs, 'utf8').split('\\n').filter(Boolean).length : 0;
  const first = before < ${opts.firstRuns ?? 1};
  fs.appendFileSync(runs, id + '\\n');
  const firstOutput = ${JSON.stringify(opts.firstOutput ?? null)};
  if (first && firstOutput !== null) {
    if (${opts.firstWrites === true}) {
      fs.mkdirSync(path.join('src', id), { recursive: true });
      fs.writeFileSync(path.join('src', id, 'partial.txt'), 'begun by ' + NAME + '\\n');
    }
    process.stdout.write(firstOutput.replace(/__RESET_EPOCH__/g, String(Math.floor(Date.now() / 1000) + 2)));
    process.exitCode = 1;
  } else {
  const waitFor = ${JSON.stringify(opts.waitFor ?? null)};
  if (waitFor && waitFor.task === id) {
    const end = Date.now() + 60000;
    while (Date.now() < end && !(fs.existsSync(waitFor.file) && fs.readFileSync(waitFor.file, 'utf8').includes(waitFor.text))) cp.execFileSync('sleep', ['0.1']);
  }
  if (${opts.work !== false}) {
    fs.mkdirSync(path.join('src', id), { recursive: true });
    fs.writeFileSync(path.join('src', id, 'done.txt'), 'done by ' + NAME + '\\n');
    cp.execFileSync('git', ['add', '-A']);
    cp.execFileSync('git', ['commit', '-q', '-m', '[' + id + '] by ' + NAME]);
  }
  process.stdout.write(${JSON.stringify(opts.output)});
  process.stderr.write(${JSON.stringify(opts.stderr ?? '')});
  process.exitCode = ${opts.exitCode ?? 0};
  }
}
`;
  writeFileSync(path, script);
  chmodSync(path, 0o755);
  return path;
}

export function readRecord(logDir: string, name: string, task = 'task-001', attempt = 1): FakeRecord {
  return JSON.parse(readFileSync(join(logDir, `${name}.${task}.${attempt}.json`), 'utf8')) as FakeRecord;
}
