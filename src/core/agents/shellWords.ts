// Shell words for agent command lines: a preset's extra arguments are quoted one by one, and a
// `--agent-args "…"` string is split the way /bin/sh would split it (quotes and backslashes
// only: no expansion), so what runs is exactly the words a person typed, never more.
import { InputError } from '../inputError';

/** One word for /bin/sh: unchanged when it is plain, otherwise single-quoted. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * `--model "claude sonnet" --max-turns 30` → ['--model', 'claude sonnet', '--max-turns', '30'].
 * Single quotes keep everything; double quotes keep everything but `\"` and `\\`; a backslash
 * outside quotes keeps the next character. `what` names the setting in the error.
 */
export function splitShellWords(text: string, what: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      i++;
      continue;
    }
    inWord = true;
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new InputError(`${what}: unterminated ' quote in ${JSON.stringify(text)}`);
      word += text.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new InputError(`${what}: unterminated " quote in ${JSON.stringify(text)}`);
        const d = text[i]!;
        if (d === '"') break;
        if (d === '\\' && (text[i + 1] === '"' || text[i + 1] === '\\')) {
          word += text[i + 1];
          i += 2;
        } else {
          word += d;
          i++;
        }
      }
      i++;
    } else if (c === '\\') {
      if (i + 1 >= text.length) throw new InputError(`${what}: a trailing \\ in ${JSON.stringify(text)}`);
      word += text[i + 1];
      i += 2;
    } else {
      word += c;
      i++;
    }
  }
  if (inWord) words.push(word);
  return words;
}
