// Finding a task's last line in the progress log by scanning backwards in chunks.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { lastLineOfTask } from '../../../../src/core/log/logPosition';
import { tempDir } from '../../helpers/tmp';

const line = (n: number, type: string, id?: string, msg = 'x') =>
  `[2025-07-01T10:00:${String(n % 60).padStart(2, '0')}Z] [SESSION-1] ${type}${id ? ` [${id}]` : ''} ${msg}`;

describe('last log line of a task', () => {
  it('finds the last line whose task field is the id, not a mention in a message', () => {
    const file = join(tempDir(), 'harness-progress.txt');
    const lines = [
      line(0, 'DISPATCH', 'task-001'),
      line(1, 'VALIDATE', 'task-001'),
      line(2, 'BATCH', undefined, 'dispatching 1 task: [task-001]'),
      line(3, 'ERROR', 'task-002', 'see [task-001]'),
    ];
    writeFileSync(file, lines.join('\n') + '\n');
    assert.deepEqual(lastLineOfTask(file, 'task-001'), { line: 1, text: lines[1] });
    assert.deepEqual(lastLineOfTask(file, 'task-002'), { line: 3, text: lines[3] });
    assert.equal(lastLineOfTask(file, 'task-003'), undefined);
    assert.equal(lastLineOfTask(join(tempDir(), 'missing.txt'), 'task-001'), undefined);
  });

  it('handles a last line without a newline, CRLF, and the first line of the file', () => {
    const file = join(tempDir(), 'harness-progress.txt');
    writeFileSync(file, `${line(0, 'INIT', 'a')}\r\n${line(1, 'INIT', 'b')}`);
    assert.deepEqual(lastLineOfTask(file, 'b'), { line: 1, text: line(1, 'INIT', 'b') });
    assert.deepEqual(lastLineOfTask(file, 'a'), { line: 0, text: line(0, 'INIT', 'a') });
  });

  it('finds lines across chunk boundaries of a log of several MiB', () => {
    const file = join(tempDir(), 'harness-progress.txt');
    const lines: string[] = [];
    for (let i = 0; i < 60_000; i++)
      lines.push(line(i, 'CHECKPOINT', i % 7 === 0 ? 'task-7' : 'task-other', 'step=1/2 "' + 'y'.repeat(i % 50) + '"'));
    lines.push(line(1, 'STATS', undefined, 'tasks_total=2'));
    writeFileSync(file, lines.join('\n') + '\n');
    const want = lines.findLastIndex((l) => l.includes(' [task-7]'));
    assert.deepEqual(lastLineOfTask(file, 'task-7'), { line: want, text: lines[want] });
    // The very first line, found after scanning every chunk back to the start.
    writeFileSync(file, [line(0, 'INIT', 'first'), ...lines].join('\n') + '\n');
    assert.deepEqual(lastLineOfTask(file, 'first'), { line: 0, text: line(0, 'INIT', 'first') });
  });
});
