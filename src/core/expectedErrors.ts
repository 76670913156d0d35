// Errors that carry a message meant for a person: bad input, a missing or invalid task file, a
// lock held by another session. The CLI exits with the message alone (2, or 3 for the lock), the
// extension shows it without logging a stack; anything else is a bug and keeps its stack.
// This module imports nothing: the extension checks errors on its activation path, before the
// rest of the core (the error classes' own modules) is loaded.

/**
 * The brand every expected error carries, on the prototype. Checked instead of instanceof so that
 * an error made by another copy of the core (another bundle, the tests' transpiled tree) counts.
 */
const EXPECTED = Symbol.for('launchpad.expectedError');

/** The base of every expected error: extend it, and both front ends treat the error as one. */
export class ExpectedError extends Error {}
Object.defineProperty(ExpectedError.prototype, EXPECTED, { value: true });

export function isExpectedError(err: unknown): err is Error {
  return err instanceof Error && (err as unknown as Record<symbol, unknown>)[EXPECTED] === true;
}
