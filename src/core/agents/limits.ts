// Recognising "you are out of quota / slow down / we are overloaded" in an agent's error
// messages, and when it says the limit lifts. Applied only to what a tool reports as an error
// (never to the model's own text or a tool's output), so a task about rate limiting does not
// look like a rate limit.
import type { LimitKind, UsageLimit } from './report';

// "Rate limit reached for … Please try again in 20s" (OpenAI's 429) is a rate limit, not a quota.
const USAGE =
  /usage limit|hit your (?:usage )?limit|(?<!rate[ _-]?)limit reached|limit will reset|quota (?:exceeded|exhausted)|exceeded your (?:current )?quota|exhausted your (?:daily )?(?:quota|capacity)|RESOURCE_EXHAUSTED|insufficient_quota|session limit|additional usage limit|out of credits/i;
const RATE = /rate[ _-]?limit|\b429\b|too many requests/i;
const OVERLOADED = /overloaded|\b529\b|high demand|servers are down|service unavailable|\b503\b/i;

/**
 * The limit an error message speaks of, if any. `status` is the HTTP status when the tool
 * reports one; `now` anchors "try again in 2 hours".
 */
export function detectLimit(text: string, now: Date, status?: number): UsageLimit | undefined {
  const kind = classify(text, status);
  if (!kind) return undefined;
  const message = text.replace(/\s+/g, ' ').trim().slice(0, 300) || `HTTP ${status}`;
  return { kind, message, ...resetOf(text, now) };
}

function classify(text: string, status?: number): LimitKind | undefined {
  if (USAGE.test(text)) return 'usage-limit';
  if (status === 429 || RATE.test(text)) return 'rate-limit';
  if (status === 529 || status === 503 || OVERLOADED.test(text)) return 'overloaded';
  return undefined;
}

const UNIT_MS: Array<[RegExp, number]> = [
  [/^(?:ms|milliseconds?)$/i, 1],
  [/^(?:s|secs?|seconds?)$/i, 1000],
  [/^(?:m|mins?|minutes?)$/i, 60_000],
  [/^(?:h|hrs?|hours?)$/i, 3_600_000],
  [/^(?:d|days?)$/i, 86_400_000],
];
const DURATION_PART = /(\d+(?:\.\d+)?)\s*(milliseconds?|ms|minutes?|mins?|m|seconds?|secs?|s|hours?|hrs?|h|days?|d)(?![a-z])/gi;
const RELATIVE =
  /\b(?:try again|retry|resets?|reset)\s+(?:in|after)\s+((?:\d+(?:\.\d+)?\s*(?:milliseconds?|ms|minutes?|mins?|m|seconds?|secs?|s|hours?|hrs?|h|days?|d)(?![a-z])[\s,]*(?:and\s+)?)+)/i;
const ABSOLUTE = /\b(?:try again at|retry at|resets? at|will reset at|resets)\s+([^.|·\n]+?)\s*(?:\.(?:\s|$)|·|\||\n|$)/i;
/** Claude Code's older message: "Claude AI usage limit reached|1762952400". */
const EPOCH = /limit reached\|(\d{9,11})\b/i;

/** "2h7m31s", "3 days 6 hours 57 minutes", "3.2s" → milliseconds; undefined when none. */
export function parseDuration(text: string): number | undefined {
  let ms = 0;
  let found = false;
  for (const m of text.matchAll(DURATION_PART)) {
    const unit = UNIT_MS.find(([re]) => re.test(m[2]!));
    if (!unit) continue;
    ms += Number(m[1]) * unit[1];
    found = true;
  }
  return found ? Math.round(ms) : undefined;
}

function resetOf(text: string, now: Date): Pick<UsageLimit, 'resetsAt' | 'resetText'> {
  const epoch = EPOCH.exec(text);
  if (epoch) return { resetsAt: new Date(Number(epoch[1]) * 1000).toISOString() };
  const relative = RELATIVE.exec(text);
  if (relative) {
    const ms = parseDuration(relative[1]!);
    const resetText = `in ${relative[1]!.replace(/[\s,]+$/, '').replace(/\s+/g, ' ')}`;
    return ms === undefined ? { resetText } : { resetsAt: new Date(now.getTime() + ms).toISOString(), resetText };
  }
  const absolute = ABSOLUTE.exec(text);
  if (absolute && !/^later\b/i.test(absolute[1]!)) return { resetText: absolute[1]!.trim() };
  return {};
}

/** Epoch seconds (as Claude Code's rate_limit_event gives them) → ISO 8601. */
export function isoFromEpochSeconds(seconds: unknown): string | undefined {
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000).toISOString() : undefined;
}
