// The messages between a process and its spawner (spawner.ts, spawnerMain.ts), over node's IPC
// channel with its "advanced" serialization (output travels as bytes). One id per command.

export type SpawnerRequest =
  /** `hold`: a pipe on the command's fd 3, written and closed on `release` (AWAIT_CGROUP_AND_EXEC reads it). */
  | { t: 'spawn'; id: number; file: string; args: string[]; cwd: string; env: NodeJS.ProcessEnv; stdin?: string; hold?: boolean }
  | { t: 'release'; id: number }
  /** The command's pipes are no longer read (a process that escaped its group may hold them). */
  | { t: 'close-pipes'; id: number };

export type SpawnerReply =
  | { t: 'ready' }
  | { t: 'spawn'; id: number; pid: number }
  /** Could not be started (a missing cwd or program): node's message. */
  | { t: 'error'; id: number; message: string }
  | { t: 'out'; id: number; fd: 1 | 2; data: Uint8Array }
  | { t: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null }
  | { t: 'close'; id: number; code: number | null; signal: NodeJS.Signals | null };
