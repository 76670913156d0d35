// How a person types launchpad again from here, so every command we tell them to run works
// as pasted: `launchpad` when that name on PATH is this very CLI (after `npm link`), else
// `node /absolute/path/dist/cli.js`; with `--dir ROOT` when ROOT would not be found from the
// working directory.
import { existsSync, realpathSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';

import { findStateRoot } from '../core/statePaths';
import { shellQuote } from './command';
import type { Io } from './io';

export function launchpadCommand(env: NodeJS.ProcessEnv, script = process.argv[1] ?? 'dist/cli.js'): string {
  const self = realOrSame(resolve(script));
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'launchpad');
    if (existsSync(candidate) && realOrSame(candidate) === self) return 'launchpad';
  }
  return `node ${shellQuote(self)}`;
}

/** `launchpad`, `node …/cli.js`, either with `--dir ROOT` when it is needed to find `root`. */
export function commandIn(io: Io, root: string, script?: string): string {
  const base = launchpadCommand(io.env, script);
  const found = findStateRoot(io.cwd, undefined, {});
  return found && realOrSame(found) === realOrSame(root) ? base : `${base} --dir ${shellQuote(root)}`;
}

function realOrSame(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
