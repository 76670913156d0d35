// Where task ids are in a log line: any id-shaped word (the `[task-id]` after the type, the
// ids of a BATCH list, an id named in a message) that the task file knows. No vscode here.

/** An id-shaped word; a trailing "." (the end of a sentence) is not part of it, nor of an id. */
export const TASK_TOKEN = /[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9_-]|[A-Za-z0-9]/g;

export interface TokenAt {
  id: string;
  start: number;
  end: number;
}

/** The id-shaped words of `text` for which `known(word)` holds, with their offsets. */
export function knownTaskTokens(text: string, known: (id: string) => boolean): TokenAt[] {
  const found: TokenAt[] = [];
  const re = new RegExp(TASK_TOKEN.source, 'g');
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (known(m[0])) found.push({ id: m[0], start: m.index, end: m.index + m[0].length });
  }
  return found;
}
