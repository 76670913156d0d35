import assert from 'node:assert/strict';

import {
  type JsonPath,
  lineColumn,
  locateJsonPath,
  locateJsonSyntaxError,
  pathAtOffset,
  walkJson,
} from '../../../../src/core/taskFile/jsonSyntax';
import {
  formatPath,
  MAX_NESTING,
  MAX_TASK_FILE_BYTES,
  parseTaskFile,
  parseTaskFileBytes,
  serializeTaskFile,
  TaskFileError,
} from '../../../../src/core/taskFile/parse';
import { MAX_TIMEOUT_SECONDS, MAX_TITLE_CHARS, type TaskFile } from '../../../../src/core/taskFile/schema';
import { decodeUtf8, firstInvalidUtf8 } from '../../../../src/core/taskFile/utf8';
import { fixtureText, rng } from '../fixtures';

function ok(text: string): TaskFile {
  const r = parseTaskFile(text);
  if (!r.ok) assert.fail(`expected the file to parse, got: ${r.error.message}`);
  return r.file;
}

function err(text: string, label?: string): TaskFileError {
  const r = label === undefined ? parseTaskFile(text) : parseTaskFile(text, label);
  if (r.ok) assert.fail(`expected a parse error for ${text.slice(0, 80)}`);
  assert.ok(r.error instanceof TaskFileError);
  return r.error;
}

const minimalTask = { id: 't1', title: 'x', status: 'pending' };
const withTasks = (...tasks: unknown[]) => JSON.stringify({ tasks });

describe('core/jsonSyntax locateJsonSyntaxError', () => {
  const cases: Array<[string, number, number, RegExp]> = [
    ['{\n  "a": 1,\n}', 3, 1, /trailing comma before '}'/],
    ['{"a": [1, 2,]}', 1, 13, /trailing comma before ']'/],
    ['{"a" 1}', 1, 6, /expected ':'/],
    ['{\n"a": 1\n"b": 2}', 3, 1, /expected ','.*missing comma/],
    ['[1,2', 1, 5, /ends inside an array.*truncated/],
    ['{"a": {"b": 1}', 1, 15, /ends inside an object/],
    ['{"a": "x', 1, 7, /never closed/],
    ['{"a": "x\ny"}', 1, 9, /control character/],
    ['{"a": "\\q"}', 1, 8, /bad escape/],
    ['{"a": "\\u12G4"}', 1, 8, /\\u escape/],
    ['{} x', 1, 4, /after the end/],
    ["{'a': 1}", 1, 2, /single quotes/],
    ['{"a": NaN}', 1, 7, /NaN is not a JSON value/],
    ['{"a": 1} // note', 1, 10, /comments/],
    ['{\n  /* c */ "a": 1}', 2, 3, /comments/],
    ['[01]', 1, 3, /expected ','/],
    ['[-]', 1, 2, /malformed number/],
    ['[tru]', 1, 2, /where a value was expected/],
    ['', 1, 1, /no JSON value/],
    ['{,}', 1, 2, /quoted" key/],
    ['[\r\n1,\r\n]', 3, 1, /trailing comma/],
  ];
  for (const [text, line, column, message] of cases) {
    it(`${JSON.stringify(text)} → line ${line}, column ${column}`, () => {
      assert.throws(() => JSON.parse(text));
      const where = locateJsonSyntaxError(text);
      assert.ok(where, 'an error position');
      assert.equal(where.line, line);
      assert.equal(where.column, column);
      assert.match(where.message, message);
    });
  }

  it('says nothing for valid JSON', () => {
    for (const text of [
      '{}',
      '[]',
      ' 1 ',
      '"s"',
      'null',
      '{"a":[1,-2.5e+3,true,false,null,"\\u00e9\\n\\"",{}]}',
      fixtureText('v3-example-tasks.json'),
    ]) {
      assert.equal(locateJsonSyntaxError(text), undefined, text);
    }
  });

  it('agrees with JSON.parse on hundreds of mutated task files', () => {
    const base = fixtureText('v3-example-tasks.json');
    const rand = rng(1234);
    const junk = ['', ',', '}', ']', '{', '[', '"', ':', '\n', 'x', '0', '-', '.', 'e', '\\', "'", '/'];
    for (let k = 0; k < 600; k++) {
      const at = rand(base.length);
      const kind = rand(3);
      const text =
        kind === 0
          ? base.slice(0, at) // truncated
          : kind === 1
            ? base.slice(0, at) + junk[rand(junk.length)] + base.slice(at) // inserted
            : base.slice(0, at) + base.slice(at + 1 + rand(3)); // deleted
      let valid = true;
      try {
        JSON.parse(text);
      } catch {
        valid = false;
      }
      const where = locateJsonSyntaxError(text);
      assert.equal(where === undefined, valid, `mutation ${k}: ${JSON.stringify(text.slice(Math.max(0, at - 20), at + 20))}`);
      if (where) {
        assert.ok(where.offset >= 0 && where.offset <= text.length);
        const before = text.slice(0, where.offset).split('\n');
        assert.equal(where.line, before.length);
        assert.equal(where.column, before.at(-1)!.length + 1);
      }
    }
  });

  it('survives deep nesting without overflowing the stack', () => {
    const deep = '['.repeat(200_000) + ']'.repeat(199_999);
    const where = locateJsonSyntaxError(deep);
    assert.ok(where);
    assert.match(where.message, /truncated/);
  });
});

describe('core/jsonSyntax positions of valid JSON', () => {
  const text =
    '{\n  "tasks": [\n    {"id": "a", "title": "x"},\n    {"id": "b", "n": [1, {"k": null}], "e": {}, "l": []}\n  ],\n  "z": true\n}';

  it('walkJson visits every key and value with its path, in document order', () => {
    const seen: string[] = [];
    walkJson(
      text,
      (path, start, end, isKey) =>
        void seen.push(`${isKey ? 'key ' : ''}${formatPath(path)}=${end < 0 ? text[start] : text.slice(start, end)}`),
    );
    assert.deepEqual(seen, [
      '(root)={',
      'key tasks="tasks"',
      'tasks=[',
      'tasks[0]={',
      'key tasks[0].id="id"',
      'tasks[0].id="a"',
      'key tasks[0].title="title"',
      'tasks[0].title="x"',
      'tasks[1]={',
      'key tasks[1].id="id"',
      'tasks[1].id="b"',
      'key tasks[1].n="n"',
      'tasks[1].n=[',
      'tasks[1].n[0]=1',
      'tasks[1].n[1]={',
      'key tasks[1].n[1].k="k"',
      'tasks[1].n[1].k=null',
      'key tasks[1].e="e"',
      'tasks[1].e={',
      'key tasks[1].l="l"',
      'tasks[1].l=[',
      'key z="z"',
      'z=true',
    ]);
  });

  it('locateJsonPath finds a value, or the deepest part of a path that exists', () => {
    assert.deepEqual(locateJsonPath(text, ['tasks', 1, 'n', 1, 'k']), { line: 4, column: 32 });
    assert.deepEqual(locateJsonPath(text, ['tasks', 0, 'title']), { line: 3, column: 26 });
    assert.deepEqual(locateJsonPath(text, ['tasks', 0, 'status']), { line: 3, column: 5 }, 'a missing field: its object');
    assert.deepEqual(locateJsonPath(text, []), { line: 1, column: 1 });
  });

  it('pathAtOffset names the value (or key) holding an offset', () => {
    assert.deepEqual(pathAtOffset(text, text.indexOf('"x"') + 1), ['tasks', 0, 'title']);
    assert.deepEqual(pathAtOffset(text, text.indexOf('"title"') + 2), ['tasks', 0, 'title']);
    assert.equal(pathAtOffset(text, 0), undefined, 'between values');
  });

  it('decodes escaped keys, and stays iterative on deep nesting', () => {
    const keys: JsonPath[] = [];
    walkJson('{"\\u005f_proto__": 1}', (path, _s, _e, isKey) => void (isKey && keys.push([...path])));
    assert.deepEqual(keys, [['__proto__']]);
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    let depth = 0;
    walkJson(deep, (path) => void (depth = Math.max(depth, path.length)));
    assert.equal(depth, 99_999);
  });

  it('lineColumn counts from 1, CRLF as one line break', () => {
    assert.deepEqual(lineColumn('ab\r\ncd', 4), { line: 2, column: 1 });
    assert.deepEqual(lineColumn('abc', 2), { line: 1, column: 3 });
  });
});

describe('core/taskFile/utf8', () => {
  it('finds the first invalid byte: a stray continuation, a lead without its tail, overlongs, surrogates, past U+10FFFF', () => {
    const cases: Array<[number[], number]> = [
      [[0x61, 0x80], 1],
      [[0x61, 0xe9, 0x62], 1], // Latin-1 é
      [[0xc3, 0xa9, 0xe9], 2],
      [[0xe2, 0x82], 0], // truncated at the end
      [[0xc0, 0xaf], 0], // overlong "/"
      [[0xe0, 0x80, 0xaf], 0], // overlong
      [[0xed, 0xa0, 0x80], 0], // a surrogate
      [[0xf4, 0x90, 0x80, 0x80], 0], // above U+10FFFF
      [[0xf5, 0x80, 0x80, 0x80], 0],
      [[0xf0, 0x9f, 0x98, 0x80, 0xff], 4],
      [[0x7b, 0x7d], 2],
    ];
    for (const [bytes, at] of cases) assert.equal(firstInvalidUtf8(Uint8Array.from(bytes)), at, bytes.map((b) => b.toString(16)).join(' '));
  });

  it('agrees with a strict TextDecoder on thousands of random byte strings', () => {
    const rand = rng(99);
    const strict = new TextDecoder('utf-8', { fatal: true });
    for (let k = 0; k < 5000; k++) {
      const bytes = Uint8Array.from({ length: 1 + rand(12) }, () =>
        rand(3) === 0 ? rand(256) : [0x41, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0xed, 0xbf][rand(12)]!,
      );
      let valid = true;
      try {
        strict.decode(bytes);
      } catch {
        valid = false;
      }
      const result = decodeUtf8(bytes);
      assert.equal(result.ok, valid);
      if (!result.ok) {
        assert.doesNotThrow(() => strict.decode(bytes.subarray(0, result.offset)), 'the bytes before the offset are valid');
        assert.throws(() => strict.decode(bytes.subarray(0, firstInvalidUtf8(bytes) + 4)), 'and the sequence at the offset is not');
      }
    }
  });
});

describe('core/taskFile parseTaskFile', () => {
  describe('syntax errors', () => {
    it('name the file, the line and the column', () => {
      const e = err('{\n  "tasks": [\n    {"id": "t1",}\n  ]\n}');
      assert.equal(e.field, '');
      assert.equal(e.message, "harness-tasks.json: invalid JSON at line 3, column 17: trailing comma before '}'");
    });

    it('use the label given for the file', () => {
      assert.match(err('{', 'harness-tasks.json.bak').message, /^harness-tasks\.json\.bak: invalid JSON at line 1, column 2/);
    });

    it('refuse an empty file, a BOM, UTF-16 and binary content plainly', () => {
      assert.match(err('').message, /file is empty/);
      assert.match(err('  \n ').message, /file is empty/);
      assert.match(err('\ufeff{"tasks":[]}').message, /byte-order mark/);
      assert.match(err('{\u0000"\u0000t').message, /not UTF-8/);
      assert.match(err('\ufffd\ufffd{').message, /not UTF-8/);
    });

    it('refuse a file over the size limit without parsing it', () => {
      const big = '{"tasks":[],"pad":"' + 'x'.repeat(MAX_TASK_FILE_BYTES) + '"}';
      assert.match(err(big).message, /MiB/);
    });
  });

  describe('schema errors: "file: json.path: problem"', () => {
    const cases: Array<[string, unknown, string, RegExp]> = [
      ['a root that is not an object', [], '(root)', /expected object, got array/],
      ['missing tasks', {}, 'tasks', /required field is missing \(expected array\)/],
      ['tasks not an array', { tasks: 'x' }, 'tasks', /expected array, got string "x"/],
      [
        'an unknown status',
        { tasks: [{ ...minimalTask, status: 'done' }] },
        'tasks[0].status',
        /expected one of "pending", "in_progress", "completed", "failed", "awaiting_answer", "awaiting_review", got "done"/,
      ],
      ['a missing status', { tasks: [{ id: 't1', title: 'x' }] }, 'tasks[0].status', /required field is missing/],
      ['a missing title', { tasks: [{ id: 't1', status: 'pending' }] }, 'tasks[0].title', /required field is missing \(expected string\)/],
      ['an empty title', { tasks: [{ ...minimalTask, title: '' }] }, 'tasks[0].title', /must not be empty/],
      ['an unknown priority', { tasks: [{ ...minimalTask, priority: 'P9' }] }, 'tasks[0].priority', /"P0", "P1", "P2", got "P9"/],
      ['fractional attempts', { tasks: [{ ...minimalTask, attempts: 1.5 }] }, 'tasks[0].attempts', /whole number, got number 1.5/],
      ['negative attempts', { tasks: [{ ...minimalTask, attempts: -1 }] }, 'tasks[0].attempts', /at least 0, got -1/],
      ['max_attempts 0', { tasks: [{ ...minimalTask, max_attempts: 0 }] }, 'tasks[0].max_attempts', /at least 1, got 0/],
      [
        'depends_on not a list',
        { tasks: [{ ...minimalTask, depends_on: 'task-001' }] },
        'tasks[0].depends_on',
        /expected array, got string "task-001"/,
      ],
      [
        'a number in depends_on',
        { tasks: [{ ...minimalTask, depends_on: ['a', 7] }] },
        'tasks[0].depends_on[1]',
        /expected string, got number/,
      ],
      [
        'timeout 0',
        { tasks: [{ ...minimalTask, validation: { command: 'x', timeout_seconds: 0 } }] },
        'tasks[0].validation.timeout_seconds',
        /greater than 0, got 0/,
      ],
      ['version 4', { version: 4, tasks: [] }, 'version', /expected 2 or 3, got 4/],
      ['a null session_config', { tasks: [], session_config: null }, 'session_config', /expected object, got null/],
      [
        'max_parallel_agents 0',
        { tasks: [], session_config: { max_parallel_agents: 0 } },
        'session_config.max_parallel_agents',
        /at least 1/,
      ],
      [
        'a bad concurrency_mode',
        { tasks: [], session_config: { concurrency_mode: 'wild' } },
        'session_config.concurrency_mode',
        /"exclusive", "concurrent"/,
      ],
      [
        'a checkpoint without step',
        { tasks: [{ ...minimalTask, checkpoints: [{ total: 2, description: 'd', timestamp: 't' }] }] },
        'tasks[0].checkpoints[0].step',
        /required field is missing/,
      ],
    ];
    for (const [name, doc, path, problem] of cases) {
      it(name, () => {
        const e = err(JSON.stringify(doc));
        assert.equal(e.field, path);
        assert.equal(e.file, 'harness-tasks.json');
        const first = e.message.split('\n')[0]!;
        assert.ok(first.startsWith(`harness-tasks.json: ${path}: `), first);
        assert.match(first, problem);
      });
    }

    it('an invalid id names the task index and the bad id', () => {
      const e = err(withTasks({ ...minimalTask, id: 'ok-1' }, { ...minimalTask, id: 'task $(rm -rf ~)' }));
      assert.equal(e.field, 'tasks[1].id');
      assert.match(e.message, /^harness-tasks\.json: tasks\[1\]\.id: invalid task id: .*\(got "task \$\(rm -rf ~\)"\)$/);
    });

    for (const bad of ['a..b', 'x.lock', 'trailing.', '-lead', 'a'.repeat(65)]) {
      it(`the git-ref exclusions are schema errors too (${bad.slice(0, 12)})`, () => {
        assert.equal(err(withTasks({ ...minimalTask, id: bad })).field, 'tasks[0].id');
      });
    }

    it('duplicate ids name both indexes', () => {
      const e = err(withTasks({ ...minimalTask, id: 'task-001' }, { ...minimalTask, id: 'task-002' }, { ...minimalTask, id: 'task-001' }));
      assert.equal(e.field, 'tasks[2].id');
      assert.equal(e.message, 'harness-tasks.json: tasks[2].id: duplicate id "task-001" (also tasks[0].id)');
    });

    it('lists up to five problems, then a count', () => {
      const e = err(withTasks(1, 2, 3, 4, 5, 6, 7));
      assert.equal(e.problems.length, 6);
      assert.equal(e.problems[5], '… and 2 more problem(s)');
      assert.equal(e.message.split('\n').length, 6);
      assert.ok(
        e.message
          .split('\n')
          .slice(0, 5)
          .every((l, i) => l === `harness-tasks.json: tasks[${i}]: expected object, got number`),
      );
    });
  });

  describe('the two protocol shapes', () => {
    it('reads the version 3 example with every field', () => {
      const f = ok(fixtureText('v3-example-tasks.json'));
      assert.equal(f.version, 3);
      assert.equal(f.created, '2025-07-01T10:00:00Z');
      assert.deepEqual(f.session_config, {
        max_tasks_per_session: 20,
        max_sessions: 50,
        max_parallel_agents: 3,
        agent_timeout_seconds: 3600,
        cleanup_timeout_seconds: 300,
        health_check_timeout_seconds: 600,
      });
      assert.deepEqual(
        f.tasks.map((t) => [t.id, t.status, t.priority]),
        [
          ['task-001', 'completed', 'P0'],
          ['task-002', 'failed', 'P1'],
          ['task-003', 'pending', 'P1'],
        ],
      );
      const t2 = f.tasks[1]!;
      assert.deepEqual(t2.files_hint, ['src/middleware/rate-limit.ts']);
      assert.deepEqual(t2.validation, { command: 'npm test -- --testPathPattern=rate-limit', timeout_seconds: 120 });
      assert.deepEqual(t2.on_failure, { cleanup: 'docker compose down redis' });
      assert.deepEqual(t2.error_log, ['[TEST_FAIL] Rate limit middleware test: expected 429 got 200']);
      assert.equal(t2.agent_id, null);
      assert.equal(t2.worktree_branch, null);
      assert.deepEqual(f.tasks[2]!.depends_on, ['task-001']);
      assert.equal(f.tasks[0]!.completed_at, '2025-07-01T10:08:06Z');
      assert.equal(f.session_count, 1);
      assert.equal(f.last_session, '2025-07-01T10:12:03Z');
    });

    it('reads the version 2 example with its own fields', () => {
      const f = ok(fixtureText('v2-example-tasks.json'));
      assert.equal(f.version, 2);
      assert.equal(f.session_config.concurrency_mode, 'exclusive');
      assert.equal(f.session_config.max_parallel_agents, 3, 'default filled in');
      assert.equal(f.tasks[0]!.started_at_commit, 'def5678');
      assert.deepEqual(f.tasks[0]!.checkpoints, []);
      assert.deepEqual(f.tasks[1]!.error_log, ['[TASK_EXEC] Redis connection refused']);
    });

    it('reads version 2 concurrent-mode claims and checkpoints', () => {
      const doc = JSON.parse(fixtureText('v2-example-tasks.json'));
      doc.session_config.concurrency_mode = 'concurrent';
      Object.assign(doc.tasks[2], {
        status: 'in_progress',
        claimed_by: 'worker-7',
        lease_expires_at: '2025-07-01T11:00:00Z',
        checkpoints: [{ step: 2, total: 4, description: 'auth routes created, tests pending', timestamp: '2025-07-01T10:05:00Z' }],
      });
      const f = ok(JSON.stringify(doc));
      assert.equal(f.session_config.concurrency_mode, 'concurrent');
      assert.equal(f.tasks[2]!.claimed_by, 'worker-7');
      assert.equal(f.tasks[2]!.lease_expires_at, '2025-07-01T11:00:00Z');
      assert.deepEqual(f.tasks[2]!.checkpoints, doc.tasks[2].checkpoints);
    });
  });

  describe('defaults', () => {
    it('fill every absent field', () => {
      const f = ok(withTasks(minimalTask));
      const t = f.tasks[0]!;
      assert.equal(t.priority, 'P1');
      assert.deepEqual(t.depends_on, []);
      assert.equal(t.attempts, 0);
      assert.equal(t.max_attempts, 3);
      assert.deepEqual(t.error_log, []);
      assert.deepEqual(t.files_hint, []);
      assert.equal(f.session_config.max_parallel_agents, 3);
      assert.equal(f.session_config.max_tasks_per_session, 20);
      assert.equal(f.session_config.max_sessions, 50);
      assert.equal(f.session_count, 0);
    });

    it('keep what is given and fill only the rest', () => {
      const f = ok(JSON.stringify({ tasks: [{ ...minimalTask, priority: 'P0', max_attempts: 5 }], session_config: { max_sessions: 7 } }));
      assert.equal(f.tasks[0]!.priority, 'P0');
      assert.equal(f.tasks[0]!.max_attempts, 5);
      assert.equal(f.session_config.max_sessions, 7);
      assert.equal(f.session_config.max_parallel_agents, 3);
      assert.equal(f.session_config.max_tasks_per_session, 20);
    });

    it('accept nulls where the examples write null', () => {
      const f = ok(withTasks({ ...minimalTask, context: null, validation: null, on_failure: null, agent_id: null, completed_at: null }));
      assert.equal(f.tasks[0]!.validation, null);
    });
  });

  describe('unknown fields', () => {
    it('a field named __proto__ (which a copy would silently drop) is refused, naming where it is', () => {
      for (const [text, where] of [
        ['{"tasks":[],"__proto__":{"x":1}}', '__proto__'],
        ['{"tasks":[{"id":"a","title":"t","status":"pending","__proto__":1}]}', 'tasks[0].__proto__'],
      ] as const) {
        const r = parseTaskFile(text);
        assert.ok(!r.ok, text);
        assert.equal(r.error.field, where);
        assert.match(r.error.message, /the field name "__proto__" cannot be kept/);
      }
      assert.ok(parseTaskFile('{"tasks":[],"note":"__proto__"}').ok, 'the word as a value is fine');
    });

    const doc = {
      version: 3,
      x_root: { nested: [1, { deep: null }], s: 'é\n' },
      session_config: { max_parallel_agents: 2, x_config: [true] },
      tasks: [
        {
          ...minimalTask,
          x_task: { a: 1 },
          validation: { command: 'npm test', timeout_seconds: 5, x_validation: 'v' },
          on_failure: { cleanup: null, x_on_failure: 2 },
          checkpoints: [{ step: 1, total: 2, description: 'd', timestamp: 't', x_checkpoint: 'c' }],
        },
      ],
      session_count: 4,
      x_tail: 0,
    };

    it('are kept through parse → serialize at every level', () => {
      const out = JSON.parse(serializeTaskFile(ok(JSON.stringify(doc))));
      assert.deepEqual(out.x_root, doc.x_root);
      assert.equal(out.x_tail, 0);
      assert.deepEqual(out.session_config.x_config, [true]);
      assert.deepEqual(out.tasks[0].x_task, { a: 1 });
      assert.equal(out.tasks[0].validation.x_validation, 'v');
      assert.equal(out.tasks[0].on_failure.x_on_failure, 2);
      assert.equal(out.tasks[0].checkpoints[0].x_checkpoint, 'c');
    });

    it('survive an edit of the parsed file, and serialize → parse is stable', () => {
      const f = ok(JSON.stringify(doc));
      f.tasks[0]!.status = 'completed';
      f.session_count++;
      const once = serializeTaskFile(f);
      const twice = serializeTaskFile(ok(once));
      assert.equal(twice, once);
      const out = JSON.parse(once);
      assert.equal(out.tasks[0].status, 'completed');
      assert.equal(out.session_count, 5);
      assert.deepEqual(out.tasks[0].x_task, { a: 1 });
    });

    it('the examples survive a round trip with nothing dropped', () => {
      for (const name of ['v3-example-tasks.json', 'v2-example-tasks.json']) {
        const original = JSON.parse(fixtureText(name));
        const out = JSON.parse(serializeTaskFile(ok(fixtureText(name))));
        // Every original field is still there with its value (defaults may be added).
        const check = (a: unknown, b: unknown, path: string): void => {
          if (a !== null && typeof a === 'object') {
            assert.ok(b !== null && typeof b === 'object', path);
            for (const [k, v] of Object.entries(a)) check(v, (b as Record<string, unknown>)[k], `${path}.${k}`);
          } else {
            assert.equal(b, a, path);
          }
        };
        check(original, out, name);
      }
    });
  });

  describe('bytes from disk (parseTaskFileBytes)', () => {
    const good = withTasks({ ...minimalTask, title: 'café ☕ 😀' });
    const bytesOf = (text: string, replace?: [string, number[]]) => {
      const buf = Buffer.from(text, 'utf8');
      if (!replace) return buf;
      const at = buf.indexOf(replace[0]);
      return Buffer.concat([buf.subarray(0, at), Buffer.from(replace[1]), buf.subarray(at + Buffer.byteLength(replace[0]))]);
    };

    it('reads valid UTF-8, multi-byte characters included', () => {
      const r = parseTaskFileBytes(bytesOf(good));
      assert.ok(r.ok);
      assert.equal(r.file.tasks[0]!.title, 'café ☕ 😀');
    });

    it('refuses a byte that is not UTF-8, naming the field, the line, the column and the byte offset', () => {
      const text = '{\n  "tasks": [\n    {"id": "t1", "status": "pending", "title": "caf\u00e9"}\n  ]\n}';
      const r = parseTaskFileBytes(bytesOf(text, ['é', [0xe9]]));
      assert.ok(!r.ok);
      assert.equal(r.error.field, 'tasks[0].title');
      assert.deepEqual(r.error.position, { line: 3, column: 52 });
      assert.equal(
        r.error.message,
        'harness-tasks.json: tasks[0].title: byte 0xE9 at line 3, column 52 (byte offset 66) is not UTF-8 (Latin-1 or Windows-1252 text?); ' +
          'save the file as UTF-8 (read leniently, the byte would become U+FFFD on the next write)',
      );
    });

    it('counts the column in characters after multi-byte ones, and names a key too', () => {
      const r = parseTaskFileBytes(bytesOf('{"tasks": [], "é€x": 1}', ['x', [0xff]]));
      assert.ok(!r.ok);
      assert.equal(r.error.field, 'é€\ufffd');
      assert.deepEqual(r.error.position, { line: 1, column: 18 });
      assert.match(r.error.message, /byte offset 20\)/);
    });

    it('refuses a bad byte outside any string without a field', () => {
      const r = parseTaskFileBytes(Buffer.concat([Buffer.from('{"tasks": []} '), Buffer.from([0xa0])]));
      assert.ok(!r.ok);
      assert.equal(r.error.field, '');
      assert.match(r.error.message, /^harness-tasks\.json: byte 0xA0 at line 1, column 15 \(byte offset 14\) is not UTF-8/);
    });

    it('refuses a BOM, UTF-16 and binary content plainly, as the text parser does', () => {
      assert.match((parseTaskFileBytes(Buffer.from('\ufeff{"tasks":[]}')) as { error: Error }).error.message, /byte-order mark/);
      assert.match(
        (parseTaskFileBytes(Buffer.from('\ufeff{"tasks":[]}', 'utf16le')) as { error: Error }).error.message,
        /not UTF-8 text \(UTF-16/,
      );
      assert.match((parseTaskFileBytes(Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff])) as { error: Error }).error.message, /not UTF-8 text/);
      assert.match((parseTaskFileBytes(Buffer.from([0x7b, 0xff, 0x00, 0x7d])) as { error: Error }).error.message, /not UTF-8 text/);
    });
  });

  describe('what a write would lose or could not write back', () => {
    for (const spelling of ['\\u005f_proto__', '__proto\\u005f_', '\\u005F\\u005Fproto\\u005F\\u005F', '__pr\\u006fto__']) {
      it(`a key spelled "${spelling}" is __proto__ and is refused`, () => {
        const text = `{"tasks":[{"id":"a","title":"t","status":"pending","x":{"${spelling}":{"y":1}}}]}`;
        assert.equal(
          Object.keys((JSON.parse(text) as { tasks: Array<{ x: object }> }).tasks[0]!.x)[0],
          '__proto__',
          'JSON.parse decodes it',
        );
        const e = err(text);
        assert.equal(e.field, 'tasks[0].x.__proto__');
        assert.match(e.message, /the field name "__proto__" cannot be kept/);
        assert.deepEqual(e.position, { line: 1, column: text.indexOf('{"y"') + 1 });
      });
    }

    it(`nesting: ${MAX_NESTING} levels load, one more is refused with its path`, () => {
      const nest = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
      // The root object is level 1, so an unknown field's value may nest MAX_NESTING - 1 deep.
      ok(`{"tasks":[],"x":${nest(MAX_NESTING - 1)}}`);
      const e = err(`{"tasks":[],"x":${nest(MAX_NESTING)}}`);
      assert.equal(e.field, ['x', ...Array(MAX_NESTING - 1).fill('a')].join('.'));
      assert.match(e.message, /nested deeper than 64 levels/);
      assert.equal(e.position?.line, 1);
    });

    it('5,000 levels in an unknown field are refused, not a RangeError', () => {
      const e = err(`{"tasks":[],"x_deep":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`);
      assert.match(e.field, /^x_deep(\.a){63}$/);
      const arrays = err(`{"tasks":[{"id":"a","title":"t","status":"pending","x":${'['.repeat(5000)}${']'.repeat(5000)}}]}`);
      assert.match(arrays.field, /^tasks\[0\]\.x(\[0\]){61}$/);
    });

    it('a schema error still comes first when a known field is nested wrongly', () => {
      const e = err(`{"tasks":[${'['.repeat(100)}${']'.repeat(100)}]}`);
      assert.equal(e.field, 'tasks[0]');
      assert.match(e.message, /expected object, got array/);
    });
  });

  describe('limits', () => {
    it(`a title of ${MAX_TITLE_CHARS} characters loads; one more is refused with its length`, () => {
      ok(withTasks({ ...minimalTask, title: 'x'.repeat(MAX_TITLE_CHARS) }));
      const e = err(withTasks({ ...minimalTask, title: 'x'.repeat(MAX_TITLE_CHARS + 1) }));
      assert.equal(
        e.message,
        `harness-tasks.json: tasks[0].title: must be at most ${MAX_TITLE_CHARS} characters long, got ${MAX_TITLE_CHARS + 1} (in t1)`,
      );
    });

    it('timeouts: 7 days load; more is refused, for the validation and every session timeout', () => {
      ok(
        JSON.stringify({
          tasks: [{ ...minimalTask, validation: { command: 'x', timeout_seconds: MAX_TIMEOUT_SECONDS } }],
          session_config: { agent_timeout_seconds: MAX_TIMEOUT_SECONDS },
        }),
      );
      assert.equal(
        err(withTasks({ ...minimalTask, validation: { command: 'x', timeout_seconds: 2_147_484 } })).message,
        'harness-tasks.json: tasks[0].validation.timeout_seconds: must be at most 604800, got 2147484 (in t1)',
      );
      for (const key of ['agent_timeout_seconds', 'cleanup_timeout_seconds', 'health_check_timeout_seconds']) {
        assert.equal(err(JSON.stringify({ tasks: [], session_config: { [key]: MAX_TIMEOUT_SECONDS + 1 } })).field, `session_config.${key}`);
      }
    });

    it('last_task_number is a whole number of at least 0', () => {
      assert.equal(ok('{"tasks":[],"last_task_number":7}').last_task_number, 7);
      assert.equal(err('{"tasks":[],"last_task_number":-1}').field, 'last_task_number');
    });
  });

  describe("positions of schema errors (for run's message)", () => {
    it("the first problem's line and column, and `where` combining them with the field", () => {
      const text =
        '{\n  "tasks": [\n    {\n      "id": "t1",\n      "title": "x",\n      "status": "pending",\n      "priority": "high"\n    }\n  ]\n}';
      const e = err(text);
      assert.deepEqual(e.position, { line: 7, column: 19 });
      assert.equal(e.where, 'tasks[0].priority at line 7, column 19');
      assert.equal(err('{"tasks": [}').where, 'line 1, column 12');
    });
  });

  it('serializes with two-space indent and a final newline', () => {
    const text = serializeTaskFile(ok(withTasks(minimalTask)));
    assert.ok(text.endsWith('}\n'));
    assert.match(text, /^\{\n {2}"version": 3,\n/);
  });

  it('formatPath writes JSON paths', () => {
    assert.equal(formatPath([]), '(root)');
    assert.equal(formatPath(['tasks', 3, 'depends_on', 0]), 'tasks[3].depends_on[0]');
    assert.equal(formatPath(['session_config', 'max_sessions']), 'session_config.max_sessions');
  });
});
