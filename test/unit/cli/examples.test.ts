// What the help and the README tell a person to type must work when pasted into a shell: the
// shell must not expand what Launchpad is meant to expand ($LAUNCHPAD_PROMPT_FILE), and each
// command's help lists only the global options it honours.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import { tempDir } from '../helpers/tmp';
import { cli } from './util';

/** The README and the documents it sends people to. */
const DOCS = [
  'README.md',
  'docs/cli.md',
  'docs/agents.md',
  'docs/worktrees.md',
  'docs/ways-to-run.md',
  'docs/extension.md',
  'docs/decisions.md',
  'docs/journal.md',
  'docs/milestones.md',
  'docs/scale-out.md',
  'docs/trust.md',
  'docs/events.md',
].map((f) => resolve(__dirname, '../../../..', f));
const COMMANDS = ['init', 'add', 'edit', 'remove', 'run', 'agents', 'status', 'pool', 'retry', 'config', 'log', 'demo'];

/** `launchpad …` lines of every command's help (the usage line aside). */
function helpExamples(): string[] {
  const cwd = tempDir();
  return COMMANDS.flatMap((c) =>
    cli([c, '--help'], { cwd })
      .stdout.split('\n')
      .filter((l) => /^\s+launchpad \S/.test(l))
      .map((l) => l.trim().replace(/ {2,}\(.*\)$/, '')),
  );
}

/** `launchpad …` command lines of the documents' shell blocks and inline code, continuation lines joined. */
function readmeExamples(): string[] {
  const text = DOCS.map((f) => readFileSync(f, 'utf8')).join('\n');
  const blocks = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.replace(/\\\n\s*/g, ''));
  const inline = [...text.matchAll(/`(launchpad [^`]+)`/g)]
    .map((m) => m[1]!)
    .filter((l) => !/[[\]|<>]|\.\.\./.test(l) && !/ (ID|TITLE|CMD|N|S|KEY|VALUE|REGEX|T|DIR|ARGS)\b/.test(l));
  return [...blocks.flatMap((b) => b.split('\n')), ...inline].map((l) => l.trim()).filter((l) => l.startsWith('launchpad '));
}

/** The arguments `line` gives launchpad in a shell where no LAUNCHPAD_ variable is set. */
function argsInShell(line: string): string[] {
  const script = `launchpad() { printf '%s\\0' "$@"; }\n${line}\n`;
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LAUNCHPAD_')));
  const r = spawnSync('bash', ['-c', script], { encoding: 'utf8', env });
  assert.equal(r.status, 0, `${line}\n${r.stderr}`);
  return r.stdout.split('\0').slice(0, -1);
}

describe('examples in the help and the README', () => {
  it('the help shows examples, and the README its commands', () => {
    assert.ok(
      helpExamples().some((l) => l.includes('$LAUNCHPAD_PROMPT_FILE')),
      'an example of a command line agent',
    );
    assert.ok(readmeExamples().length >= 10, readmeExamples().join('\n'));
  });

  it('each pastes into bash as it reads: valid, and Launchpad (not your shell) gets the $LAUNCHPAD_ variables', () => {
    for (const line of [...helpExamples(), ...readmeExamples()]) {
      const args = argsInShell(line);
      const mentions = (line.match(/\$\{?LAUNCHPAD_[A-Z_]+/g) ?? []).length;
      const kept = args.join('\0').match(/\$\{?LAUNCHPAD_[A-Z_]+/g)?.length ?? 0;
      assert.equal(kept, mentions, `the shell expanded a variable meant for the agent: ${line}\n→ ${JSON.stringify(args)}`);
    }
  });

  it('global options: each command lists and accepts only those it honours', () => {
    const cwd = tempDir();
    const help = (c: string) => cli([c, '--help'], { cwd }).stdout;
    for (const c of ['run', 'status', 'log', 'demo']) assert.match(help(c), /--no-color/, c);
    for (const c of ['add', 'edit', 'remove', 'retry', 'config', 'init', 'agents']) assert.doesNotMatch(help(c), /--no-color/, c);
    for (const c of COMMANDS) assert.match(help(c), /--dir DIR/, c);
    assert.doesNotMatch(help('demo-agent'), /--dir/);
    const r = cli(['add', 'x', '--no-color'], { cwd }, 2);
    assert.match(r.stderr, /add: Unknown option '--no-color': "add" does not use it/);
    cli(['--no-color', 'add', 'x'], { cwd }, 2);
  });
});
