// A review (docs/engineering-discipline/reviews/YYYY-MM-DD-<name>-review.md), written by the
// reviewer agent. Its verdict is binary and read from one line: the last line that is exactly
// `VERDICT: PASS` or `VERDICT: FAIL` (bold markers and surrounding spaces allowed).

export type Verdict = 'PASS' | 'FAIL';

const VERDICT_LINE = /^\s*(?:\*\*|__)?\s*VERDICT\s*:\s*(PASS|FAIL)\s*(?:\*\*|__)?\s*$/;

export function readVerdict(text: string): Verdict | undefined {
  let verdict: Verdict | undefined;
  for (const line of text.split(/\r?\n/)) {
    const m = VERDICT_LINE.exec(line);
    if (m) verdict = m[1] as Verdict;
  }
  return verdict;
}

/** How much of a review's findings goes into the next prompt. */
export const FINDINGS_CHARS = 6000;

/** The review without its verdict line, bounded: what the next attempt is told. */
export function reviewFindings(text: string): string {
  const body = text
    .split(/\r?\n/)
    .filter((l) => !VERDICT_LINE.test(l))
    .join('\n')
    .trim();
  return body.length > FINDINGS_CHARS ? `${body.slice(0, FINDINGS_CHARS)}\n… (the rest is in the review file)` : body;
}
