// Parses `git worktree list --porcelain`. Pure, tested on literal strings.

export interface WorktreeInfo {
  path: string;
  head?: string | undefined;
  /** Full ref (`refs/heads/harness-task-001`), absent when detached. */
  branch?: string | undefined;
  bare: boolean;
  detached: boolean;
  locked: boolean;
  prunable: boolean;
}

export function parseWorktreeList(text: string): WorktreeInfo[] {
  const result: WorktreeInfo[] = [];
  // Records are separated by a blank line; -z output uses NUL instead of newlines.
  const lines = text.includes('\0') ? text.split('\0') : text.split('\n');
  let current: WorktreeInfo | undefined;
  for (const raw of lines) {
    const line = raw.replace(/\r$/, '');
    if (line === '') {
      if (current) result.push(current);
      current = undefined;
      continue;
    }
    const space = line.indexOf(' ');
    const key = space < 0 ? line : line.slice(0, space);
    const value = space < 0 ? '' : line.slice(space + 1);
    if (key === 'worktree') {
      if (current) result.push(current);
      current = { path: value, bare: false, detached: false, locked: false, prunable: false };
      continue;
    }
    if (!current) continue;
    switch (key) {
      case 'HEAD':
        current.head = value;
        break;
      case 'branch':
        current.branch = value;
        break;
      case 'bare':
        current.bare = true;
        break;
      case 'detached':
        current.detached = true;
        break;
      case 'locked':
        current.locked = true;
        break;
      case 'prunable':
        current.prunable = true;
        break;
    }
  }
  if (current) result.push(current);
  return result;
}
