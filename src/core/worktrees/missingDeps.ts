// A new worktree holds only tracked files: no node_modules, no .venv, no .env. A validation that
// fails for that reason fails in every worktree, every attempt; when neither .worktreeinclude nor
// worktree_setup is set, its failure says which of them to set. Recognised from the output
// (a module or command not found) or from the worktree itself (package.json without the
// node_modules the main checkout has).
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { MAX_REASON_CHARS } from '../tasks/errorEntry';
import { readIncludeRules, WORKTREE_INCLUDE_FILE } from './include';

/** Lines that say a dependency is not installed: Node, a shell, Python. */
const SIGNATURES = [
  /Cannot find (?:module|package) ['"][^'"]+['"]/,
  /ERR_MODULE_NOT_FOUND/,
  /command not found: \S+/, // zsh
  /\S+: command not found/, // bash
  /^(?:\/bin\/)?sh: (?:\d+: )?\S+: not found/, // dash
  /No module named ['"]?[\w.]+['"]?/,
  /ModuleNotFoundError/,
];

/** What in the output (or the worktree) says the dependencies are missing; undefined when nothing does. */
export function missingDependencySign(output: string, projectInWorktree: string, projectInMain: string): string | undefined {
  for (const line of output.split('\n')) {
    for (const re of SIGNATURES) {
      const m = re.exec(line);
      if (m) return m[0];
    }
  }
  const nodeModulesMissing =
    existsSync(join(projectInWorktree, 'package.json')) &&
    !existsSync(join(projectInWorktree, 'node_modules')) &&
    existsSync(join(projectInMain, 'node_modules'));
  return nodeModulesMissing ? 'node_modules is missing' : undefined;
}

/** The set-up command a person would most likely want, from the lock files the project has. */
export function suggestedSetup(projectDir: string): string {
  const has = (f: string) => existsSync(join(projectDir, f));
  if (has('pnpm-lock.yaml')) return 'pnpm install --frozen-lockfile';
  if (has('yarn.lock')) return 'yarn install --frozen-lockfile';
  if (has('package-lock.json')) return 'npm ci';
  if (has('package.json')) return 'npm install';
  if (has('poetry.lock')) return 'poetry install';
  if (has('requirements.txt')) return 'pip install -r requirements.txt';
  return 'npm ci';
}

/** What the explanation needs of a session. */
export interface DependencyContext {
  /** The main checkout, where .worktreeinclude is read. */
  toplevel: string;
  /** The state root: the task's project folder in the main checkout. */
  paths: { root: string };
  config: { worktreeSetup: string | undefined };
}

/**
 * A failed validation's reason, with what to set when the output shows missing dependencies and
 * neither .worktreeinclude nor worktree_setup is set; as it was otherwise. Fits an error entry.
 */
export function explainMissingDependencies(ctx: DependencyContext, projectInWorktree: string, reason: string, output: string): string {
  if (ctx.config.worktreeSetup || readIncludeRules(ctx.toplevel)) return reason;
  const sign = missingDependencySign(output, projectInWorktree, ctx.paths.root);
  if (!sign) return reason;
  const hint =
    `dependencies missing in the worktree (${sign.slice(0, 120)}): a worktree holds only tracked files; ` +
    `set session_config.worktree_setup (e.g. "${suggestedSetup(ctx.paths.root)}") or list the ignored files to copy in ${WORKTREE_INCLUDE_FILE}`;
  const room = MAX_REASON_CHARS - hint.length - 3;
  return `${reason.replace(/\s*\n\s*/g, ' ').slice(0, Math.max(0, room))} — ${hint}`;
}
