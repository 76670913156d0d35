// Text from a task file or an agent's output shown on a terminal or in the progress log: a
// control character (an ANSI escape sequence in a title, a carriage return in a reason) must
// show as what it is, never act on the terminal or split a log line. The one escaper.

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

// C0 controls, DEL, C1 controls (0x9b is a one-byte CSI), and the Unicode line and paragraph
// separators (line breaks to editors).
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/** `\n`, `\r`, `\t` as those two characters; every other control character as `\xHH` / `\uHHHH`. */
export function escapeControlChars(text: string): string {
  return text.replace(CONTROL, (c) => {
    const named = NAMED[c];
    if (named) return named;
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
