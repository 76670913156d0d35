// The pieces of the CLI's terminal output, without a terminal: colour rules, the screen with a
// block redrawn under scrolling lines, -v's prefixed lines, the running table, log line colours.
import assert from 'node:assert/strict';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { launchpadCommand } from '../../../src/cli/invocation';
import { colours, colourWanted, stripAnsi } from '../../../src/cli/ui/colour';
import { paintLogLine } from '../../../src/cli/ui/logLineView';
import { duration, renderRunningTable } from '../../../src/cli/ui/runningTable';
import { Screen } from '../../../src/cli/ui/screen';
import { TaskOutputLines } from '../../../src/cli/ui/taskOutput';
import { CLI } from '../helpers/cli';
import { tempDir } from '../helpers/tmp';
import { sleep } from './util';

describe('cli/ui', () => {
  it('colour: on for a terminal; --no-color, NO_COLOR and TERM=dumb turn it off; FORCE_COLOR forces it (0 does not)', () => {
    assert.equal(colourWanted({}, true, false), true);
    assert.equal(colourWanted({}, false, false), false);
    assert.equal(colourWanted({}, true, true), false);
    assert.equal(colourWanted({ NO_COLOR: '1' }, true, false), false);
    assert.equal(colourWanted({ NO_COLOR: '' }, true, false), true, 'an empty NO_COLOR is unset');
    assert.equal(colourWanted({ TERM: 'dumb' }, true, false), false);
    assert.equal(colourWanted({ FORCE_COLOR: '1' }, false, false), true);
    assert.equal(colourWanted({ FORCE_COLOR: '1', NO_COLOR: '1' }, false, false), true);
    assert.equal(colourWanted({ FORCE_COLOR: '0' }, true, false), false);
    assert.equal(colourWanted({ FORCE_COLOR: '1' }, true, true), false, '--no-color beats everything');
    assert.equal(colours(false).red('x'), 'x');
    assert.equal(colours(true).red('x'), '\x1b[31mx\x1b[39m');
  });

  it('a log line: coloured by type and result, a retry labelled; without colour the file line plus the label', () => {
    const line = '[2025-07-01T10:00:12Z] [SESSION-1] DISPATCH [task-002] agent=agent_x worktree=harness-task-002';
    assert.equal(paintLogLine(line, colours(false), { attempt: { n: 2, of: 3 } }), `${line}  (attempt 2/3)`);
    assert.equal(paintLogLine(line, colours(false), { attempt: { n: 1, of: 3 } }), line, 'a first attempt is no retry');
    const painted = paintLogLine('[2025-07-01T10:00:12Z] [SESSION-1] VALIDATE [task-002] command="x" result=FAIL', colours(true));
    assert.match(painted, /result=\x1b\[31mFAIL\x1b\[39m/);
    assert.equal(stripAnsi(painted), '[2025-07-01T10:00:12Z] [SESSION-1] VALIDATE [task-002] command="x" result=FAIL');
    assert.equal(paintLogLine('not a log line', colours(true)), 'not a log line');
  });

  describe('Screen', () => {
    const make = (live: boolean) => {
      const out: string[] = [];
      const screen = new Screen({ write: (t) => out.push(t), live, columns: () => 20, throttleMs: 10 });
      return { out, screen };
    };

    it('without a terminal: lines as they come, no block, no escape codes', async () => {
      const { out, screen } = make(false);
      screen.setBlock(() => ['block']);
      screen.print(['a', 'b']);
      await sleep(30);
      screen.close();
      assert.equal(out.join(''), 'a\nb\n');
    });

    it('on a terminal: the block is erased before each line and drawn again under it, cut to the width, and cleared at the end', async () => {
      const { out, screen } = make(true);
      let rows = ['row one', 'a row far wider than twenty columns'];
      screen.setBlock(() => rows);
      await sleep(30);
      assert.equal(out.join(''), '\r\x1b[Jrow one\na row far wider tha\n');
      out.length = 0;
      screen.print(['a printed line wider than the terminal']);
      assert.equal(
        out.join(''),
        '\x1b[2A\r\x1b[Ja printed line wider than the terminal\nrow one\na row far wider tha\n',
        'lines above may wrap; the block may not',
      );
      out.length = 0;
      rows = ['just one'];
      screen.redraw();
      screen.redraw();
      await sleep(30);
      assert.equal(out.join(''), '\x1b[2A\r\x1b[Jjust one\n', 'two redraws within the throttle are one');
      out.length = 0;
      screen.close();
      screen.print(['after']);
      assert.equal(out.join(''), '\x1b[1A\r\x1b[Jafter\n');
    });
  });

  it('-v lines: whole lines per task and process, carriage returns resolved, blank lines dropped, cursor moves removed', () => {
    const got: string[] = [];
    const lines = new TaskOutputLines((id, ls) => got.push(...ls.map((l) => `${id} | ${l}`)), false);
    lines.push('task-009', 'agent', 'hello wo');
    lines.push('task-010', 'agent', 'other\r\n');
    lines.push('task-009', 'agent', 'rld\r\n\r\n   \n10%\r50%\r100%\n\x1b[2K\x1b[1Gdone \x1b[32mgreen\x1b[39m\n');
    lines.push('task-009', 'controller', '\r\n[launchpad] task-009 attempt 1: agent\r\n');
    lines.push('task-009', 'agent', 'no newline at the end');
    lines.flush();
    assert.deepEqual(got, [
      'task-010 | other',
      'task-009 | hello world',
      'task-009 | 100%',
      'task-009 | done green',
      'task-009 | [launchpad] task-009 attempt 1: agent',
      'task-009 | no newline at the end',
    ]);
    assert.ok(got.every((l) => !l.includes('\r')));
  });

  it('the running table: a row per task with attempt, time, what it does and the cost once known', () => {
    const now = 1_000_000;
    const lines = renderRunningTable(
      [
        {
          id: 'task-001',
          title: 'Add slugify()',
          attempt: 1,
          maxAttempts: 3,
          since: now - 42_000,
          phase: 'agent',
          checkpoint: '1/2 read the task',
        },
        {
          id: 'task-012',
          title: 'A title much longer than the thirty-two columns it may take',
          attempt: 2,
          maxAttempts: 3,
          since: now - 3_725_000,
          phase: 'validating',
          costUsd: 0.0421,
        },
      ],
      { completed: 4, failed: 1, since: now - 100_000 },
      now,
      colours(false),
    );
    assert.deepEqual(lines, [
      'running 2  4 completed this run  1 failed attempt  1:40',
      '  task-001  Add slugify()                      1/3   0:42  step 1/2 read the task',
      '  task-012  A title much longer than the th…   2/3  1:02:05  validating  $0.04',
    ]);
    assert.equal(duration(59_999), '0:59');
  });

  it('how to call launchpad again: "launchpad" when that name on PATH is this CLI, else node and its absolute path', () => {
    const bin = tempDir();
    assert.equal(launchpadCommand({ PATH: bin }, CLI), `node ${CLI}`);
    symlinkSync(CLI, join(bin, 'launchpad'));
    assert.equal(launchpadCommand({ PATH: `/nonexistent:${bin}` }, CLI), 'launchpad');
    const other = tempDir();
    writeFileSync(join(other, 'launchpad'), '#!/bin/sh\n');
    assert.equal(launchpadCommand({ PATH: other }, CLI), `node ${CLI}`, 'another program of that name is not this CLI');
    assert.equal(launchpadCommand({}, '/a dir/cli.js'), "node '/a dir/cli.js'");
  });
});
