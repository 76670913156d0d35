import assert from 'node:assert/strict';

import { escapeControlChars } from '../../../src/core/controlChars';

describe('core/controlChars', () => {
  it('ANSI escapes, C1 controls, DEL and line separators show as text; printable text is untouched', () => {
    assert.equal(escapeControlChars('\x1b[31mRED\x1b[0m'), '\\x1b[31mRED\\x1b[0m');
    assert.equal(escapeControlChars('a\u009b2Jb\x7f\x00'), 'a\\x9b2Jb\\x7f\\x00');
    assert.equal(escapeControlChars('one\ntwo\r\tthree'), 'one\\ntwo\\r\\tthree');
    assert.equal(escapeControlChars('x\u2028y\u2029z'), 'x\\u2028y\\u2029z');
    assert.equal(escapeControlChars('Ünïcödé — “quotes” 日本 ✓'), 'Ünïcödé — “quotes” 日本 ✓');
  });
});
