import { ExpectedError } from './expectedErrors';

/** Bad input from a person: the CLI exits 2 with this message, the extension shows it. */
export class InputError extends ExpectedError {
  constructor(message: string) {
    super(message);
    this.name = 'InputError';
  }
}
