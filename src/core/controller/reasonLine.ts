// The one line of a failing command's output that says why it failed, for an error_log entry
// and a summary: a person reads it first, so it must name the error, not the runner's footer.
// Tool by tool, as they print (the fixtures in test/fixtures/failure-output are real output):
//   pytest         FAILED test_x.py::test_add - assert 0 == 4
//   jest           ● sum › adds numbers, with its Expected:/Received: lines
//   cargo test     thread '…' panicked at src/lib.rs:11:9: + the message on the next line
//   rustc, tsc     error[E0308]: mismatched types · error TS2322: …
//   go test/build  calc_test.go:9: Add(2, 2) = 0; want 4 · ./calc.go:4:9: undefined: sub
//   node, python, vitest, mocha   the last `SomeError: message` line
//   npm, npx       the first `npm error` line that is not its footer (code, path, log file)
// Else the last line that names a failure, else the last non-empty line. Stack frames, npm's
// warnings and footers, and test runners' count and timing lines never are the reason.

/** The longest reason line kept (an error_log entry is cut at 500 anyway). */
const MAX_CHARS = 300;

/** Lines that are never the reason. */
const NOISE = [
  /^at\s/, // JavaScript stack frames
  /^Node\.js v\d/,
  /^\^+$/,
  /^[{}[\]],?$/,
  /^npm (warn|notice)\b/i,
  /^npm (error|ERR!)\s*$/,
  /^npm (error|ERR!) (code|errno|path|command|syscall|signal|A complete log|Log files were not written|To see a list of scripts|Did you mean|\s{2,})/,
  /^(Test Suites|Tests|Snapshots|Time|Test Files|Start at|Duration):?\s/,
  /^Ran all test suites/,
  /^test result: FAILED/,
  /^error: (test failed, to rerun|could not compile)/,
  /^warning: build failed/,
  /^FAIL(\s|$)/, // go's package lines; jest's FAIL <file> names no error
  /^ok\s/,
  /^exit status \d+$/,
  /^[=_\-⎯!]{3,}/, // pytest, unittest and vitest rulers
  /^FAILED \((failures|errors)=/,
  /^\d+ (failed|passed|failing|passing|errors?)\b/,
  /^For more information about this error/,
  /^note: (Some details are omitted|run with `RUST_BACKTRACE)/,
  /^stack backtrace:$/,
  /^\d+: \S/, // rust backtrace frames
  /^Traceback \(most recent call last\):$/,
];

/** A tool's own failure line, most specific first; the first such line in the output wins, with what `more` adds from the lines after it. */
const SPECIFIC: Array<{ re: RegExp; more?: (next: string[]) => string }> = [
  { re: /^FAILED \S+::\S+ - \S/ }, // pytest's short summary
  { re: /^ERROR \S+::\S+ - \S/ },
  { re: /^● \S/, more: jestDetail },
  { re: /^thread '.*' (\(\d+\) )?panicked at .*:$/, more: (next) => (next[0] ? ` ${next[0]}` : '') },
  { re: /^thread '.*' (\(\d+\) )?panicked at .*: \S/ },
  { re: /^error(\[E\d+\])?: (?!test failed|could not compile)\S/, more: rustLocation },
  { re: /\berror TS\d+: / },
  { re: /^\S+_test\.go:\d+: \S/ },
  { re: /^\S+\.go:\d+:\d+: \S/ },
];

const ERROR_LINE = /\b[A-Z]?\w*(Error|Exception)\b[^:]*:\s*\S/;
const NPM_ERROR = /^npm (error|ERR!) \S/;
const TELLING = /\b(error|errors|fail|failed|failure|failing|assert\w*|expected|exception|not found|cannot|denied|missing|panicked)\b/i;

export function reasonLine(output: string): string | undefined {
  const lines = output
    .split('\n')
    .map((l) => stripCodes(l.replace(/\r$/, '')).trim())
    .filter((l) => l && !NOISE.some((re) => re.test(l)));
  const pick = (): string | undefined => {
    for (const { re, more } of SPECIFIC) {
      const i = lines.findIndex((l) => re.test(l));
      if (i < 0) continue;
      return lines[i]! + (more?.(lines.slice(i + 1, i + 9)) ?? '');
    }
    // pytest prints the exception as `E   ModuleNotFoundError: …`.
    const error = lines.findLast((l) => ERROR_LINE.test(l));
    if (error) return error.replace(/^E\s+/, '');
    return lines.find((l) => NPM_ERROR.test(l)) ?? lines.findLast((l) => TELLING.test(l)) ?? lines.at(-1);
  };
  return pick()?.slice(0, MAX_CHARS);
}

/** jest's failure block: the Expected/Received pair, else the first line of the message. */
function jestDetail(next: string[]): string {
  // The block ends at the code frame (`> 4 | …`, `4 | …`) or the next failure.
  const end = next.findIndex((l) => /^(● \S|>?\s*\d+ \|)/.test(l));
  const block = end < 0 ? next : next.slice(0, end);
  const expected = block.find((l) => /^Expected( \w+)?:/.test(l));
  const received = block.find((l) => /^Received( \w+)?:/.test(l));
  if (expected && received) return ` (${expected}, ${received})`;
  const first = block.find((l) => !/^expect\(/.test(l));
  return first ? `: ${first}` : '';
}

/** rustc's ` --> src/lib.rs:2:21` under an error line. */
function rustLocation(next: string[]): string {
  const at = /^--> (\S+)/.exec(next[0] ?? '');
  return at ? ` (${at[1]})` : '';
}

/** Colour codes are not part of the text. */
function stripCodes(line: string): string {
  return line.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
}
