// Before an agent or a validation starts: does the first program of its command line exist and
// can it be executed, in the environment (PATH, working folder) it will run in? A missing
// program is the machine's failure, not the task's, and is better found before any work.
import { accessSync, constants, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { runProcess } from '../process/runProcess';

export interface ProgramProblem {
  program: string;
  problem: 'missing' | 'not-executable';
}

/** Words the shell runs itself (keywords, builtins): nothing on PATH to look for. */
const SHELL_WORDS = new Set([
  '!',
  '{',
  '[',
  '[[',
  '.',
  ':',
  'alias',
  'break',
  'case',
  'cd',
  'command',
  'continue',
  'echo',
  'eval',
  'exec',
  'exit',
  'export',
  'false',
  'for',
  'function',
  'if',
  'local',
  'printf',
  'read',
  'readonly',
  'return',
  'select',
  'set',
  'shift',
  'source',
  'test',
  'time',
  'trap',
  'true',
  'type',
  'ulimit',
  'umask',
  'unset',
  'until',
  'wait',
  'while',
]);

/**
 * The program a shell command line starts with: leading `NAME=value` assignments skipped, quotes
 * and backslashes undone. Undefined when only running the shell could tell (a `$` expansion or a
 * command substitution in the word, a subshell, a redirection or an operator first).
 */
export function firstProgram(line: string): string | undefined {
  const n = line.length;
  let i = 0;
  for (;;) {
    while (i < n && ' \t\n'.includes(line[i]!)) i++;
    if (i >= n || '()<>|;&#'.includes(line[i]!)) return undefined;
    const rawStart = i;
    let word = '';
    let literal = true;
    while (i < n && !' \t\n;&|<>()'.includes(line[i]!)) {
      const c = line[i]!;
      if (c === "'") {
        const end = line.indexOf("'", i + 1);
        if (end < 0) return undefined;
        word += line.slice(i + 1, end);
        i = end + 1;
      } else if (c === '"') {
        i++;
        while (i < n && line[i] !== '"') {
          if (line[i] === '\\' && i + 1 < n && '"\\$`\n'.includes(line[i + 1]!)) {
            word += line[i + 1];
            i += 2;
            continue;
          }
          if (line[i] === '$' || line[i] === '`') literal = false;
          word += line[i++];
        }
        if (i >= n) return undefined;
        i++;
      } else if (c === '\\') {
        word += line[i + 1] ?? '';
        i += 2;
      } else {
        if (c === '$' || c === '`') literal = false;
        word += c;
        i++;
      }
    }
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(line.slice(rawStart, i))) continue; // an assignment
    return literal && word ? word : undefined;
  }
}

/**
 * Whether the first program of `commandLine` can be run from `cwd` with `env`: looked up as the
 * shell would (a path relative to `cwd`, else each PATH entry), and, when not found that way,
 * confirmed with `command -v` in that same environment. Undefined when it can run, or when only
 * running it would tell.
 */
export async function checkProgram(commandLine: string, cwd: string, env: NodeJS.ProcessEnv): Promise<ProgramProblem | undefined> {
  const word = firstProgram(commandLine);
  if (word === undefined || SHELL_WORDS.has(word)) return undefined;
  const found = lookUp(word, cwd, env);
  if (found === 'found') return undefined;
  if (word.includes('/')) return { program: word, problem: found };
  // Not in a PATH folder as we read it: ask the shell the command line will run in.
  const r = await runProcess({ command: { file: '/bin/sh', args: ['-c', 'command -v -- "$1"', 'sh', word] }, cwd, env, timeoutMs: 10_000 });
  if (r.spawnError || r.timedOut) return undefined;
  return r.code === 0 && r.stdout.trim() ? undefined : { program: word, problem: found };
}

function lookUp(word: string, cwd: string, env: NodeJS.ProcessEnv): 'found' | ProgramProblem['problem'] {
  const home = env.HOME ?? '';
  const candidates = word.includes('/')
    ? [resolve(cwd, word.startsWith('~/') && home ? join(home, word.slice(2)) : word)]
    : (env.PATH ?? '').split(':').map((dir) => join(resolve(cwd, dir || '.'), word));
  let exists = false;
  for (const path of candidates) {
    try {
      const isFile = statSync(path).isFile();
      // A folder on PATH with the program's name is not it; a path naming a folder is.
      if (isFile || word.includes('/')) exists = true;
      if (!isFile) continue;
      accessSync(path, constants.X_OK);
      return 'found';
    } catch {
      // Not there, or not executable: the next PATH entry may have it.
    }
  }
  return exists ? 'not-executable' : 'missing';
}
