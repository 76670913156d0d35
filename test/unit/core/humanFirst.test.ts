import assert from 'node:assert/strict';

import { humanFirst } from '../../../src/core/humanFirst';
import { describeExhausted, EXHAUSTED_LINE_CHARS } from '../../../src/core/runNotices';

describe('core/humanFirst', () => {
  it('leads with the words and cuts the technical tail first', () => {
    assert.equal(humanFirst('"Parse it" failed', '(task-002): [TEST_FAIL] boom', 80), '"Parse it" failed (task-002): [TEST_FAIL] boom');
    assert.equal(
      humanFirst('"Parse it" failed', '(task-002): [TEST_FAIL] expected 4, got 5', 40),
      '"Parse it" failed (task-002): [TEST_FAI…',
    );
    // Too little room for the tail to say anything: the words alone.
    assert.equal(humanFirst('"Parse the front matter" failed', '(task-002): [TEST_FAIL] boom', 40), '"Parse the front matter" failed');
    // Words longer than the line: they are cut, never a field kept in their place.
    assert.equal(humanFirst('a very long title that goes on', '(task-9)', 12), 'a very long…');
    assert.equal(humanFirst('one\n  line', '', 20), 'one line');
  });

  it("an exhausted task's line keeps its whole title however long its error, the id and error after it", () => {
    const title = 'Render every page of the site with its front matter and the index';
    const line = describeExhausted({
      id: 'task-003',
      title,
      attempts: 3,
      maxAttempts: 3,
      lastError: `[TEST_FAIL] npm test exited with 1: ${'AssertionError: expected 4 to equal 5 '.repeat(20)}`,
    });
    assert.ok(line.length <= EXHAUSTED_LINE_CHARS, `${line.length}`);
    assert.ok(line.startsWith(`"${title}" failed all 3 attempts (task-003): [TEST_FAIL] npm test exited with 1: AssertionError`), line);
    assert.ok(line.endsWith('…'), line);
  });
});
