// The Task Graph's model as plain data: one node per task, one edge per dependency, and the
// critical path rule (the longest chain of unfinished tasks, by count; ties to the file's order).
import assert from 'node:assert/strict';

import { StatePaths } from '../../../src/core/statePaths';
import { summarizeTasks } from '../../../src/core/statusReport';
import { parseTaskFile } from '../../../src/core/taskFile/parse';
import { countStates } from '../../../src/core/tasks/counts';
import type { TaskState } from '../../../src/core/tasks/dag';
import { criticalPath, taskGraph } from '../../../src/vscode/dag/graphModel';
import type { StateSnapshot } from '../../../src/vscode/model/stateModel';

type Spec = [id: string, dependsOn: string[], extra?: Record<string, unknown>];

/** A snapshot as the state model builds it: the core's parse and its states. */
function snapshot(specs: Spec[]): StateSnapshot {
  const tasks = specs.map(([id, depends_on, extra]) => ({
    id,
    title: `Task ${id}`,
    status: 'pending',
    depends_on,
    validation: { command: 'true' },
    ...extra,
  }));
  const parsed = parseTaskFile(JSON.stringify({ version: 3, tasks }));
  if (!parsed.ok) throw new Error(JSON.stringify(parsed));
  const entries = summarizeTasks(parsed.file).map((s, i) => ({ ...s, task: parsed.file.tasks[i]! }));
  return {
    paths: new StatePaths('/nowhere'),
    exists: true,
    file: parsed.file,
    tasks: entries,
    byId: new Map(entries.map((e) => [e.id, e])),
    worktrees: [],
    keptAttempts: [],
    withAttempts: new Set(),
    counts: countStates(entries.map((e) => e.state)),
  };
}

const WORDS = new Proxy({}, { get: (_t, state) => String(state) }) as Record<TaskState, string>;
const done = { status: 'completed', attempts: 1 };

describe('task graph model', () => {
  it('draws every task once and every dependency as one edge, a repeated one included once', () => {
    const g = taskGraph(
      snapshot([
        ['a', []],
        ['b', ['a', 'a']],
        ['c', ['a', 'b']],
      ]),
      WORDS,
    );
    assert.deepEqual(
      g.nodes.map((n) => [n.id, n.state]),
      [
        ['a', 'ready'],
        ['b', 'waiting'],
        ['c', 'waiting'],
      ],
    );
    assert.deepEqual(
      g.edges.map((e) => `${e.from}→${e.to}`),
      ['a→b', 'a→c', 'b→c'],
    );
    assert.deepEqual(g.critical, ['a', 'b', 'c']);
    assert.deepEqual(
      g.nodes.filter((n) => n.critical).map((n) => n.id),
      ['a', 'b', 'c'],
    );
  });

  it('counts only unfinished tasks: a completed start and a task failed for good are off the path', () => {
    const s = snapshot([
      ['a', [], done],
      ['b', ['a']],
      ['c', ['b']],
      ['x', ['a']],
      ['y', ['x']],
      ['z', ['y']],
      ['f', [], { status: 'failed', attempts: 3, max_attempts: 3, error_log: ['[TASK_FAILURE] no'] }],
    ]);
    assert.deepEqual(criticalPath(s), ['x', 'y', 'z']);
  });

  it('breaks a tie by the order of the file, at the start and at each step', () => {
    assert.deepEqual(
      criticalPath(
        snapshot([
          ['p', []],
          ['q', []],
          ['p2', ['p', 'q']],
          ['p3', ['p']],
        ]),
      ),
      ['p', 'p2'],
    );
  });

  it('has no path when no two unfinished tasks are chained', () => {
    assert.deepEqual(
      criticalPath(
        snapshot([
          ['a', []],
          ['b', []],
          ['c', ['a'], done],
        ]),
      ),
      [],
    );
  });

  it('names the problem when there is nothing to draw', () => {
    const s = snapshot([]);
    assert.equal(taskGraph({ ...s, exists: false }, WORDS).problem, 'This workspace has no harness-tasks.json yet.');
    assert.equal(
      taskGraph({ ...s, error: new Error('harness-tasks.json: tasks[0].id: required') }, WORDS).problem,
      'harness-tasks.json: tasks[0].id: required',
    );
  });
});
