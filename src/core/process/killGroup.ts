/** Signals a whole process group (leader pid = group id). False when nothing was left. */
export function killGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

export function groupAlive(pgid: number): boolean {
  return killGroup(pgid, 0 as unknown as NodeJS.Signals);
}
