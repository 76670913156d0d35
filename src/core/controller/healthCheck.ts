// harness-init.sh at every session start (step 6 of session start). A failure is ENV_SETUP: it runs once
// more, and a second failure stops the session as the machine's failure (exit 2, with what to do).
import { accessSync, constants, existsSync } from 'node:fs';

import { escapedMessage } from '../process/runProcess';
import { lastMeaningfulLine } from './agentOutput';
import type { Session } from './session';

export async function runHealthCheck(s: Session): Promise<boolean> {
  const script = s.paths.initScript;
  if (!existsSync(script)) return true;
  const terminal = s.terminals.open({ id: 'harness-init', title: 'health check (harness-init.sh)' }, s.paths.root);
  // Executable: honour its shebang; otherwise plain sh.
  const command = isExecutable(script) ? { file: script, args: [] } : { file: '/bin/sh', args: [script] };
  let why = '';
  try {
    for (let round = 1; round <= 2; round++) {
      const r = await terminal.run('health-check', {
        command,
        cwd: s.paths.root,
        timeoutMs: s.config.healthCheckTimeoutMs,
        signal: s.stopSignal,
        captureBytes: 16 * 1024,
        record: { records: s.records, name: 'harness-init', label: 'harness-init.sh' },
      });
      if (r.escaped) s.log({ type: 'WARN', message: escapedMessage('harness-init.sh', r.escaped) });
      if (r.code === 0) {
        s.log({ type: 'INIT', message: 'Environment health check: PASS' });
        return true;
      }
      if (s.stopping) return false;
      const last = lastMeaningfulLine(r.tail);
      why = `${
        r.timedOut ? `timed out after ${s.config.healthCheckTimeoutMs / 1000}s` : (r.spawnError ?? `exited with ${r.code ?? r.signal}`)
      }${last ? `: ${last}` : ''}`;
      s.log({
        type: 'ERROR',
        category: 'ENV_SETUP',
        message: `harness-init.sh ${why}${round === 1 ? ' (running it once more)' : ''}`,
      });
    }
    s.log({ type: 'INIT', message: 'Environment health check: FAIL' });
    s.stopForEnvironment({
      category: 'ENV_SETUP',
      cause: `the health check harness-init.sh failed twice (${why})`,
      advice: `fix what it checks (run it by hand in ${s.paths.root}: sh harness-init.sh)`,
    });
    return false;
  } finally {
    terminal.close('completed');
  }
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
