// The CLI on a terminal (a real pseudo-terminal): add's questions, and run's live table of the
// running tasks, redrawn in place and gone at the end. Few and robust: they assert what the
// terminal received, never how fast.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

import { makeRepo } from '../helpers/gitRepo';
import { agent, makeHarness, readTasks, taskById } from '../helpers/harness';
import { runInPty } from '../helpers/pty';
import { cli, progressEntries } from './util';

const SGR = /\x1b\[\d+(;\d+)*m/;

describe('on a terminal', function () {
  this.timeout(180_000);
  before(function () {
    // The pseudo-terminal is python's pty module (test/fixtures/tty/pty-run.py).
    if (spawnSync('python3', ['-c', 'import pty']).status !== 0) this.skip();
  });

  it('add asks for each field with its default, asks again when an answer does not pass, and adds the task', () => {
    const dir = makeRepo();
    cli(['init', '--no-gitignore'], { cwd: dir });
    cli(['add', 'Base', '--validate', 'true'], { cwd: dir });
    const r = runInPty(['add', 'Rate limiting'], {
      cwd: dir,
      steps: [
        { expect: 'Context \\(.*\\): ', send: '\r' },
        { expect: 'required', send: 'Redis-backed, 100 req/min per IP\r' },
        { expect: 'Priority \\(P0, P1 or P2\\) \\[P1\\]: ', send: 'P9\r' },
        { expect: 'expected P0, P1 or P2, got "P9"', send: 'p0\r' },
        { expect: 'Depends on \\(.*task-001.*\\): ', send: 'task-404\r' },
        { expect: 'no task "task-404"', send: 'task-001\r' },
        { expect: 'Files \\(.*\\): ', send: 'src/middleware/, src/app.ts\r' },
        { expect: 'Validation command \\(.*\\): ', send: 'npm test -- rate-limit\r' },
        { expect: 'Validation timeout in seconds \\[600\\]: ', send: '300\r' },
      ],
    });
    assert.equal(r.stepsLeft, 0, r.output);
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /task-002\r\n/);
    const t = taskById(dir, 'task-002');
    assert.equal(t.title, 'Rate limiting');
    assert.equal(t.context, 'Redis-backed, 100 req/min per IP');
    assert.equal(t.priority, 'P0');
    assert.deepEqual(t.depends_on, ['task-001']);
    assert.deepEqual(t.files_hint, ['src/middleware/', 'src/app.ts']);
    assert.deepEqual(t.validation, { command: 'npm test -- rate-limit', timeout_seconds: 300 });
    assert.equal(progressEntries(dir).filter((e) => e.taskId === 'task-002').length, 1, 'one INIT line');
  });

  it('Ctrl-C at a question cancels: exit 130, nothing added; an option skips the questions', () => {
    const dir = makeRepo();
    cli(['init', '--no-gitignore'], { cwd: dir });
    const cancelled = runInPty(['add', 'Half-typed'], { cwd: dir, steps: [{ expect: 'Context', send: '\x03' }] });
    assert.equal(cancelled.code, 130, cancelled.output);
    assert.match(cancelled.output, /cancelled; nothing was changed/);
    assert.equal(readTasks(dir).tasks.length, 0);
    const flags = runInPty(['add', 'Quick', '--validate', 'true'], { cwd: dir });
    assert.equal(flags.code, 0, flags.output);
    assert.doesNotMatch(flags.output, /Context/);
    assert.equal(readTasks(dir).tasks.length, 1);
  });

  it('run shows a table of the running tasks under the log, redrawn in place, cleared before the summary; NO_COLOR drops the colour only', () => {
    for (const env of [{}, { NO_COLOR: '1' }]) {
      const root = makeHarness({
        tasks: [
          { id: 'task-001', title: 'Add slugify' },
          { id: 'task-002', title: 'Add wordCount' },
        ],
      });
      const r = runInPty(['run', '--agent', agent('checkpoints.sh')], { cwd: root, env });
      assert.equal(r.code, 0, r.output);
      const text = r.output;
      // A table row: id, title, attempt, elapsed time (colour aside).
      assert.match(text.replace(new RegExp(SGR.source, 'g'), ''), /task-00[12] +Add (slugify|wordCount) +1\/3 +\d+:\d\d /);
      assert.match(text, /\x1b\[\d+A\r\x1b\[J/, 'the table is erased (cursor up, clear) to be drawn again');
      const summary = text.lastIndexOf('Summary');
      assert.ok(summary > 0, text);
      const lastErase = text.lastIndexOf('\x1b[J');
      assert.ok(lastErase < summary, 'the table is cleared before the summary');
      assert.doesNotMatch(text.slice(summary), /task-00\d +Add/, 'no table row after the summary');
      if ('NO_COLOR' in env) assert.doesNotMatch(text, SGR);
      else assert.match(text, SGR);
    }
  });
});
