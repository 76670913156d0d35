// Finds where a JSON text first goes wrong. Node's JSON.parse often reports no position, and
// "line 12, column 7: trailing comma" is what a person fixing a task file by hand needs.
// Only called after JSON.parse has failed, so speed is not a concern; it is iterative so deep
// nesting cannot overflow the stack.

export interface JsonSyntaxError {
  offset: number;
  line: number;
  column: number;
  message: string;
}

type Expect = 'value' | 'value-or-close' | 'key' | 'key-or-close' | 'colon' | 'comma-or-close' | 'end';

export function locateJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  const stack: string[] = [];
  let expect: Expect = 'value';
  let i = 0;
  const at = (offset: number, message: string): JsonSyntaxError => {
    const before = text.slice(0, offset);
    const line = before.split('\n').length;
    return { offset, line, column: offset - before.lastIndexOf('\n'), message };
  };
  const describe = (ch: string | undefined) => (ch === undefined ? 'end of file' : ch === "'" ? 'a single quote' : `'${ch}'`);
  // What people write in hand-edited JSON that JSON does not allow, said plainly.
  const notJson = (offset: number): JsonSyntaxError | undefined => {
    const rest = text.slice(offset, offset + 9);
    if (rest.startsWith('//') || rest.startsWith('/*')) return at(offset, 'comments are not allowed in JSON');
    if (rest[0] === "'") return at(offset, 'single quotes are not allowed in JSON: put keys and strings in "double quotes"');
    const word = /^(NaN|Infinity|undefined)\b/.exec(rest);
    if (word) return at(offset, `${word[1]} is not a JSON value (use a number or null)`);
    return undefined;
  };

  for (;;) {
    while (i < text.length && ' \t\r\n'.includes(text[i]!)) i++;
    const ch = text[i];

    if (expect === 'end') {
      return ch === undefined ? undefined : (notJson(i) ?? at(i, `unexpected ${describe(ch)} after the end of the JSON value`));
    }
    if (ch === undefined) {
      return at(i, stack.length ? `the file ends inside ${stack.at(-1) === '{' ? 'an object' : 'an array'}: it looks truncated` : 'no JSON value');
    }

    if (expect === 'colon') {
      if (ch !== ':') return at(i, `expected ':' after the key, got ${describe(ch)}`);
      i++;
      expect = 'value';
      continue;
    }
    if (expect === 'comma-or-close') {
      const close = stack.at(-1) === '{' ? '}' : ']';
      if (ch === ',') {
        i++;
        expect = close === '}' ? 'key' : 'value';
        const j = skipWs(text, i + 0);
        if (text[j] === '}' || text[j] === ']') return at(j, `trailing comma before '${text[j]}'`);
        continue;
      }
      if (ch === close) {
        i++;
        stack.pop();
        expect = stack.length ? 'comma-or-close' : 'end';
        continue;
      }
      const missingComma = ch === '"' || ch === '{' || ch === '[' ? ' (a missing comma?)' : '';
      return notJson(i) ?? at(i, `expected ',' or '${close}', got ${describe(ch)}${missingComma}`);
    }
    if (expect === 'key' || expect === 'key-or-close') {
      if (expect === 'key-or-close' && ch === '}') {
        i++;
        stack.pop();
        expect = stack.length ? 'comma-or-close' : 'end';
        continue;
      }
      if (ch !== '"') return notJson(i) ?? at(i, `expected a "quoted" key, got ${describe(ch)}`);
      const end = scanString(text, i);
      if (typeof end !== 'number') return at(end.offset, end.message);
      i = end;
      expect = 'colon';
      continue;
    }

    // expect is 'value' or 'value-or-close'
    if (expect === 'value-or-close' && ch === ']') {
      i++;
      stack.pop();
      expect = stack.length ? 'comma-or-close' : 'end';
      continue;
    }
    if (ch === '{' || ch === '[') {
      stack.push(ch);
      i++;
      expect = ch === '{' ? 'key-or-close' : 'value-or-close';
      continue;
    }
    let end: number | { offset: number; message: string };
    if (ch === '"') end = scanString(text, i);
    else if (ch === '-' || (ch >= '0' && ch <= '9')) end = scanNumber(text, i);
    else {
      const word = /^(true|false|null)/.exec(text.slice(i, i + 5));
      if (!word) return notJson(i) ?? at(i, `unexpected ${describe(ch)} where a value was expected`);
      end = i + word[0].length;
    }
    if (typeof end !== 'number') return at(end.offset, end.message);
    i = end;
    expect = stack.length ? 'comma-or-close' : 'end';
  }
}

function skipWs(text: string, i: number): number {
  while (i < text.length && ' \t\r\n'.includes(text[i]!)) i++;
  return i;
}

function scanString(text: string, start: number): number | { offset: number; message: string } {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20) return { offset: i, message: 'unescaped control character (a raw newline?) inside a string' };
    if (c === 0x5c) {
      const e = text[i + 1];
      if (e === 'u') {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return { offset: i, message: 'bad \\u escape in a string' };
        i += 5;
      } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++;
      else return { offset: i, message: `bad escape '\\${e ?? ''}' in a string` };
    }
  }
  return { offset: start, message: 'a string is never closed: the file looks truncated' };
}

function scanNumber(text: string, start: number): number | { offset: number; message: string } {
  const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(start, start + 400));
  if (!m || m[0] === '-') return { offset: start, message: 'malformed number' };
  return start + m[0].length;
}
