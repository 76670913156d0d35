// The reason line of a failing command: on the real output of the tools (test/fixtures/
// failure-output, captured or as the tools print), and live on npm and python where they run.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { reasonLine } from '../../../src/core/controller/reasonLine';
import { tempDir } from '../helpers/tmp';

const OUTPUT = resolve(__dirname, '../../../../test/fixtures/failure-output');
const fixture = (name: string) => readFileSync(join(OUTPUT, name), 'utf8');

const EXPECTED: Array<[string, string]> = [
  ['npx-no-bin.txt', 'npm error could not determine executable to run'],
  ['npm-missing-script.txt', 'npm error Missing script: "lint"'],
  ['npm-test-assert.txt', 'AssertionError [ERR_ASSERTION]: add(2, 2) should be 4'],
  ['npm-test-command-not-found.txt', 'sh: 1: jest: not found'],
  ['pytest-assert.txt', 'FAILED test_calc.py::test_add - assert 0 == 4'],
  ['pytest-assert-verbose.txt', 'FAILED test_calc.py::test_add - assert 0 == 4'],
  ['pytest-import-error.txt', "ModuleNotFoundError: No module named 'requestz'"],
  ['unittest-assert.txt', 'AssertionError: 0 != 4'],
  ['cargo-test-assert.txt', "thread 'tests::it_adds' (20365) panicked at src/lib.rs:11:9: assertion `left == right` failed"],
  ['cargo-compile-error.txt', 'error[E0308]: mismatched types (src/lib.rs:2:21)'],
  ['mocha-assert.txt', 'AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:'],
  ['jest-expect.txt', '● sum › adds numbers (Expected: 3, Received: 4)'],
  ['jest-throw.txt', '● This should fail: Failure!'],
  ['vitest-expect.txt', 'AssertionError: expected 4 to be 3 // Object.is equality'],
  ['go-test-fail.txt', 'calc_test.go:9: Add(2, 2) = 0; want 4'],
  ['go-build-fail.txt', './calc.go:4:9: undefined: sub'],
];

describe('reasonLine: the line that names the error', () => {
  for (const [file, line] of EXPECTED) {
    it(`${file}: ${line}`, () => {
      assert.equal(reasonLine(fixture(file)), line);
    });
  }

  it('never a footer, a count or a timing line, even when it is all that names a failure', () => {
    assert.equal(reasonLine('npm error code 1\nnpm error A complete log of this run can be found in: /x.log\n'), undefined);
    assert.equal(reasonLine('Tests:       1 failed, 2 total\nTime: 1 s\nsomething went sideways\n'), 'something went sideways');
  });

  it('keeps what the earlier rule kept: the last line when nothing names a failure, a telling line over it', () => {
    assert.equal(reasonLine('1\n2\n20000\n'), '20000');
    assert.equal(reasonLine('checking\ndone.txt is missing\nbye\n'), 'done.txt is missing');
    assert.equal(reasonLine(''), undefined);
  });

  it('ignores colour codes and CRLF, and cuts a long line', () => {
    assert.equal(reasonLine('\x1b[31mTypeError: x is not a function\x1b[39m\r\n'), 'TypeError: x is not a function');
    assert.equal(reasonLine(`Error: ${'x'.repeat(1000)}`)!.length, 300);
  });

  describe('live, on this machine', function () {
    this.timeout(60_000);
    const run = (cmd: string, args: string[], cwd: string) => {
      const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
      assert.notEqual(r.status, 0, `${cmd} ${args.join(' ')} should fail`);
      return r.stdout + r.stderr;
    };

    it('npm run of a missing script', () => {
      const dir = tempDir();
      writeFileSync(join(dir, 'package.json'), '{ "name": "t", "version": "1.0.0", "scripts": {} }\n');
      assert.match(reasonLine(run('npm', ['run', 'lint'], dir))!, /^npm (error|ERR!) Missing script: "lint"$/);
    });

    it('python unittest with a failing assertion', function () {
      try {
        execFileSync('python3', ['--version'], { stdio: 'ignore' });
      } catch {
        this.skip();
      }
      const dir = tempDir();
      writeFileSync(
        join(dir, 'test_calc.py'),
        'import unittest\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(2 - 2, 4)\n',
      );
      assert.equal(reasonLine(run('python3', ['-m', 'unittest', 'test_calc'], dir)), 'AssertionError: 0 != 4');
    });
  });
});
