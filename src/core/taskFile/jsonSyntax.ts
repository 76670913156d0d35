// Positions in a JSON text, for messages a person can act on. Node's JSON.parse often reports no
// position, and "line 12, column 7: trailing comma" or "tasks[1].priority at line 7, column 19"
// is what a person fixing a task file by hand needs. Only called once a file is refused, so
// speed is not a concern; everything is iterative so deep nesting cannot overflow the stack.

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
  const at = (offset: number, message: string): JsonSyntaxError => ({ offset, ...lineColumn(text, offset), message });
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
      return at(
        i,
        stack.length ? `the file ends inside ${stack.at(-1) === '{' ? 'an object' : 'an array'}: it looks truncated` : 'no JSON value',
      );
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

/** 1-based line and column (in UTF-16 code units, as an editor counts) of a character offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

export type JsonPath = Array<string | number>;

/**
 * Calls `visit` with the path and the [start, end) span of every key and every scalar value, and
 * with the path and start of every object and array (end -1), in document order, until it
 * returns true. Keys are decoded, so "\u005f_proto__" is visited as "__proto__". Stops quietly
 * where the text stops being valid JSON.
 */
export function walkJson(text: string, visit: (path: JsonPath, start: number, end: number, isKey: boolean) => boolean | void): void {
  const path: JsonPath = [];
  const stack: string[] = [];
  let expect: 'value' | 'key' | 'after' = 'value';
  let i = 0;
  for (;;) {
    i = skipWs(text, i);
    const ch = text[i];
    if (ch === undefined) return;
    if (expect === 'key') {
      if (ch !== '"') return;
      const end = scanString(text, i);
      if (typeof end !== 'number') return;
      path.push(JSON.parse(text.slice(i, end)) as string);
      if (visit(path, i, end, true)) return;
      i = skipWs(text, end);
      if (text[i] !== ':') return;
      i++;
      expect = 'value';
      continue;
    }
    if (expect === 'after') {
      const open = stack.at(-1);
      if (open === undefined) return;
      if (ch === ',') {
        i++;
        if (open === '[') {
          path[path.length - 1] = (path.at(-1) as number) + 1;
          expect = 'value';
        } else {
          path.pop();
          expect = 'key';
        }
        continue;
      }
      if (ch !== (open === '[' ? ']' : '}')) return;
      i++;
      stack.pop();
      path.pop();
      continue;
    }
    // A value.
    if (ch === '{' || ch === '[') {
      if (visit(path, i, -1, false)) return;
      const close = ch === '{' ? '}' : ']';
      const next = skipWs(text, i + 1);
      if (text[next] === close) {
        i = next + 1;
        expect = 'after';
        continue;
      }
      stack.push(ch);
      i++;
      if (ch === '[') {
        path.push(0);
        expect = 'value';
      } else expect = 'key';
      continue;
    }
    let end: number | { offset: number; message: string };
    if (ch === '"') end = scanString(text, i);
    else if (ch === '-' || (ch >= '0' && ch <= '9')) end = scanNumber(text, i);
    else {
      const word = /^(true|false|null)/.exec(text.slice(i, i + 5));
      end = word ? i + word[0].length : { offset: i, message: '' };
    }
    if (typeof end !== 'number') return;
    if (visit(path, i, end, false)) return;
    i = end;
    expect = 'after';
  }
}

/**
 * Where the value at `path` starts, or, when there is no such value (a required field is
 * missing), where the deepest existing part of the path starts.
 */
export function locateJsonPath(text: string, target: ReadonlyArray<PropertyKey>): { line: number; column: number } | undefined {
  let best = -1;
  let bestDepth = -1;
  walkJson(text, (path, start, _end, isKey) => {
    if (isKey || path.length > target.length || path.length <= bestDepth) return false;
    for (let k = 0; k < path.length; k++) if (path[k] !== target[k]) return false;
    best = start;
    bestDepth = path.length;
    return path.length === target.length;
  });
  return best < 0 ? undefined : lineColumn(text, best);
}

/** The path of the key or scalar value whose text holds `offset`. */
export function pathAtOffset(text: string, offset: number): JsonPath | undefined {
  let found: JsonPath | undefined;
  walkJson(text, (path, start, end) => {
    if (start > offset) return true;
    if (end > offset) {
      found = [...path];
      return true;
    }
    return false;
  });
  return found;
}
