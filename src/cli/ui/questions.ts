// Questions on a terminal, one field at a time: the default in brackets (Enter takes it), the
// answer checked at once by the same rules as the options, and asked again with the reason
// when it does not pass. Ctrl-C or Ctrl-D cancels (io.ts QuestionCancelled).
import { isExpectedError } from '../../core/expectedErrors';
import type { Io } from '../io';

export interface Question<T> {
  label: string;
  /** What an answer looks like, shown in parentheses. */
  hint?: string;
  /** Taken for an empty answer, and shown in brackets. */
  defaultAnswer?: string;
  /** An empty answer (and no default) is asked again. */
  required?: boolean;
  /** The answer as the field's value; throws an expected error (its message is shown) to ask again. */
  parse(answer: string): T;
}

export async function ask<T>(io: Io, q: Question<T>): Promise<T> {
  const prompt = `${q.label}${q.hint ? ` (${q.hint})` : ''}${q.defaultAnswer ? ` [${q.defaultAnswer}]` : ''}: `;
  for (;;) {
    const typed = (await io.ask!(prompt)).trim();
    const answer = typed === '' ? (q.defaultAnswer ?? '') : typed;
    if (answer === '' && q.required) {
      io.err('  required: type a value\n');
      continue;
    }
    try {
      return q.parse(answer);
    } catch (err) {
      if (!isExpectedError(err)) throw err;
      io.err(`  ${err.message}\n`);
    }
  }
}
