// Compare a task's worktree with its base: every file that differs between the commit the task
// started from (started_at_commit; else the merge base with the main branch) and the worktree as
// it is on disk — the agent's commits and what it has not committed yet. Shown in VS Code's
// multi-file diff (`vscode.changes`), or one file at a time through a pick where that is missing.
// The base side is read with `git show` through a read-only content provider.
import { join } from 'node:path';

import * as vscode from 'vscode';

import { Git } from '../../core/git/git';
import type { StateModel } from '../model/stateModel';
import type { Worktree } from './args';

export const BASE_SCHEME = 'launchpad-base';

export interface BaseRef {
  repo: string;
  commit: string;
  path: string;
}

/** Serves `launchpad-base:` documents: a file's content at a commit. Runs git only when trusted. */
export function registerBaseContent(): vscode.Disposable {
  return vscode.workspace.registerTextDocumentContentProvider(BASE_SCHEME, {
    async provideTextDocumentContent(uri) {
      const ref = JSON.parse(uri.query) as BaseRef;
      if (!vscode.workspace.isTrusted || !ref.path) return '';
      const r = await new Git(ref.repo).run(['show', `${ref.commit}:${ref.path}`], { allowFail: true });
      return r.code === 0 ? r.stdout : '';
    },
  });
}

/** A file's content at a commit, read-only. */
export function baseUri(ref: BaseRef): vscode.Uri {
  return vscode.Uri.from({ scheme: BASE_SCHEME, path: `/${ref.path}`, query: JSON.stringify(ref) });
}

export async function compareWorktree(model: StateModel, wt: Worktree): Promise<void> {
  const git = new Git(wt.path);
  const base = await baseCommit(model, wt, git);
  if (!base) {
    void vscode.window.showErrorMessage(`Launchpad: cannot tell which commit ${wt.taskId}'s worktree started from.`);
    return;
  }
  const changes = await changedFiles(git, base);
  const short = base.slice(0, 7);
  if (!changes.length) {
    void vscode.window.showInformationMessage(`Launchpad: ${wt.taskId}'s worktree has no changes since ${short}.`);
    return;
  }
  const resources = changes.map(({ status, path }) => {
    const file = vscode.Uri.file(join(wt.path, path));
    const left = status === 'A' ? undefined : baseUri({ repo: wt.path, commit: base, path });
    const right = status === 'D' ? undefined : file;
    return [file, left, right] as const;
  });
  const title = `${wt.taskId}: worktree vs ${short}`;
  try {
    await vscode.commands.executeCommand('vscode.changes', title, resources);
  } catch {
    const picked = await vscode.window.showQuickPick(
      changes.map((c, i) => ({ label: c.path, description: c.status, i })),
      { title, placeHolder: 'A changed file to compare with the base' },
    );
    if (!picked) return;
    const [file, left, right] = resources[picked.i]!;
    const empty = vscode.Uri.from({
      scheme: BASE_SCHEME,
      path: `/${changes[picked.i]!.path}`,
      query: JSON.stringify({ repo: wt.path, commit: base, path: '' }),
    });
    await vscode.commands.executeCommand('vscode.diff', left ?? empty, right ?? left ?? file, `${changes[picked.i]!.path} (${title})`);
  }
}

async function baseCommit(model: StateModel, wt: Worktree, git: Git): Promise<string | undefined> {
  const started = model.snapshot?.byId.get(wt.taskId)?.task.started_at_commit ?? undefined;
  if (started && (await git.commitExists(started))) return started;
  const main = model.stateRoot();
  if (!main) return undefined;
  const mainHead = await new Git(main.root).head();
  if (!mainHead) return undefined;
  const r = await git.run(['merge-base', mainHead, 'HEAD'], { allowFail: true });
  return r.code === 0 ? r.stdout.trim() : undefined;
}

/** Files that differ between `base` and the worktree on disk, untracked ones included. */
async function changedFiles(git: Git, base: string): Promise<Array<{ status: string; path: string }>> {
  const diff = await git.run(['diff', '--name-status', '--no-renames', '-z', base, '--'], { allowFail: true });
  const fields = diff.stdout.split('\0').filter(Boolean);
  const out: Array<{ status: string; path: string }> = [];
  for (let i = 0; i + 1 < fields.length; i += 2) out.push({ status: fields[i]!.charAt(0), path: fields[i + 1]! });
  const untracked = await git.run(['ls-files', '--others', '--exclude-standard', '-z'], { allowFail: true });
  for (const path of untracked.stdout.split('\0').filter(Boolean)) out.push({ status: 'A', path });
  return out;
}
