// The project-level checks: state.md's verification command and test suite, run in a given
// checkout, and the interface contracts of completed milestones (a file that must still contain a
// signature). Used by the integration check after each milestone and by the final E2E gate.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { ProcessRecords } from '../process/processRecords';
import { runProcess } from '../process/runProcess';
import type { LongRun } from './longRun';

/** How long the verification command or the test suite may run. */
export const VERIFY_TIMEOUT_MS = 3600_000;

export interface CheckResult {
  ok: boolean;
  /** One line per check, for a checkpoint's Test Results or a summary. */
  lines: string[];
  /** Why it failed: the failing check and the tail of its output. */
  failure: string;
  stopped: boolean;
}

export interface CheckOptions {
  dir: string;
  run: LongRun;
  /** Whose interfaces must hold: milestone ids. */
  interfacesOf: string[];
  env: NodeJS.ProcessEnv;
  records: ProcessRecords;
  /** Transcripts go here (verify-N.log). */
  logDir: string;
  signal?: AbortSignal;
}

export async function runChecks(o: CheckOptions): Promise<CheckResult> {
  const { verification } = o.run.state;
  const commands = [verification.command, verification.testSuite !== verification.command ? verification.testSuite : null].filter(
    (c): c is string => !!c,
  );
  const lines: string[] = [];
  mkdirSync(o.logDir, { recursive: true });
  for (const command of commands) {
    let n = 1;
    while (existsSync(join(o.logDir, `verify-${n}.log`))) n++;
    const r = await runProcess({
      command,
      cwd: o.dir,
      env: o.env,
      timeoutMs: VERIFY_TIMEOUT_MS,
      ...(o.signal ? { signal: o.signal } : {}),
      transcript: join(o.logDir, `verify-${n}.log`),
      captureBytes: 16 * 1024,
      record: { records: o.records, name: `verify-${process.pid}-${n}`, label: `verification ${command}` },
    });
    if (r.aborted) return { ok: false, lines, failure: 'stopped', stopped: true };
    const secs = (r.durationMs / 1000).toFixed(1);
    if (r.code === 0) {
      lines.push(`PASS \`${command}\` (exit 0, ${secs} s)`);
      continue;
    }
    const how = r.timedOut
      ? `timed out after ${VERIFY_TIMEOUT_MS / 1000} s`
      : r.spawnError
        ? `could not start: ${r.spawnError}`
        : `exit ${r.code ?? r.signal}`;
    lines.push(`FAIL \`${command}\` (${how}, ${secs} s)`);
    return { ok: false, lines, failure: `\`${command}\` failed (${how}):\n${r.tail.trim().slice(-3000)}`, stopped: false };
  }
  if (!commands.length) lines.push('no verification command or test suite in state.md (Verification Strategy)');

  const broken: string[] = [];
  let held = 0;
  for (const id of o.interfacesOf) {
    for (const c of o.run.milestones.get(id)?.interfaces ?? []) {
      const path = join(o.dir, c.file);
      const text = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
      if (text !== undefined && text.includes(c.signature)) held++;
      else broken.push(`${id}: ${c.file} ${text === undefined ? 'is missing' : `no longer contains "${c.signature}"`}`);
    }
  }
  if (held || broken.length)
    lines.push(
      `${broken.length ? 'FAIL' : 'PASS'} interfaces: ${held} of ${held + broken.length} contract${held + broken.length === 1 ? '' : 's'} hold`,
    );
  if (broken.length) return { ok: false, lines, failure: `cross-milestone interfaces broken: ${broken.join('; ')}`, stopped: false };
  return { ok: true, lines, failure: '', stopped: false };
}

/** A shell command that checks the contracts `ids` established (the validation of an interface fix). */
export function interfaceCheckCommand(run: LongRun, ids: string[]): string | undefined {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const parts = ids.flatMap((id) => (run.milestones.get(id)?.interfaces ?? []).map((c) => `grep -qF -- ${q(c.signature)} ${q(c.file)}`));
  return parts.length ? parts.join(' && ') : undefined;
}
