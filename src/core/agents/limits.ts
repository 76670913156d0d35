// Recognising "you are out of quota / slow down / we are overloaded" in an agent's error
// messages, and when it says the limit lifts. Applied only to what a tool reports as an error
// (never to the model's own text or a tool's output), so a task about rate limiting does not
// look like a rate limit.
import type { LimitKind, UsageLimit } from './report';

// "Rate limit reached for … Please try again in 20s" (OpenAI's 429) is a rate limit, not a quota.
const USAGE =
  /usage limit|hit your (?:usage )?limit|(?<!rate[ _-]?)limit reached|limit will reset|quota (?:exceeded|exhausted)|exceeded your (?:current )?quota|exhausted your (?:daily )?(?:quota|capacity)|RESOURCE_EXHAUSTED|insufficient_quota|session limit|additional usage limit|out of credits/i;
const RATE = /rate[ _-]?limit|\b429\b|too many requests/i;
/**
 * An overload is the provider saying so: the word (Anthropic's `overloaded_error`, aider's "servers
 * are down or overloaded") or HTTP 529/503 ("Service Unavailable"). Softer words ("high demand")
 * also come with a plain 500, a failure of the attempt like any other: an uncharged pause for
 * them would retry a broken provider forever.
 */
const OVERLOADED = /overloaded|\b529\b|\b503\b|service unavailable/i;

/**
 * The limit an error message speaks of, if any. `status` is the HTTP status when the tool
 * reports one; `now` anchors "try again in 2 hours" and "try again at 5:55 PM", a wall-clock
 * time read in `timeZone` (an IANA name; the local zone when absent) unless the message names one.
 */
export function detectLimit(text: string, now: Date, status?: number, timeZone?: string): UsageLimit | undefined {
  const kind = classify(text, status);
  if (!kind) return undefined;
  const message = text.replace(/\s+/g, ' ').trim().slice(0, 300) || `HTTP ${status}`;
  return { kind, message, ...resetOf(text, now, timeZone) };
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

function resetOf(text: string, now: Date, timeZone?: string): Pick<UsageLimit, 'resetsAt' | 'resetText'> {
  const epoch = EPOCH.exec(text);
  if (epoch) return { resetsAt: new Date(Number(epoch[1]) * 1000).toISOString() };
  const relative = RELATIVE.exec(text);
  if (relative) {
    const ms = parseDuration(relative[1]!);
    const resetText = `in ${relative[1]!.replace(/[\s,]+$/, '').replace(/\s+/g, ' ')}`;
    return ms === undefined ? { resetText } : { resetsAt: new Date(now.getTime() + ms).toISOString(), resetText };
  }
  const absolute = ABSOLUTE.exec(text);
  if (!absolute || /^later\b/i.test(absolute[1]!)) return {};
  const resetText = absolute[1]!.trim();
  const at = wallClockTime(resetText, now, timeZone);
  return at ? { resetsAt: at.toISOString(), resetText } : { resetText };
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
/**
 * "5:55 PM", "17:55", "3pm", "Nov 28th, 2026 5:55 PM", "Apr 23 at 4pm", each with an optional
 * "(Europe/Berlin)". A bare number is no time ("resets 3 days" is not 3 o'clock): a colon or
 * am/pm is needed.
 */
const WALL_CLOCK =
  /^(?:([a-z]{3})[a-z]*\.? (\d{1,2})(?:st|nd|rd|th)?,?(?: (\d{4}),?)?(?: at)? )?(\d{1,2})(?::(\d{2}))?\s*([ap]\.?m\.?)?(?: ?\(([A-Za-z_]+(?:\/[A-Za-z0-9_+-]+)*)\))?$/i;

/**
 * A wall-clock reset time as an instant: that time on the date given, else the next one after
 * `now`, in the zone the text names, else `timeZone`, else the local zone. Undefined when the
 * text is not such a time or names a zone Intl does not know.
 */
export function wallClockTime(text: string, now: Date, timeZone?: string): Date | undefined {
  const m = WALL_CLOCK.exec(text.trim());
  if (!m) return undefined;
  const [, monthName, dayText, yearText, hourText, minuteText, ampm, named] = m;
  if (minuteText === undefined && ampm === undefined) return undefined;
  let hour = Number(hourText);
  const minute = Number(minuteText ?? 0);
  if (ampm) {
    if (hour < 1 || hour > 12) return undefined;
    hour = (hour % 12) + (/^p/i.test(ampm) ? 12 : 0);
  }
  if (hour > 23 || minute > 59) return undefined;
  const zone = named ?? timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  let today: { year: number; month: number; day: number };
  try {
    today = zonedDate(now, zone);
  } catch {
    return undefined; // a zone Intl does not know
  }
  if (monthName) {
    const month = MONTHS.indexOf(monthName.toLowerCase());
    if (month < 0) return undefined;
    const at = (year: number) => zonedInstant(zone, year, month, Number(dayText), hour, minute);
    if (yearText) return at(Number(yearText));
    // "Apr 23" without a year: the next Apr 23 from today.
    const thisYear = at(today.year);
    return thisYear.getTime() > now.getTime() ? thisYear : at(today.year + 1);
  }
  const sameDay = zonedInstant(zone, today.year, today.month, today.day, hour, minute);
  if (sameDay.getTime() > now.getTime()) return sameDay;
  // Tools print the reset cut to the minute (23:45:55 as "11:45 PM"): within that minute it is
  // still to come, at the latest at the minute's end, not tomorrow.
  if (now.getTime() < sameDay.getTime() + 60_000) return new Date(sameDay.getTime() + 60_000);
  return zonedInstant(zone, today.year, today.month, today.day + 1, hour, minute);
}

/** The calendar date of `at` in `zone` (month from 0). */
function zonedDate(at: Date, zone: string): { year: number; month: number; day: number } {
  const parts = zoneParts(at, zone);
  return { year: parts.year, month: parts.month - 1, day: parts.day };
}

/** The instant whose wall clock in `zone` reads this date and time (day may overflow into the next month). */
function zonedInstant(zone: string, year: number, month: number, day: number, hour: number, minute: number): Date {
  const wall = Date.UTC(year, month, day, hour, minute);
  // The zone's offset at the guess, then again at the result, which differs across a DST change.
  let at = wall - offsetMs(new Date(wall), zone);
  at = wall - offsetMs(new Date(at), zone);
  return new Date(at);
}

/** How far `zone`'s wall clock is ahead of UTC at `at`. */
function offsetMs(at: Date, zone: string): number {
  const p = zoneParts(at, zone);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(at.getTime() / 1000) * 1000;
}

function zoneParts(at: Date, zone: string): Record<'year' | 'month' | 'day' | 'hour' | 'minute' | 'second', number> {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(at);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return { year: get('year'), month: get('month'), day: get('day'), hour: get('hour'), minute: get('minute'), second: get('second') };
}

/** Epoch seconds (as Claude Code's rate_limit_event gives them) → ISO 8601. */
export function isoFromEpochSeconds(seconds: unknown): string | undefined {
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000).toISOString() : undefined;
}
