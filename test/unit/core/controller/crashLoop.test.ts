// The crash-loop rule read from the log: sessions that ended in a crash without a task's progress.
// The integration check of the base at each session's start is not progress: a controller that
// dies during it in every session is a crash loop like any other.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { crashesWithoutProgress } from '../../../../src/core/controller/crashLoop';
import { tempDir } from '../../helpers/tmp';

const line = (session: number, rest: string) => `[2026-01-01T00:00:0${session}Z] [SESSION-${session}] ${rest}`;

function logOf(sessions: string[][]): string {
  const file = join(tempDir('launchpad-crashloop-'), 'harness-progress.txt');
  const lines = sessions.flatMap((rest, i) => [line(i + 1, 'LOCK acquired (pid=1)'), ...rest.map((r) => line(i + 1, r))]);
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

describe('controller/crashLoop', () => {
  it("sessions that died during the base's integration check, with no task's work, are a crash loop", () => {
    const check = 'VALIDATE [INTEGRATION] commit=abc1234 command="npm test" started';
    assert.deepEqual(crashesWithoutProgress(logOf([[check], [check], [check], []])), [3, 2, 1]);
  });

  it("a task's validation in one of them is progress: the streak ends there", () => {
    const check = 'VALIDATE [INTEGRATION] commit=abc1234 command="npm test" started';
    const task = 'VALIDATE [task-001] command="npm test" result=FAIL';
    assert.deepEqual(crashesWithoutProgress(logOf([[check], [check, task], [check], []])), [3]);
  });
});
