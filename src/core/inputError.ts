import { ExpectedError } from './expectedErrors';

/** Bad input from a person: the CLI exits 2 with this message, the extension shows it. */
export class InputError extends ExpectedError {
  /** The option or field at fault (`--priority`, `max_sessions`), when one is. */
  readonly field: string | undefined;

  constructor(message: string, opts: { field?: string | undefined } = {}) {
    super(message);
    this.name = 'InputError';
    this.field = opts.field;
  }
}
