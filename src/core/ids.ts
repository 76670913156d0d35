// Task ids become branch names and paths, so they are allow-listed, never escaped.
// ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$, plus git's ref rules it lets through: no "..", no trailing "." or ".lock".
export const TASK_ID_PATTERN = /^(?!.*\.\.)(?!.*\.lock$)(?!.*\.$)[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function isValidTaskId(id: string): boolean {
  return TASK_ID_PATTERN.test(id);
}

export const BRANCH_PREFIX = 'harness-';

export function branchFor(id: string): string {
  return BRANCH_PREFIX + id;
}

/** The task id a harness-<id> branch serves, or undefined for any other branch. */
export function taskIdOfBranch(branch: string): string | undefined {
  const name = branch.startsWith('refs/heads/') ? branch.slice('refs/heads/'.length) : branch;
  if (!name.startsWith(BRANCH_PREFIX)) return undefined;
  const id = name.slice(BRANCH_PREFIX.length);
  return isValidTaskId(id) ? id : undefined;
}

/**
 * Orders ids with digit runs compared by value ("t2" before "t10"), so `task-9` and
 * `task-10` sort as a person expects even without zero padding. Deterministic, no locale.
 */
export function compareIds(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(j);
    if (isDigit(ca) && isDigit(cb)) {
      let ie = i;
      let je = j;
      while (ie < a.length && isDigit(a.charCodeAt(ie))) ie++;
      while (je < b.length && isDigit(b.charCodeAt(je))) je++;
      const na = a.slice(i, ie).replace(/^0+(?=\d)/, '');
      const nb = b.slice(j, je).replace(/^0+(?=\d)/, '');
      if (na.length !== nb.length) return na.length - nb.length;
      if (na !== nb) return na < nb ? -1 : 1;
      i = ie;
      j = je;
      continue;
    }
    if (ca !== cb) return ca - cb;
    i++;
    j++;
  }
  return a.length - i - (b.length - j) || (a < b ? -1 : a > b ? 1 : 0);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
