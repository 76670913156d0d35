// The approvals of repositories' commands: one file in the person's configuration folder,
// outside every repository (a clone cannot approve its own commands), $XDG_CONFIG_HOME/launchpad/
// trust.json or ~/.config/launchpad/trust.json. Per repository (the real path of its state root,
// or of a long run's repository), the commands approved: where each is written, its exact text
// and the sha256 of its kind and text. A command is approved when a command of the same kind and
// text was approved for that repository; one written where an approved one was is "changed".
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

import * as z from 'zod/mini';

import { replaceFile } from '../atomicFile';
import { InputError } from '../inputError';
import { describeIssue } from '../milestones/zodIssues';
import { locateJsonPath, locateJsonSyntaxError } from '../taskFile/jsonSyntax';
import { formatPath } from '../taskFile/parse';
import type { CommandKind, RepoCommand } from './repoCommands';

/** The format's version; a file of a later one is refused rather than rewritten without what it added. */
export const TRUST_FILE_VERSION = 1;

const KINDS = [
  'agent',
  'agent_args',
  'validation',
  'cleanup',
  'worktree_setup',
  'integration_check',
  'health_check',
  'verification',
  'planner',
  'worker',
  'reviewer',
  'tool_hook',
] as const satisfies readonly CommandKind[];

const approvalSchema = z.looseObject({
  kind: z.enum(KINDS),
  file: z.string(),
  field: z.string(),
  command: z.string(),
  sha256: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
  approved_at: z.string(),
});

const trustFileSchema = z.looseObject({
  version: z.literal(TRUST_FILE_VERSION),
  repositories: z.record(z.string(), z.looseObject({ commands: z.array(approvalSchema) })),
});

export type Approval = z.infer<typeof approvalSchema>;
type TrustFile = z.infer<typeof trustFileSchema>;

/** Where approvals are kept: $XDG_CONFIG_HOME/launchpad/trust.json (an absolute path), else ~/.config/launchpad/trust.json. */
export function trustFilePath(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.config');
  return join(base, 'launchpad', 'trust.json');
}

/** The key of a repository's approvals: the real path of its folder (a link to it is the same repository). */
export function repositoryKey(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return resolve(dir);
  }
}

/** What identifies an approved command: its kind and its exact text. */
export function commandHash(c: Pick<RepoCommand, 'kind' | 'command'>): string {
  return createHash('sha256').update(`${c.kind}\n${c.command}`).digest('hex');
}

export class Approvals {
  constructor(readonly path: string) {}

  /** The commands approved for the repository at `key` (none when the file does not exist). */
  of(key: string): Approval[] {
    return this.read().repositories[key]?.commands ?? [];
  }

  /**
   * Approves `commands` (each replaces what was approved where it is written). With `files`, the
   * approvals of those files that `commands` does not hold are forgotten: what `launchpad trust`
   * read there is the whole of it.
   */
  grant(key: string, commands: RepoCommand[], opts: { files?: string[]; now?: Date } = {}): void {
    const data = this.read();
    const at = (opts.now ?? new Date()).toISOString().replace(/\.\d+Z$/, 'Z');
    const place = (c: Pick<RepoCommand, 'file' | 'field'>) => `${c.file}\n${c.field}`;
    const given = new Set(commands.map(place));
    const kept = (data.repositories[key]?.commands ?? []).filter((a) => !given.has(place(a)) && !(opts.files?.includes(a.file) ?? false));
    const added = commands.map((c) => ({
      kind: c.kind,
      file: c.file,
      field: c.field,
      command: c.command,
      sha256: commandHash(c),
      approved_at: at,
    }));
    data.repositories[key] = { ...data.repositories[key], commands: [...kept, ...added] };
    this.write(data);
  }

  /** Forgets every approval of the repository at `key`; returns how many there were. */
  revoke(key: string): number {
    const data = this.read();
    const n = data.repositories[key]?.commands.length ?? 0;
    if (!data.repositories[key]) return 0;
    delete data.repositories[key];
    this.write(data);
    return n;
  }

  private read(): TrustFile {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: TRUST_FILE_VERSION, repositories: {} };
      throw new InputError(`${this.path}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      const where = locateJsonSyntaxError(text);
      throw new InputError(
        `${this.path}:${where ? `${where.line}:${where.column}: ${where.message}` : ` ${(err as Error).message}`}; fix it or remove the file (its approvals are then asked again)`,
      );
    }
    const version = (raw as { version?: unknown } | null)?.version;
    if (typeof version === 'number' && version > TRUST_FILE_VERSION) {
      throw new InputError(
        `${this.path}: version ${version} was written by a newer Launchpad (this one reads version ${TRUST_FILE_VERSION})`,
        {
          field: 'version',
        },
      );
    }
    const parsed = trustFileSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const field = formatPath(issue.path);
      const line = locateJsonPath(text, issue.path)?.line;
      throw new InputError(
        `${this.path}:${line ? `${line}:` : ''} ${field}: ${describeIssue(issue)}; fix it or remove the file (its approvals are then asked again)`,
        { field },
      );
    }
    return parsed.data;
  }

  private write(data: TrustFile): void {
    try {
      replaceFile(this.path, JSON.stringify(data, null, 2) + '\n', { mode: 0o600, dirMode: 0o700 });
    } catch (err) {
      throw new InputError(`${this.path}: cannot be written (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }
}

/** A command that needs approval: new where it is written, or changed from the approved one there. */
export interface PendingCommand {
  command: RepoCommand;
  change: 'new' | 'changed';
  /** The approved command it replaces, for a changed one. */
  was?: string;
}

/** The commands of `required` no approval covers, each with what changed. */
export function pendingCommands(required: RepoCommand[], approved: Approval[]): PendingCommand[] {
  const hashes = new Set(approved.map((a) => a.sha256));
  return required
    .filter((c) => !hashes.has(commandHash(c)))
    .map((c) => {
      const before = approved.find((a) => a.file === c.file && a.field === c.field);
      return before ? { command: c, change: 'changed' as const, was: before.command } : { command: c, change: 'new' as const };
    });
}

/** Approved commands of `files` that are no longer written there (`current` is everything those files hold now). */
export function removedCommands(current: RepoCommand[], approved: Approval[], files: string[]): Approval[] {
  const places = new Set(current.map((c) => `${c.file}\n${c.field}`));
  return approved.filter((a) => files.includes(a.file) && !places.has(`${a.file}\n${a.field}`));
}
