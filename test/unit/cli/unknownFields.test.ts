// A field of harness-tasks.json that Launchpad does not read is kept, but named on every status
// and run, with the field it most resembles: a mistyped "depend_on" would otherwise run a task
// before its dependency without a word.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { unknownFieldMessage, unknownFieldsInText } from '../../../src/core/taskFile/unknownFields';
import { makeRepo } from '../helpers/gitRepo';
import { cli, rawTask, stateRoot } from './util';

describe('unknown fields of the task file', () => {
  const file = {
    version: 3,
    session_config: { max_paralel_agents: 2 },
    tasks: [rawTask('task-001'), rawTask('task-002', { depend_on: ['task-001'], x_owner: 'build-bot' })],
  };

  it('status names each one with its line and the likely field; the file is not changed', () => {
    const dir = stateRoot(file);
    const before = readFileSync(join(dir, 'harness-tasks.json'), 'utf8');
    const r = cli(['status'], { cwd: dir });
    const path = join(dir, 'harness-tasks.json');
    assert.deepEqual(r.stderr.split('\n').filter(Boolean), [
      `warning: ${path}:4: session_config.max_paralel_agents is not a field Launchpad reads (did you mean max_parallel_agents?); it is kept as it is`,
      `warning: ${path}:22: tasks[1].depend_on is not a field Launchpad reads (did you mean depends_on?); it is kept as it is`,
      `warning: ${path}:25: tasks[1].x_owner is not a field Launchpad reads; it is kept as it is`,
    ]);
    assert.equal(readFileSync(join(dir, 'harness-tasks.json'), 'utf8'), before);
    assert.equal(cli(['status', '--json'], { cwd: dir }).stderr, '', '--json output stays clean');
  });

  it('run says it before it starts anything (here, before it asks to approve the commands)', () => {
    const dir = stateRoot(file, makeRepo());
    const r = cli(['run', '--agent', 'true'], { cwd: dir, env: { ...process.env, LAUNCHPAD_TRUST: '' } }, 2);
    assert.match(r.stderr, /would run these commands from the repository's files/);
    assert.match(r.stderr, /tasks\[1\]\.depend_on is not a field Launchpad reads \(did you mean depends_on\?\)/);
  });

  it('gives the editor the place of each key in the text with the same words; none for a file that is not valid', () => {
    const text = JSON.stringify(file, null, 2);
    const found = unknownFieldsInText(text);
    assert.deepEqual(
      found.map((u) => [text.slice(u.start, u.end), unknownFieldMessage(u)]),
      [
        [
          '"max_paralel_agents"',
          'session_config.max_paralel_agents is not a field Launchpad reads (did you mean max_parallel_agents?); it is kept as it is',
        ],
        ['"depend_on"', 'tasks[1].depend_on is not a field Launchpad reads (did you mean depends_on?); it is kept as it is'],
        ['"x_owner"', 'tasks[1].x_owner is not a field Launchpad reads; it is kept as it is'],
      ],
    );
    assert.deepEqual(unknownFieldsInText(text.replace('"version": 3', '"version": "three"')), []);
  });
});
