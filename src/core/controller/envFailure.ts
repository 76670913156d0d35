// Whether a failure is the machine's or the task's, decided in one place before anything is
// charged. The machine's (ENV_SETUP): git lock files left behind, a full disk, a folder Launchpad
// cannot write, a missing or non-executable agent or validation program, a worktree git cannot
// create. Such a failure is never charged to a task: the session stops and says what to do.
// Functions over an error, git's output or an exit code and output, tested on literal strings;
// the file system is asked only where Node's error hides the reason (whyNotCreated) and for the
// free space git does not report (diskSpaceNote).
import { accessSync, constants, existsSync, statfsSync } from 'node:fs';
import { dirname } from 'node:path';

import { ExpectedError } from '../expectedErrors';

export interface EnvFailure {
  category: 'ENV_SETUP';
  /** What went wrong, in one line: the real cause. */
  cause: string;
  /** What a person does about it. */
  advice: string;
}

/**
 * Carries an EnvFailure from where it is found to where the session stops; one that ends a run
 * before its session starts is shown as it is (exit 2), cause and advice.
 */
export class EnvFailureError extends ExpectedError {
  constructor(readonly failure: EnvFailure) {
    super(`${failure.cause}\nto fix: ${failure.advice}`);
    this.name = 'EnvFailureError';
  }
}

const env = (cause: string, advice: string): EnvFailure => ({ category: 'ENV_SETUP', cause, advice });

/** Error codes of the machine, not of the work (as Node and git report them). */
const ERRNO_CAUSE: Record<string, string> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOTDIR: 'a parent of the path is not a folder',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files in the system',
  EIO: 'input/output error',
};

/** Advice for an errno code about `dir`, the folder Launchpad tried to write in. */
function errnoAdvice(code: string, dir: string | undefined): string {
  const where = dir ?? 'the folder';
  switch (code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return `free disk space${dir ? ` on the file system holding ${dir}` : ''}`;
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
    case 'ENOTDIR':
      return `make ${where} writable`;
    case 'EMFILE':
    case 'ENFILE':
      return 'raise the open-file limit (ulimit -n) or end processes holding many files';
    default:
      return `check the disk holding ${where}`;
  }
}

/** What Launchpad was doing, by system call, for the cause. */
const VERBS: Record<string, string> = {
  mkdir: 'create the folder',
  open: 'write',
  write: 'write',
  rename: 'replace',
  unlink: 'remove',
  rmdir: 'remove',
  copyfile: 'copy to',
  access: 'write in',
  scandir: 'read',
  opendir: 'read',
};

/** Calls whose path is the folder itself (a probe of it), not an entry made in it. */
const FOLDER_CALLS = new Set(['access', 'scandir', 'opendir']);

interface ErrnoLike {
  code: string;
  path?: string;
  syscall?: string;
  message: string;
}

function errnoOf(err: unknown): ErrnoLike | undefined {
  if (!(err instanceof Error)) return undefined;
  const e = err as Error & { code?: unknown; path?: unknown; syscall?: unknown };
  if (typeof e.code !== 'string') return undefined;
  return {
    code: e.code,
    message: e.message,
    ...(typeof e.path === 'string' ? { path: e.path } : {}),
    ...(typeof e.syscall === 'string' ? { syscall: e.syscall } : {}),
  };
}

/**
 * An error thrown by Node (a file Launchpad writes, a program it starts) or carrying git's
 * output (`result.stderr`): the machine's failure, or undefined when it is not one.
 */
export function classifyError(err: unknown): EnvFailure | undefined {
  if (err instanceof EnvFailureError) return err.failure;
  const gitOutput = gitOutputOf(err);
  if (gitOutput !== undefined) return classifyGitOutput(gitOutput);
  // A write of harness-tasks.json that the file system refused keeps the errno as its cause.
  const e = errnoOf(whyNotCreated(err)) ?? errnoOf((err as { cause?: unknown } | undefined)?.cause);
  if (!e) return undefined;
  // A program that cannot be started (spawn git ENOENT): not installed, or not on PATH.
  if (e.syscall?.startsWith('spawn ') && (e.code === 'ENOENT' || e.code === 'EACCES')) {
    const program = e.syscall.slice('spawn '.length);
    return e.code === 'ENOENT'
      ? env(`\`${program}\` not found on PATH`, `install ${program} or put it on PATH`)
      : env(`\`${program}\` is not executable`, `make ${program} executable`);
  }
  const what = ERRNO_CAUSE[e.code];
  if (!what) return undefined;
  const verb = VERBS[e.syscall ?? ''] ?? 'write';
  const cause = e.path ? `cannot ${verb} ${e.path}: ${what} (${e.code})` : `${firstLine(e.message)}`;
  const dir = e.path && (FOLDER_CALLS.has(e.syscall ?? '') ? e.path : dirname(e.path));
  return env(cause, errnoAdvice(e.code, dir));
}

/**
 * Node's recursive mkdir reports ENOENT when a folder cannot be made in a parent that exists but
 * cannot be written (a read-only file system): the nearest existing folder is asked for the real
 * reason. Any other error is returned as it is.
 */
function whyNotCreated(err: unknown): unknown {
  const e = err as NodeJS.ErrnoException | undefined;
  if (e?.code !== 'ENOENT' || e.syscall !== 'mkdir' || typeof e.path !== 'string') return err;
  let dir = dirname(e.path);
  while (!existsSync(dir) && dir !== dirname(dir)) dir = dirname(dir);
  try {
    accessSync(dir, constants.W_OK);
    return err;
  } catch (probe) {
    return probe;
  }
}

/** Git's output held by a GitError (or anything shaped like it). */
function gitOutputOf(err: unknown): string | undefined {
  if (!(err instanceof Error) || err.name !== 'GitError') return undefined;
  const r = (err as Error & { result?: { stderr?: string; stdout?: string } }).result;
  return `${r?.stderr ?? ''}\n${r?.stdout ?? ''}\n${err.message}`;
}

/**
 * Git's output (stderr, with stdout) of a failed command: a lock file left behind, a full disk,
 * a folder it cannot write. Undefined when the output names none of them (a conflict, a bad ref).
 */
export function classifyGitOutput(output: string): EnvFailure | undefined {
  // fatal: Unable to create '/r/.git/index.lock': File exists.
  // fatal: cannot lock ref 'refs/heads/x': Unable to create '/r/.git/refs/heads/x.lock': File exists.
  const lock = /Unable to create '([^']+\.lock)': File exists/.exec(output);
  if (lock) return lockFileFailure(lock[1]!, /cannot lock ref '([^']+)'/.exec(output)?.[1]);
  // error: cannot lock ref 'refs/heads/x': reference already exists / is at … but expected …
  const refLock = /cannot lock ref '([^']+)': (.*)/.exec(output);
  if (refLock && !/reference already exists|but expected/.test(refLock[2]!)) {
    return env(
      `git cannot lock ${refLock[1]}: ${refLock[2]!.trim()}`,
      `check the repository's .git folder (git fsck) and that no git process is running`,
    );
  }
  // A merge someone else started in the main working tree and did not finish (Launchpad's own
  // interrupted merges are aborted before the next one): not the task's fault.
  if (/You have not concluded your merge|MERGE_HEAD exists|you need to resolve your current index first/.test(output)) {
    return env(
      'the main working tree has an unfinished merge (MERGE_HEAD exists)',
      'finish it (git commit) or abort it (git merge --abort) in the main working tree',
    );
  }
  const full = /No space left on device|Out of diskspace|\bENOSPC\b/;
  if (full.test(output)) return env(`git: no space left on device (${gitLine(output, full)})`, 'free disk space');
  if (/Disk quota exceeded|EDQUOT/.test(output)) return env(`git: disk quota exceeded (${gitLine(output, /quota/i)})`, 'free disk space');
  if (/Read-only file system|EROFS/.test(output)) {
    return env(
      `git: read-only file system (${gitLine(output, /Read-only file system|EROFS/)})`,
      `make ${pathIn(output) ?? 'the repository'} writable`,
    );
  }
  if (/Permission denied|EACCES/.test(output)) {
    return env(
      `git: permission denied (${gitLine(output, /Permission denied|EACCES/)})`,
      `make ${pathIn(output) ?? 'the repository and the worktree folder'} writable`,
    );
  }
  // Writes that failed without saying why: almost always a full disk (git does not always print errno).
  const write =
    /unable to write (?:file|new index file|loose object|sha1 file)|Unable to write index|write error|short write|could not write|couldn't write|failed to write/i;
  if (write.test(output)) {
    return env(
      `git could not write (${gitLine(output, write)})`,
      'free disk space, and check that no git process is running and the repository is writable',
    );
  }
  // git merge with merge.autostash stashes first: with the index locked or no space, the stash fails.
  if (/fatal: stash failed/.test(output)) {
    return env(
      'git could not stash before merging (fatal: stash failed)',
      'remove .git/index.lock if no git process is running, and check free disk space',
    );
  }
  return undefined;
}

/**
 * A program's exit with code 126 or 127 and what it printed: the shell could not run a program
 * of the command line (not found, not executable), and names it. Undefined for any other exit.
 */
export function unrunnableProgram(
  code: number | null,
  output: string,
): { program: string; problem: 'missing' | 'not-executable' } | undefined {
  if (code !== 127 && code !== 126) return undefined;
  // The shell's own message: `sh: 1: cladue: not found`, `bash: line 1: cladue: command not found`,
  // `/bin/sh: 1: ./a.sh: Permission denied`, `/bin/sh: 1: : Permission denied` (an empty name).
  const m =
    /^[^:\n]*sh(?:\[\d+\])?: (?:line )?(?:\d+: )?(.*?): (command not found|not found|No such file or directory|Permission denied|cannot execute[^\n]*)$/m.exec(
      output,
    );
  if (!m) return undefined;
  const missing = /not found|No such file/.test(m[2]!);
  if (missing && code !== 127) return undefined;
  return { program: m[1]!.trim(), problem: missing ? 'missing' : 'not-executable' };
}

/** unrunnableProgram as an EnvFailure of the agent or validation command. */
export function classifyExit(code: number | null, output: string, what: 'agent command' | 'validation command'): EnvFailure | undefined {
  const p = unrunnableProgram(code, output);
  return p ? programProblem(what, p.program, p.problem) : undefined;
}

/** A process that could not be started at all (its folder is gone, /bin/sh cannot run). */
export function startFailure(what: 'agent command' | 'validation command', spawnError: string, cwd: string): EnvFailure {
  return env(`could not start the ${what} in ${cwd}: ${spawnError}`, `check that ${cwd} exists and that /bin/sh can run there`);
}

/** The first program of the agent or validation command cannot be run. */
export function programProblem(
  what: 'agent command' | 'validation command',
  program: string,
  problem: 'missing' | 'not-executable',
): EnvFailure {
  if (!program) {
    return env(
      `${what} starts with an empty program name (an unset variable?)`,
      `set the variable, or fix the ${what === 'agent command' ? 'agent command' : "task's validation.command"}`,
    );
  }
  const fix =
    what === 'agent command'
      ? 'fix the agent command (--agent, LAUNCHPAD_AGENT, launchpad.agent.command or session_config.agent_command)'
      : "fix the task's validation.command in harness-tasks.json";
  if (problem === 'missing') {
    const where = program.includes('/') ? 'does not exist' : 'not found on PATH';
    return env(`${what} \`${program}\` ${where}`, `install \`${program}\` or ${fix}`);
  }
  return env(`${what} \`${program}\` is not executable`, `make \`${program}\` executable (chmod +x) or ${fix}`);
}

/**
 * `git worktree add` failed: the reason git gave when it is a known one, else its message. Git
 * does not always say a write failed for want of space: `lowSpace` (diskSpaceNote of the folder,
 * taken before the half-made worktree is removed) says so when the disk is nearly full.
 */
export function worktreeFailure(path: string, err: unknown, lowSpace?: string): EnvFailure {
  const known = classifyError(err);
  if (known && lowSpace && !/free disk space/.test(known.advice)) {
    return env(`could not create worktree ${path}: ${known.cause}; ${lowSpace}`, `free disk space; ${known.advice}`);
  }
  if (known) return { ...known, cause: `could not create worktree ${path}: ${known.cause}${lowSpace ? `; ${lowSpace}` : ''}` };
  const message = err instanceof Error ? err.message : String(err);
  return env(
    `could not create worktree ${path}: ${firstLine(message)}`,
    `check the folder ${dirname(path)} (free space, permissions) and \`git worktree list\`; \`git worktree prune\` forgets worktrees whose folders are gone`,
  );
}

/**
 * Writing one of Launchpad's own files failed (a transcript, the prompt, the progress log):
 * `message` is Node's, e.g. `ENOSPC: no space left on device, write`.
 */
export function writeFailure(path: string, message: string): EnvFailure {
  const code = /^(E[A-Z]+)\b/.exec(message)?.[1];
  const what = code ? ERRNO_CAUSE[code] : undefined;
  return env(`could not write ${path}: ${what ? `${what} (${code})` : firstLine(message)}`, errnoAdvice(code ?? '', dirname(path)));
}

/** A file system this full has no room for a checkout or a merge (bytes free, share free). */
const LOW_SPACE_BYTES = 64 * 1024 * 1024;
const LOW_SPACE_SHARE = 0.02;

/**
 * `only N KB free on the file system holding DIR` when that disk is nearly full, else undefined.
 * The one impure helper here: it asks the file system (statfs).
 */
export function diskSpaceNote(dir: string): string | undefined {
  // The folder may not exist yet (the worktree folder before its first worktree): its parent's disk.
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(d) || d === dirname(d)) {
      dir = d;
      break;
    }
  }
  try {
    const st = statfsSync(dir);
    const free = st.bavail * st.bsize;
    const total = st.blocks * st.bsize;
    if (free >= LOW_SPACE_BYTES && free >= total * LOW_SPACE_SHARE) return undefined;
    return `only ${Math.floor(free / 1024)} KB free on the file system holding ${dir}`;
  } catch {
    return undefined;
  }
}

/** A git lock file left behind (by a git process that was killed, or one still running). */
export function lockFileFailure(file: string, ref?: string): EnvFailure {
  const cause = ref ? `git cannot lock ${ref}: ${file} exists` : `git's lock file ${file} exists`;
  return env(cause, `remove ${file} if no git process is running`);
}

/** The line of git's output matching `re`, trimmed and bounded. */
function gitLine(output: string, re: RegExp): string {
  const line = output.split('\n').find((l) => re.test(l)) ?? '';
  return line.trim().slice(0, 300);
}

/** The first quoted absolute path in git's output (git quotes the paths it names). */
function pathIn(output: string): string | undefined {
  const m = /'(\/[^']+)'/.exec(output);
  return m ? dirname(m[1]!) : undefined;
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.trim();
}

/** The commit an attempt started from no longer exists (the base branch was rewritten meanwhile). */
export function baseGone(taskId: string, base: string): EnvFailure {
  return {
    category: 'ENV_SETUP',
    cause: `the base commit ${base.slice(0, 12)} of ${taskId} is gone (the branch was rewritten: a reset, a rebase or a force-push)`,
    advice: `commit or stash what the attempt left, check that the base branch is where you want it, then run again`,
  };
}
