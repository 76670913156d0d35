// --json for programs: an error is a JSON object on stdout too (the message stays on stderr for
// people), with the exit code, the file and the field when there is one.
import assert from 'node:assert/strict';

import { runCli } from '../helpers/cli';
import { tempDir } from '../helpers/tmp';
import { rawTask, stateRoot } from './util';

interface JsonError {
  error: { code: number; message: string; file: string | null; field: string | null };
}

function jsonError(args: string[], cwd: string, code = 2): JsonError['error'] {
  const r = runCli(args, { cwd });
  assert.equal(r.code, code, r.stderr);
  assert.match(r.stderr, /^launchpad: /, 'people still get the message on stderr');
  const parsed = JSON.parse(r.stdout) as JsonError;
  assert.equal(parsed.error.code, code);
  assert.equal(r.stderr, `launchpad: ${parsed.error.message}\n`);
  return parsed.error;
}

describe('--json errors', () => {
  it('a schema error names the file, the field (its JSON path), and the task id in the message', () => {
    const dir = stateRoot({ version: 3, tasks: [rawTask('task-001'), rawTask('task-002', { priority: 'urgent' })] });
    const e = jsonError(['status', '--json'], dir);
    assert.equal(e.file, 'harness-tasks.json');
    assert.equal(e.field, 'tasks[1].priority');
    assert.equal(e.message, 'harness-tasks.json: tasks[1].priority: expected one of "P0", "P1", "P2", got "urgent" (in task-002)');
    // Without --json: the message alone, stdout empty.
    const plain = runCli(['status'], { cwd: dir });
    assert.equal(plain.stdout, '');
    assert.match(plain.stderr, /tasks\[1\]\.priority: .* \(in task-002\)$/m);
  });

  it('a missing task file names the file', () => {
    const e = jsonError(['status', '--json'], tempDir());
    assert.match(e.file!, /harness-tasks\.json$/);
    assert.equal(e.field, null);
  });

  it('a bad option value names the option, before anything runs', () => {
    const dir = stateRoot({ version: 3, tasks: [] });
    const e = jsonError(['run', '--json', '--max-parallel', '0'], dir);
    assert.match(e.message, /--max-parallel: expected a whole number of at least 1, got "0"/);
    const usage = jsonError(['status', '--json', '--bogus'], dir);
    assert.match(usage.message, /status: Unknown option '--bogus'/);
    const config = jsonError(['config', 'max_sessions', '0', '--json'], dir);
    assert.equal(config.field, 'max_sessions');
  });

  it('a command without --json keeps plain errors', () => {
    const r = runCli(['remove', 'nope'], { cwd: stateRoot({ version: 3, tasks: [] }) });
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
  });
});
