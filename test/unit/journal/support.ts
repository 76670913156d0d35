// Shared by the journal tests: a project (a git repository with a harness), the journal's files,
// the built CLI, and the CLI in this process with a scripted terminal (for the questions).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Io } from '../../../src/cli/io';
import { main } from '../../../src/cli/main';
import type { JournalEntry } from '../../../src/core/journal/entrySchema';
import { cli } from '../cli/util';
import { makeRepo } from '../helpers/gitRepo';

export { cli } from '../cli/util';
export { git, makeRepo, writeFiles } from '../helpers/gitRepo';
export { tempDir } from '../helpers/tmp';

export const JSON_FILE = '.agent-os/progress/progress.json';
export const MD_FILE = '.agent-os/progress/progress.md';

/** A repository with `launchpad init` done (state files untracked). */
export function project(files?: Record<string, string>): string {
  const root = makeRepo(files);
  cli(['init'], { cwd: root });
  return root;
}

export function journalEntries(root: string): JournalEntry[] {
  const file = join(root, JSON_FILE);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { entries: JournalEntry[] }).entries : [];
}

export function read(root: string, rel: string): string {
  return readFileSync(join(root, rel), 'utf8');
}

/** `launchpad ARGS` in this process, as on a terminal: each question gets the next answer. */
export async function onTerminal(
  root: string,
  args: string[],
  answers: string[],
): Promise<{ code: number; out: string; err: string; asked: string[] }> {
  let out = '';
  let err = '';
  const asked: string[] = [];
  const io: Io = {
    cwd: root,
    env: { ...process.env, HARNESS_STATE_ROOT: '', LAUNCHPAD_AGENT: '' },
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    interactive: true,
    stdoutTTY: false,
    columns: () => undefined,
    ask: async (question) => {
      asked.push(question);
      const answer = answers.shift();
      if (answer === undefined) throw new Error(`unexpected question: ${question}`);
      return answer;
    },
  };
  const code = await main(args, io);
  return { code, out, err, asked };
}
