import assert from 'node:assert/strict';

import {
  CATEGORIES,
  escapeMessage,
  formatLogLine,
  isCategory,
  isLogType,
  LOG_TYPES,
  type LogEntry,
  logTimestamp,
  parseLogLine,
} from '../../../../src/core/log/logLine';
import { fixtureText } from '../fixtures';

const TS = '2025-07-01T10:00:00Z';

/** Only the fields that are set, so deepEqual does not trip over `taskId: undefined`. */
function fields(e: LogEntry | undefined): Record<string, unknown> | undefined {
  if (!e) return undefined;
  return Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined));
}

describe('core/logLine', () => {
  it('knows the types and categories of the grammar', () => {
    assert.deepEqual([...LOG_TYPES].sort(), [
      'AGENT_DONE',
      'BATCH',
      'CHECKPOINT',
      'Completed',
      'DISCARD',
      'DISPATCH',
      'ERROR',
      'INIT',
      'LOCK',
      'MERGE',
      'QUESTION',
      'RECOVERY',
      'REVIEW',
      'ROLLBACK',
      'STATS',
      'Starting',
      'VALIDATE',
      'WARN',
    ]);
    assert.deepEqual([...CATEGORIES].sort(), [
      'AGENT_FAIL',
      'CONFIG',
      'DEPENDENCY',
      'ENV_SETUP',
      'INTEGRATION',
      'MERGE_CONFLICT',
      'SESSION_TIMEOUT',
      'TASK_EXEC',
      'TEST_FAIL',
      'TIMEOUT',
    ]);
    assert.equal(isLogType('Completed'), true);
    assert.equal(isLogType('COMPLETED'), false);
    assert.equal(isCategory('TIMEOUT'), true);
    assert.equal(isCategory('task-001'), false);
  });

  describe("the launchpad-run protocol's example log", () => {
    const lines = fixtureText('v3-example-progress.txt').trimEnd().split('\n');

    it('every line parses and formats back to itself', () => {
      assert.equal(lines.length, 19);
      for (const line of lines) {
        const e = parseLogLine(line);
        assert.ok(e, line);
        assert.equal(e.timestamp.startsWith('2025-07-01T10:'), true);
        assert.equal(e.session, 1);
        assert.equal(formatLogLine(e), line);
      }
    });

    const expected: Array<[number, Record<string, unknown>]> = [
      [0, { type: 'INIT', message: 'Launchpad runner initialized for project /path/to/project' }],
      [2, { type: 'LOCK', message: 'acquired (pid=12345)' }],
      [3, { type: 'BATCH', message: 'dispatching 3 tasks: [task-001, task-002, task-004]' }],
      [4, { type: 'DISPATCH', taskId: 'task-001', message: 'agent=agent_abc123 worktree=harness-task-001' }],
      [7, { type: 'AGENT_DONE', taskId: 'task-001', message: 'agent=agent_abc123 result=success' }],
      [8, { type: 'VALIDATE', taskId: 'task-001', message: 'command="npm test -- --testPathPattern=auth" result=PASS' }],
      [9, { type: 'MERGE', taskId: 'task-001', message: 'branch=harness-task-001 into=develop (commit abc1234)' }],
      [10, { type: 'Completed', taskId: 'task-001', message: '' }],
      [13, { type: 'DISCARD', taskId: 'task-002', message: 'worktree=harness-task-002 reason="validation failed"' }],
      [14, { type: 'ERROR', taskId: 'task-002', category: 'TEST_FAIL', message: 'Rate limit middleware test: expected 429 got 200' }],
      [17, { type: 'ERROR', taskId: 'task-004', category: 'AGENT_FAIL', message: 'Sub-agent could not resolve import errors' }],
      [18, { type: 'STATS', message: 'tasks_total=8 completed=1 failed=2 in_batch=0 pending=4 blocked=1 attempts_total=5' }],
    ];
    for (const [index, want] of expected) {
      it(`line ${index + 1}: ${String(want.type)}${want.taskId ? ` [${String(want.taskId)}]` : ''}${want.category ? ` [${String(want.category)}]` : ''}`, () => {
        const e = fields(parseLogLine(lines[index]!))!;
        delete e.timestamp;
        assert.deepEqual(e, { session: 1, ...want });
      });
    }
  });

  describe("the harness protocol's example log", () => {
    const cases: Array<[string, Record<string, unknown>]> = [
      [
        '[2025-07-01T10:00:11Z] [SESSION-1] Starting [task-001] Implement user authentication (base=def5678)',
        { type: 'Starting', taskId: 'task-001', message: 'Implement user authentication (base=def5678)' },
      ],
      [
        '[2025-07-01T10:05:00Z] [SESSION-1] CHECKPOINT [task-001] step=2/4 "auth routes created, tests pending"',
        { type: 'CHECKPOINT', taskId: 'task-001', message: 'step=2/4 "auth routes created, tests pending"' },
      ],
      [
        '[2025-07-01T10:15:30Z] [SESSION-1] Completed [task-001] (commit abc1234)',
        { type: 'Completed', taskId: 'task-001', message: '(commit abc1234)' },
      ],
      [
        '[2025-07-01T10:20:00Z] [SESSION-1] ERROR [task-002] [TASK_EXEC] Redis connection refused',
        { type: 'ERROR', taskId: 'task-002', category: 'TASK_EXEC', message: 'Redis connection refused' },
      ],
      [
        '[2025-07-01T10:20:01Z] [SESSION-1] ROLLBACK [task-002] git reset --hard abc1234',
        { type: 'ROLLBACK', taskId: 'task-002', message: 'git reset --hard abc1234' },
      ],
      [
        '[2025-07-01T10:20:02Z] [SESSION-1] STATS tasks_total=5 completed=1 failed=1 pending=3 blocked=0 attempts_total=2 checkpoints=1',
        { type: 'STATS', message: 'tasks_total=5 completed=1 failed=1 pending=3 blocked=0 attempts_total=2 checkpoints=1' },
      ],
      [
        '[2025-07-01T10:00:00Z] [SESSION-1] INIT Harness initialized for project /path/to/project',
        { type: 'INIT', message: 'Harness initialized for project /path/to/project' },
      ],
    ];
    for (const [line, want] of cases) {
      it(`${String(want.type)}${want.taskId ? ` [${String(want.taskId)}]` : ''}`, () => {
        const e = fields(parseLogLine(line))!;
        assert.equal(e.session, 1);
        delete e.timestamp;
        delete e.session;
        assert.deepEqual(e, want);
        assert.equal(formatLogLine(parseLogLine(line)!), line);
      });
    }
  });

  it('ERROR [ENV_SETUP] without a task id: the bracket is the category', () => {
    const line = `[${TS}] [SESSION-3] ERROR [ENV_SETUP] harness-tasks.json corrupted and unrecoverable`;
    assert.deepEqual(fields(parseLogLine(line)), {
      timestamp: TS,
      session: 3,
      type: 'ERROR',
      category: 'ENV_SETUP',
      message: 'harness-tasks.json corrupted and unrecoverable',
    });
    assert.equal(
      formatLogLine({
        timestamp: TS,
        session: 3,
        type: 'ERROR',
        category: 'ENV_SETUP',
        message: 'harness-tasks.json corrupted and unrecoverable',
      }),
      line,
    );
  });

  it('a second bracket that is not a category stays in the message', () => {
    assert.deepEqual(fields(parseLogLine(`[${TS}] [SESSION-1] WARN [task-1] [not-a-category] text`)), {
      timestamp: TS,
      session: 1,
      type: 'WARN',
      taskId: 'task-1',
      message: '[not-a-category] text',
    });
  });

  it('format → parse round-trips every type with every category, with and without a task id', () => {
    let count = 0;
    for (const type of LOG_TYPES) {
      for (const category of [undefined, ...CATEGORIES]) {
        for (const taskId of [undefined, 'task-001', 'A.b_c-9']) {
          for (const message of ['', 'plain message', 'with "quotes" = and [brackets] and trailing  ', 'unicode ✓ é 日本']) {
            const entry: LogEntry = { timestamp: TS, session: 12, type, taskId, category, message };
            const line = formatLogLine(entry);
            assert.equal(line.includes('\n'), false);
            assert.deepEqual(fields(parseLogLine(line)), fields(entry), line);
            count++;
          }
        }
      }
    }
    assert.equal(count, 18 * 11 * 3 * 4);
  });

  it('escapes newlines so a message never spans lines', () => {
    const entry: LogEntry = {
      timestamp: TS,
      session: 1,
      type: 'ERROR',
      taskId: 'task-002',
      category: 'TEST_FAIL',
      message: 'line one\nline two\r\nline three\r',
    };
    const line = formatLogLine(entry);
    assert.equal(line, `[${TS}] [SESSION-1] ERROR [task-002] [TEST_FAIL] line one\\nline two\\r\\nline three\\r`);
    assert.equal(line.split(/\r|\n/).length, 1);
    const back = parseLogLine(line)!;
    assert.equal(back.message, 'line one\\nline two\\r\\nline three\\r');
    assert.equal(back.category, 'TEST_FAIL');
    assert.equal(escapeMessage('a\nb'), 'a\\nb');
  });

  it('parses a line that kept its CR (a CRLF file)', () => {
    const e = parseLogLine(`[${TS}] [SESSION-2] Completed [task-9] done\r`);
    assert.equal(e?.message, 'done');
    assert.equal(e?.taskId, 'task-9');
  });

  for (const line of [
    '',
    'free text written by hand',
    `[${TS}] [SESSION-1]`,
    `[${TS}] [SESSION-1] `,
    `[${TS}] [SESSION-1] NOPE something`,
    `[${TS}] [SESSION-1] error lower-case type`,
    `[${TS}] [SESSION-1] INITx glued`,
    `[${TS}] [SESSION-x] INIT bad session`,
    `[${TS}] [SESSION-] INIT no number`,
    `[${TS}] [SESSION-01] INIT leading zero`,
    `[${TS}] SESSION-1 INIT no brackets`,
    `[${TS}] [SESSION-1]  INIT two spaces`,
    `${TS} [SESSION-1] INIT no timestamp brackets`,
    `[${TS}][SESSION-1] INIT no space`,
    `  [${TS}] [SESSION-1] INIT indented`,
  ]) {
    it(`gives undefined for a line not in the grammar: ${JSON.stringify(line)}`, () => {
      assert.equal(parseLogLine(line), undefined);
    });
  }

  it("logTimestamp is ISO-8601 UTC with seconds, as in the protocols' examples", () => {
    assert.equal(logTimestamp(new Date('2025-07-01T10:00:05.789Z')), '2025-07-01T10:00:05Z');
    assert.match(logTimestamp(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });
});
