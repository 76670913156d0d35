// The environment of the processes Launchpad starts for a task: its agent, its worktree set-up,
// its validation, its cleanup. On the person's machine they keep the person's environment (their
// tests may need any of it) without Launchpad's own secrets, which no process Launchpad starts
// ever gets (runProcess applies it to every child). On a queue worker they get an allow-list
// only: the machine's basics, the variables of the agent's tool and the names the worker's
// configuration adds; never the queue's URL, the remote's credentials, the git credentials the
// worker uses, nor anything else of the machine or the pod.

/** Launchpad's own secrets: the queue's URL (with Redis's password) and the shared remote (with its token). */
export const LAUNCHPAD_SECRETS: readonly string[] = ['LAUNCHPAD_QUEUE_URL', 'LAUNCHPAD_REMOTE'];

/** What any program on a worker needs, whatever the tool. A trailing `*` matches a prefix. */
export const WORKER_BASE_VARIABLES: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'TMPDIR',
  'TZ',
  'TERM',
  'LANG',
  'LANGUAGE',
  'LC_*',
  'XDG_CONFIG_HOME',
  'XDG_CACHE_HOME',
  'XDG_DATA_HOME',
  'XDG_STATE_HOME',
];

/**
 * `local`: the person's machine. Otherwise a worker's allow-list (names or `PREFIX*`, beyond
 * WORKER_BASE_VARIABLES), and credential values no variable may carry (the queue's password, the
 * remote's token): a variable holding one is left out whatever its name.
 */
export type EnvironmentKind = 'local' | { allow: readonly string[]; withhold?: readonly string[] };

export function agentEnvironment(base: NodeJS.ProcessEnv, kind: EnvironmentKind): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  const allowed = kind === 'local' ? undefined : [...WORKER_BASE_VARIABLES, ...kind.allow];
  const withheld = kind === 'local' ? [] : (kind.withhold ?? []).filter(Boolean);
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined || LAUNCHPAD_SECRETS.includes(name)) continue;
    if (allowed && !allowed.some((pattern) => nameMatches(name, pattern))) continue;
    if (withheld.some((secret) => value.includes(secret))) continue;
    env[name] = value;
  }
  return env;
}

/** `NAME` matches itself; `PREFIX*` every name that starts with PREFIX. */
export function nameMatches(name: string, pattern: string): boolean {
  return pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern;
}

/** A name or prefix a person may add to a worker's allow-list; the reason when it is not one. */
export function allowListProblem(pattern: string): string | undefined {
  if (!/^[A-Za-z_][A-Za-z0-9_]*\*?$/.test(pattern))
    return `"${pattern}" is not a variable name (letters, digits and "_", optionally ending in "*" for a prefix)`;
  const secret = LAUNCHPAD_SECRETS.find((s) => nameMatches(s, pattern));
  if (secret) return `"${pattern}" would give agents ${secret}, which never leaves the worker`;
  return undefined;
}

/** The credentials inside a URL (a password, or a token given as the user): what no agent may see. */
export function credentialsIn(url: string): string[] {
  try {
    const u = new URL(url);
    const password = decodeURIComponent(u.password);
    const user = decodeURIComponent(u.username);
    // Short values ("git", "u") would leave out variables that merely contain them.
    return [password || user].filter((s) => s.length >= 6);
  } catch {
    return [];
  }
}
