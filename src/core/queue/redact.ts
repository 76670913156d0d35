// Credentials in a Redis URL or a git remote (user:password@, a token as the user) never reach a
// log line, a job, a terminal or an error message: every text that may hold one goes through here.

const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^/@\s:]*)(?::([^/@\s]*))?@/gi;

/** `scheme://user:password@host` → `scheme://user:***@host`; a lone token (`https://TOKEN@host`) → `***`. */
export function redact(text: string): string {
  return text.replace(USERINFO, (_m, scheme: string, user: string, password: string | undefined) =>
    password !== undefined ? `${scheme}${user}:***@` : `${scheme}***@`,
  );
}

/** An error's message with credentials removed. */
export function redactError(err: unknown): string {
  return redact(err instanceof Error ? err.message : String(err));
}

/** A remote's address as a clone may keep it: `scheme://user:password@host` → `scheme://host`. */
export function withoutCredentials(url: string): string {
  return url.replace(USERINFO, (_m, scheme: string) => scheme);
}
