import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { CATEGORIES, formatLogLine, LOG_TYPES, type LogEntry } from '../../../../src/core/log/logLine';
import {
  filterLog,
  isEmptyFilter,
  lineMatches,
  type LogFilter,
  LogFollower,
  readLogLines,
  tailLog,
} from '../../../../src/core/log/logReader';
import { tempDir } from '../../helpers/tmp';
import { rng } from '../fixtures';

const TASKS = ['task-001', 'task-002', 'task-010', 'A.b_c-9'];
// Fragments that put every needle where it does not count: a task id, a type, a session and a
// category inside the message of a line that is about something else.
const FRAGMENTS = [
  'TIMEOUT while running the validation',
  'STATS pending',
  'nothing to see!',
  'mentions [task-001] inside',
  'quoted "] ERROR" here',
  'see [SESSION-2] later',
  '[TEST_FAIL] echoed',
  'unicode é✓ 日本',
  'acquired (pid=123)',
  'agent=agent_x result=PASS',
  'Blocked by failed task-002',
  '[ENV_SETUP]',
  'blocked=1 attempts_total=5',
];

interface Log {
  /** Lines as a reader should return them: no line ending. */
  lines: string[];
  text: string;
}

/** A random log in the grammar with free-text lines mixed in and some CRLF endings. */
function makeLog(seed: number, count: number, extra: (i: number) => string | undefined = () => undefined): Log {
  const rand = rng(seed);
  const lines: string[] = [];
  let text = '';
  for (let i = 0; i < count; i++) {
    let line = extra(i);
    if (line === undefined) {
      if (rand(25) === 0) {
        line = `free text ${FRAGMENTS[rand(FRAGMENTS.length)]} TIMEOUT ${rand(2) ? 'STATS' : ''} [task-001] ERROR`;
      } else {
        const entry: LogEntry = {
          timestamp: `2025-07-01T10:${String(rand(60)).padStart(2, '0')}:00Z`,
          session: [1, 2, 3, 12][rand(4)]!,
          type: LOG_TYPES[rand(LOG_TYPES.length)]!,
          taskId: rand(3) ? TASKS[rand(TASKS.length)] : undefined,
          category: rand(3) === 0 ? CATEGORIES[rand(CATEGORIES.length)] : undefined,
          message: Array.from({ length: rand(4) }, () => FRAGMENTS[rand(FRAGMENTS.length)]).join(' '),
        };
        line = formatLogLine(entry);
      }
    }
    lines.push(line);
    text += line + (rand(8) === 0 ? '\r\n' : '\n');
  }
  return { lines, text };
}

const FILTERS: Array<[string, LogFilter]> = [
  ['no filter', {}],
  ['type ERROR', { type: 'ERROR' }],
  ['type Completed', { type: 'Completed' }],
  ['type STATS', { type: 'STATS' }],
  ['task task-001', { taskId: 'task-001' }],
  ['task A.b_c-9', { taskId: 'A.b_c-9' }],
  ['session 2', { session: 2 }],
  ['session 12', { session: 12 }],
  ['category TEST_FAIL', { category: 'TEST_FAIL' }],
  ['category ENV_SETUP', { category: 'ENV_SETUP' }],
  ['regex literal', { regex: /ERROR/ }],
  ['regex literal with g flag', { regex: /pid=123/g }],
  ['regex with a required literal', { regex: /TIMEOUT[^!]*STATS/ }],
  ['regex across a newline, case-insensitive (chunk path)', { regex: /timeout[^!]*stats/i }],
  ['regex with no usable literal (chunk path)', { regex: /T[^!]*S/ }],
  ['regex alternation (chunk path)', { regex: /ERROR|WARN/ }],
  ['regex anchored at the start', { regex: /^\[2025-07-01T10:0[0-4]/ }],
  ['regex anchored at the end', { regex: /pid=\d+\)$/ }],
  ['regex with a group', { regex: /result=(PASS|FAIL)/ }],
  ['regex with escapes', { regex: /\[task-0[01][0-9]\] \[TEST_FAIL\]/ }],
  ['regex non-ASCII', { regex: /é✓/u }],
  ['regex sticky', { regex: /\[2025/y }],
  ['regex dotAll', { regex: /TIMEOUT.*STATS/s }],
  ['type + category', { type: 'ERROR', category: 'TIMEOUT' }],
  ['task + session', { taskId: 'task-002', session: 1 }],
  ['type + regex', { type: 'STATS', regex: /blocked=\d/ }],
  ['session + chunk regex', { session: 3, regex: /timeout[^!]*stats/i }],
  ['everything', { type: 'ERROR', taskId: 'task-010', session: 1, category: 'DEPENDENCY', regex: /Blocked/ }],
];

function reference(log: Log, f: LogFilter): string[] {
  return log.lines.filter((l) => lineMatches(l, f));
}

function writeLog(log: Log | string): string {
  const file = join(tempDir('launchpad-log-'), 'harness-progress.txt');
  writeFileSync(file, typeof log === 'string' ? log : log.text);
  return file;
}

describe('core/logReader', () => {
  describe('filterLog equals lineMatches over every line', () => {
    const log = makeLog(2024, 3000, (i) => {
      // Lines for the combined filter, and near misses that differ in one field each.
      if (i % 97 !== 5) return undefined;
      const variants = [
        '[2025-07-01T10:00:00Z] [SESSION-1] ERROR [task-010] [DEPENDENCY] Blocked by failed task-002',
        '[2025-07-01T10:00:00Z] [SESSION-2] ERROR [task-010] [DEPENDENCY] Blocked by failed task-002',
        '[2025-07-01T10:00:00Z] [SESSION-1] WARN [task-010] [DEPENDENCY] Blocked by failed task-002',
        '[2025-07-01T10:00:00Z] [SESSION-1] ERROR [task-001] [DEPENDENCY] Blocked by failed task-002',
        '[2025-07-01T10:00:00Z] [SESSION-1] ERROR [task-010] [TIMEOUT] Blocked by failed task-002',
        '[2025-07-01T10:00:00Z] [SESSION-1] ERROR [task-010] [DEPENDENCY] Circular dependency detected',
        '[2025-07-01T10:00:00Z] [SESSION-02] ERROR [task-010] [DEPENDENCY] session written with a leading zero',
      ];
      return variants[i % variants.length];
    });
    const file = writeLog(log);
    for (const [name, f] of FILTERS) {
      it(name, () => {
        const want = reference(log, f);
        if (!isEmptyFilter(f)) assert.ok(want.length < log.lines.length, 'the filter must reject something');
        assert.ok(want.length > 0, 'the filter must match something');
        assert.deepEqual(filterLog(file, f), want);
      });
    }
  });

  it('the reference itself: lineMatches on a few literal lines', () => {
    const line = '[2025-07-01T10:10:03Z] [SESSION-1] ERROR [task-002] [TEST_FAIL] Rate limit: expected 429 got 200';
    assert.equal(lineMatches(line, { type: 'ERROR', taskId: 'task-002', session: 1, category: 'TEST_FAIL', regex: /429/ }), true);
    assert.equal(lineMatches(line, { taskId: 'task-001' }), false);
    assert.equal(lineMatches(line, { session: 2 }), false);
    assert.equal(lineMatches(line, { category: 'TIMEOUT' }), false);
    assert.equal(lineMatches(line, { type: 'WARN' }), false);
    assert.equal(lineMatches(line, { regex: /^ERROR/ }), false);
    assert.equal(lineMatches('free text ERROR [task-002]', { type: 'ERROR' }), false, 'a free-text line has no type');
    assert.equal(lineMatches('free text ERROR [task-002]', { regex: /ERROR/ }), true);
  });

  it('a regex that could match across lines only counts whole-line matches', () => {
    const log: Log = {
      lines: [
        '[2025-07-01T10:00:00Z] [SESSION-1] ERROR [task-001] [TIMEOUT] validation took too long',
        '[2025-07-01T10:00:01Z] [SESSION-1] STATS tasks_total=1',
        '[2025-07-01T10:00:02Z] [SESSION-1] WARN TIMEOUT then ! then STATS',
        '[2025-07-01T10:00:03Z] [SESSION-1] WARN TIMEOUT and STATS on one line',
      ],
      text: '',
    };
    log.text = log.lines.join('\n') + '\n';
    const file = writeLog(log);
    for (const regex of [/TIMEOUT[^!]*STATS/, /timeout[^!]*stats/i, /T[^!]*S\b/, /TIMEOUT\s+\S*\s*STATS|and STATS/]) {
      assert.deepEqual(filterLog(file, { regex }), reference(log, { regex }), String(regex));
    }
    assert.deepEqual(filterLog(file, { regex: /TIMEOUT[^!]*STATS/ }), [log.lines[3]]);
  });

  it('a regex that matches the empty string adds no phantom lines', () => {
    const log = makeLog(5, 50);
    const file = writeLog(log);
    for (const regex of [/.*/, /^/, /x*/, /$/]) {
      assert.deepEqual(filterLog(file, { regex }), reference(log, { regex }), String(regex));
    }
  });

  describe('chunks of 4 MiB', function () {
    this.timeout(30_000);
    // About 9 MiB: short lines around long ones (40–60 KiB and one of 5 MiB), CRLF mixed in, so
    // chunk boundaries fall inside lines, inside CRLF pairs, and a line outgrows a chunk.
    const rand = rng(99);
    const big = makeLog(77, 24_000, (i) => {
      if (i === 12_000)
        return `[2025-07-01T10:00:00Z] [SESSION-2] ERROR [task-002] [TEST_FAIL] ${'x'.repeat(5 * 1024 * 1024)} TIMEOUT STATS end`;
      if (i % 300 === 7) return `[2025-07-01T10:00:00Z] [SESSION-1] WARN [task-001] ${'y'.repeat(40_000 + rand(20_000))} TIMEOUT é✓ STATS`;
      return undefined;
    });
    let file: string;
    before(() => {
      file = writeLog(big);
    });

    for (const [name, f] of FILTERS.filter(([n]) =>
      /no filter|task task-001|session 2|category TEST_FAIL|required literal|chunk path|non-ASCII|anchored at the end/.test(n),
    )) {
      it(`${name}: same lines as the reference`, () => {
        const got = filterLog(file, f);
        const want = reference(big, f);
        assert.equal(got.length, want.length);
        assert.ok(
          got.every((l, i) => l === want[i]),
          'same lines in the same order',
        );
      });
    }

    it('a line longer than a chunk comes back whole', () => {
      const got = filterLog(file, { session: 2, category: 'TEST_FAIL', regex: /x{1000}/ });
      assert.equal(got.length, 1);
      assert.equal(got[0], big.lines[12_000]);
    });

    it('delivers the lines in batches, not one callback per line', () => {
      let calls = 0;
      let lines = 0;
      readLogLines(file, {}, (batch) => {
        calls++;
        lines += batch.length;
      });
      assert.equal(lines, big.lines.length);
      assert.ok(calls >= 2 && calls < 100, `${calls} callbacks`);
    });
  });

  describe('CRLF', () => {
    const text =
      '[2025-07-01T10:00:00Z] [SESSION-1] INIT crlf\r\n[2025-07-01T10:00:01Z] [SESSION-1] ERROR [task-001] [TIMEOUT] slow\r\nfree text\r\n';
    for (const [name, f] of [
      ['no filter', {}],
      ['needle', { taskId: 'task-001' }],
      ['chunk regex', { regex: /slow|crlf|text$/ }],
      ['literal regex', { regex: /INIT/ }],
    ] as Array<[string, LogFilter]>) {
      it(`lines come back without their CR (${name})`, () => {
        const got = filterLog(writeLog(text), f);
        assert.ok(got.length > 0);
        for (const line of got) assert.equal(line.includes('\r'), false, JSON.stringify(line));
      });
    }

    it('a regex anchored at the line end sees the line without its CR', () => {
      assert.deepEqual(filterLog(writeLog(text), { regex: /slow$/ }), [
        '[2025-07-01T10:00:01Z] [SESSION-1] ERROR [task-001] [TIMEOUT] slow',
      ]);
    });
  });

  describe('incremental reads', () => {
    const l1 = '[2025-07-01T10:00:00Z] [SESSION-1] ERROR [task-001] [TEST_FAIL] one';
    const l2 = '[2025-07-01T10:00:01Z] [SESSION-1] ERROR [task-002] [TEST_FAIL] two';
    const l3 = '[2025-07-01T10:00:02Z] [SESSION-1] ERROR [task-001] [TIMEOUT] three';

    for (const [name, f] of [
      ['no filter', {}],
      ['needle', { type: 'ERROR' }],
      ['chunk regex', { regex: /t[hw]|one/ }],
    ] as Array<[string, LogFilter]>) {
      it(`leave a trailing partial line for the next read (${name})`, () => {
        const file = writeLog(`${l1}\n${l2.slice(0, 30)}`);
        const seen: string[] = [];
        const first = readLogLines(file, f, (lines) => seen.push(...lines));
        assert.deepEqual(seen, [l1]);
        assert.equal(first.offset, Buffer.byteLength(l1) + 1);
        appendFileSync(file, `${l2.slice(30)}\n${l3}\n`);
        const second = readLogLines(file, f, (lines) => seen.push(...lines), first.offset);
        assert.deepEqual(seen, [l1, l2, l3]);
        assert.equal(second.offset, Buffer.byteLength(`${l1}\n${l2}\n${l3}\n`));
        const third = readLogLines(file, f, (lines) => seen.push(...lines), second.offset);
        assert.equal(third.offset, second.offset);
        assert.equal(seen.length, 3);
      });
    }

    it('a file that shrank (replaced) is read again from the start', () => {
      const file = writeLog(`${l1}\n${l2}\n${l3}\n`);
      const end = readLogLines(file, {}, () => undefined).offset;
      writeFileSync(file, `${l3}\n`);
      const seen: string[] = [];
      readLogLines(file, {}, (lines) => seen.push(...lines), end);
      assert.deepEqual(seen, [l3]);
    });

    it('a missing file reads as empty', () => {
      const seen: string[] = [];
      assert.deepEqual(
        readLogLines(join(tempDir(), 'nope.txt'), {}, (l) => seen.push(...l), 10),
        { offset: 0 },
      );
      assert.deepEqual(seen, []);
    });

    it('offsets are bytes: multi-byte characters do not shift them', () => {
      const a = '[2025-07-01T10:00:00Z] [SESSION-1] WARN é✓ 日本';
      const file = writeLog(`${a}\n`);
      const { offset } = readLogLines(file, {}, () => undefined);
      assert.equal(offset, Buffer.byteLength(a) + 1);
      appendFileSync(file, `${l1}\n`);
      const seen: string[] = [];
      readLogLines(file, {}, (l) => seen.push(...l), offset);
      assert.deepEqual(seen, [l1]);
    });
  });

  describe('LogFollower', () => {
    it('returns only the matching lines appended since the last poll', () => {
      const file = writeLog('');
      const follower = new LogFollower(file, { taskId: 'task-001' });
      assert.deepEqual(follower.poll(), []);
      appendFileSync(
        file,
        '[2025-07-01T10:00:00Z] [SESSION-1] DISPATCH [task-001] agent=a\n[2025-07-01T10:00:00Z] [SESSION-1] DISPATCH [task-002] agent=b\n',
      );
      assert.deepEqual(follower.poll(), ['[2025-07-01T10:00:00Z] [SESSION-1] DISPATCH [task-001] agent=a']);
      assert.deepEqual(follower.poll(), []);
      appendFileSync(file, '[2025-07-01T10:00:01Z] [SESSION-1] Completed [task-0');
      assert.deepEqual(follower.poll(), [], 'a partial line waits');
      appendFileSync(file, '01]\n');
      assert.deepEqual(follower.poll(), ['[2025-07-01T10:00:01Z] [SESSION-1] Completed [task-001]']);
      assert.equal(follower.position, Buffer.byteLength(require('node:fs').readFileSync(file)));
    });

    it('starts from a given offset (a live view that has already shown the file)', () => {
      const first = '[2025-07-01T10:00:00Z] [SESSION-1] INIT a\n';
      const file = writeLog(first);
      const follower = new LogFollower(file, {}, Buffer.byteLength(first));
      assert.deepEqual(follower.poll(), []);
      appendFileSync(file, '[2025-07-01T10:00:01Z] [SESSION-1] INIT b\n');
      assert.deepEqual(follower.poll(), ['[2025-07-01T10:00:01Z] [SESSION-1] INIT b']);
    });
  });

  describe('tailLog', () => {
    it('returns the last lines of a file larger than its first read', () => {
      const log = makeLog(11, 5000);
      const file = writeLog(log);
      assert.deepEqual(tailLog(file, 5), log.lines.slice(-5));
      assert.deepEqual(tailLog(file, 1500), log.lines.slice(-1500));
    });

    it('returns every line when asked for more than there are', () => {
      const log = makeLog(12, 7);
      assert.deepEqual(tailLog(writeLog(log), 50), log.lines);
    });

    it('handles a last line longer than its first read, and no final newline', () => {
      const long = `[2025-07-01T10:00:00Z] [SESSION-1] WARN ${'z'.repeat(300_000)}`;
      const file = writeLog(`a\nb\n${long}\nlast without newline`);
      assert.deepEqual(tailLog(file, 2), [long, 'last without newline']);
    });

    it('strips CR, and gives [] for an empty or missing file', () => {
      assert.deepEqual(tailLog(writeLog('a\r\nb\r\n'), 5), ['a', 'b']);
      assert.deepEqual(tailLog(writeLog(''), 5), []);
      assert.deepEqual(tailLog(join(tempDir(), 'missing'), 5), []);
    });

    it('gives [] when asked for no lines', () => {
      assert.deepEqual(tailLog(writeLog('a\nb\nc\n'), 0), []);
    });
  });
});
